"""Lexical evidence for the relevance gate (R4): how many sections hold each query word, and
whether one section holds them all (see :class:`briefd.retrieval.gate.LexicalEvidence`).

Section counts come from the stored postings when they cover the index (one blob per query
token, already in SQLite's page cache from ranking), else from FTS5.
"""

from __future__ import annotations

import sqlite3

import numpy as np

from briefd.retrieval.bm25 import Lexicon, PostingsIndex, Word
from briefd.retrieval.gate import LexicalEvidence
from briefd.retrieval.lexical import MatchPlan, build_match
from briefd.store import postings
from briefd.store.postings import Rows
from briefd.text import query_terms


def for_query(
    conn: sqlite3.Connection,
    plan: MatchPlan | None,
    all_words: bool,
    lexicon: Lexicon | None,
    best: tuple[int, ...] = (),
) -> LexicalEvidence | None:
    """The evidence of a searched query (``all_words``: a section in scope held every word;
    ``best``: the best semantic and lexical sections, whose words are looked up too)."""
    if plan is None or not plan.groups:
        return None
    return _evidence(conn, plan.groups, all_words, lexicon, best)


def for_text(conn: sqlite3.Connection, text: str, lexicon: Lexicon | None) -> LexicalEvidence:
    """The evidence of a text as a query with no spelling corrections (the calibration probes)."""
    if not query_terms(text):
        return LexicalEvidence((), (), _sections(conn, None), False)
    plan = build_match(text)
    match = plan.all_terms or plan.any_term
    row = conn.execute("SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT 1", (match,))
    return _evidence(conn, plan.groups, row.fetchone() is not None, lexicon)


def _evidence(
    conn: sqlite3.Connection,
    groups: tuple[tuple[str, ...], ...],
    all_words: bool,
    lexicon: Lexicon | None,
    best: tuple[int, ...] = (),
) -> LexicalEvidence:
    index = lexicon.index(conn) if lexicon is not None else None
    if index is not None and lexicon is not None:
        found = [_postings_rows(conn, g) for g in lexicon.tokenizer.groups(groups)]
    else:
        found = [None] * len(groups)
    counts = tuple(
        _fts_count(conn, group) if rows is None else len(rows)
        for group, rows in zip(groups, found, strict=True)
    )
    held = tuple(
        tuple(
            _fts_holds(conn, group, rowid) if rows is None else bool(np.isin(rowid, rows))
            for group, rows in zip(groups, found, strict=True)
        )
        for rowid in dict.fromkeys(best)
    )
    return LexicalEvidence(
        tuple(group[0] for group in groups), counts, _sections(conn, index), all_words, held
    )


def _sections(conn: sqlite3.Connection, index: PostingsIndex | None) -> int:
    if index is not None:
        return len(index.rows)
    return int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])


def _postings_rows(conn: sqlite3.Connection, group: tuple[Word, ...]) -> Rows | None:
    """Chunk rowids holding any word of the group; None for a phrase word ("snake_case"),
    which FTS5 answers."""
    single = [w.tokens[0] for w in group if len(w.tokens) == 1]
    if len(single) < len(group):
        return None
    rows = [docs for docs, _ in postings.read(conn, single).values()]
    if not rows:
        return np.empty(0, dtype=np.int64)
    return rows[0] if len(rows) == 1 else np.unique(np.concatenate(rows))


def _match(words: tuple[str, ...]) -> str:
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


def _fts_count(conn: sqlite3.Connection, words: tuple[str, ...]) -> int:
    row = conn.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (_match(words),))
    return int(row.fetchone()[0])


def _fts_holds(conn: sqlite3.Connection, words: tuple[str, ...], rowid: int) -> bool:
    sql = "SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid = ?"
    return conn.execute(sql, (_match(words), rowid)).fetchone() is not None
