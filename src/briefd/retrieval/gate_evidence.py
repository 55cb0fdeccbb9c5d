"""Lexical evidence for the relevance gate (R4): how many sections hold each query word, and
whether one section holds them all (see :class:`briefd.retrieval.gate.LexicalEvidence`).

Section counts come from the stored postings when they cover the index (one blob per query
token, already in SQLite's page cache from ranking), else from FTS5.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

import numpy as np

from briefd.retrieval import bm25
from briefd.retrieval.bm25 import Lexicon, PostingsIndex, Word
from briefd.retrieval.gate import LexicalEvidence, guessed
from briefd.retrieval.lexical import FieldWeights, MatchPlan, build_match, is_prefix
from briefd.retrieval.spelling import Speller
from briefd.store import postings
from briefd.store.postings import Freqs, Rows
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
    words = query_words(conn, plan, lexicon)
    return words.evidence(conn, all_words, best) if words is not None else None


def query_words(
    conn: sqlite3.Connection,
    plan: MatchPlan | None,
    lexicon: Lexicon | None,
    reads: bm25.Reads | None = None,
) -> QueryWords | None:
    """What :func:`for_query` reads before it knows the best sections: a hybrid search reads
    it while the query is being embedded (None: a query without words). ``reads``: what the
    query's lexical lists read already (the same tokens' postings)."""
    if plan is None or not plan.groups:
        return None
    return _words(conn, _as_typed(plan.groups), lexicon, reads)


@dataclass(frozen=True, slots=True)
class QueryWords:
    """Per query word (a group): the sections holding it (None: FTS5 answers, no postings),
    how many they are, and the index size."""

    groups: tuple[tuple[str, ...], ...]
    rows: tuple[Rows | None, ...]
    counts: tuple[int, ...]
    sections: int

    def evidence(
        self, conn: sqlite3.Connection, all_words: bool, best: tuple[int, ...] = ()
    ) -> LexicalEvidence:
        """With which words each of the ``best`` sections holds."""
        held = tuple(
            tuple(
                _fts_holds(conn, group, rowid) if rows is None else _holds(rows, rowid)
                for group, rows in zip(self.groups, self.rows, strict=True)
            )
            for rowid in dict.fromkeys(best)
        )
        words = tuple(group[0] for group in self.groups)
        guesses = tuple(guessed(group[0], group[1:]) for group in self.groups)
        return LexicalEvidence(words, self.counts, self.sections, all_words, held, guesses)


def _as_typed(groups: tuple[tuple[str, ...], ...]) -> tuple[tuple[str, ...], ...]:
    """The groups without their prefix forms: the gate weighs the words as typed (and their
    spelling corrections); a prefix ("kitap*" for "kitaplarda") holds in many sections of a
    large index in that language, on- or off-topic alike."""
    return tuple(tuple(w for w in group if not is_prefix(w)) for group in groups)


def for_text(
    conn: sqlite3.Connection,
    text: str,
    lexicon: Lexicon | None,
    best: tuple[int, ...] = (),
    speller: Speller | None = None,
) -> LexicalEvidence:
    """The evidence of a text as a query (the calibration probes): with the spelling
    corrections ``speller`` finds, its words looked up in ``best`` (its best semantic sections)
    and in its best BM25 section, as a searched query's are."""
    terms = tuple(query_terms(text))
    if not terms:
        return LexicalEvidence((), (), _sections(conn, None), False)
    plan = build_match(text, "text", speller.corrections(conn, terms) if speller else {})
    match = plan.all_terms or plan.any_term
    row = conn.execute("SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT 1", (match,))
    reads = bm25.Reads()  # its lists and its word counts read the same tokens
    sections = best + _best_lexical(conn, plan, lexicon, reads)
    words = _words(conn, _as_typed(plan.groups), lexicon, reads)
    return words.evidence(conn, row.fetchone() is not None, sections)


def _best_lexical(
    conn: sqlite3.Connection, plan: MatchPlan, lexicon: Lexicon | None, reads: bm25.Reads
) -> tuple[int, ...]:
    """The best BM25 section of a text as a query: of those holding every word, else of those
    holding any (as :meth:`Candidates.best_lexical` picks); () if none."""
    index = lexicon.index(conn) if lexicon is not None else None
    if index is not None and lexicon is not None and plan.groups:
        typed = lexicon.tokenizer.groups(plan.groups)
        widened = lexicon.tokenizer.groups(plan.groups, index.conflate)
        try:
            for every, groups in ((True, typed), (False, widened)):
                top = bm25.with_coverage(
                    conn, index, groups, FieldWeights(), 1, None, every, reads
                )[0]
                if top:
                    return (top[0][0],)
            return ()
        except bm25.StalePostings:
            lexicon.invalidate()
    for match in (plan.all_terms, plan.any_term):
        if match:
            sql = "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank LIMIT 1"
            found = conn.execute(sql, (match,)).fetchone()
            if found is not None:
                return (int(found[0]),)
    return ()


def _words(
    conn: sqlite3.Connection,
    groups: tuple[tuple[str, ...], ...],
    lexicon: Lexicon | None,
    reads: bm25.Reads | None = None,
) -> QueryWords:
    index = lexicon.index(conn) if lexicon is not None else None
    found: list[Rows | None] = [None] * len(groups)  # None: FTS5 answers (no postings)
    if index is not None and lexicon is not None:
        words = lexicon.tokenizer.groups(groups)
        exact = {t for g in words for w in g if not w.prefix for t in w.tokens}
        stored = (reads or bm25.Reads()).stored(conn, sorted(exact))
        found = [_postings_rows(conn, stored, g) for g in words]
    counts = tuple(
        _fts_count(conn, group) if rows is None else len(rows)
        for group, rows in zip(groups, found, strict=True)
    )
    return QueryWords(groups, tuple(found), counts, _sections(conn, index))


def _sections(conn: sqlite3.Connection, index: PostingsIndex | None) -> int:
    if index is not None:
        return len(index.rows)
    return int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])


def _postings_rows(
    conn: sqlite3.Connection, stored: dict[str, tuple[Rows, Freqs]], group: tuple[Word, ...]
) -> Rows:
    """Chunk rowids holding any word of the group (a prefix form: any word it begins, as
    ranking matched it). A phrase word ("snake_case", "1/2000") counts the sections holding all
    of its tokens: a superset of the phrase's, from the postings alone (an FTS5 phrase count
    reads position lists: milliseconds on a common token)."""
    found = []
    for word in group:
        if word.prefix:
            merged = postings.read_prefix(conn, word.tokens[0]) if len(word.tokens) == 1 else None
            found.append(_NONE if merged is None else merged[0])
            continue
        rows = [stored[t][0] if t in stored else _NONE for t in word.tokens]
        if rows:
            found.append(rows[0] if len(rows) == 1 else _intersect(rows))
    if not found:
        return _NONE
    return found[0] if len(found) == 1 else np.unique(np.concatenate(found))


_NONE: Rows = np.empty(0, dtype=np.int64)


def _holds(rows: Rows, rowid: int) -> bool:
    """``rowid`` is in the ascending ``rows`` (a binary search)."""
    at = int(np.searchsorted(rows, rowid))
    return at < len(rows) and int(rows[at]) == rowid


def _intersect(rows: list[Rows]) -> Rows:
    common = rows[0]
    for other in rows[1:]:
        common = np.intersect1d(common, other, assume_unique=True)
    return common


def _match(words: tuple[str, ...]) -> str:
    """FTS5 (no postings) matches the words as typed, as the lexical lists then do."""
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words if not is_prefix(w))


def _fts_count(conn: sqlite3.Connection, words: tuple[str, ...]) -> int:
    row = conn.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (_match(words),))
    return int(row.fetchone()[0])


def _fts_holds(conn: sqlite3.Connection, words: tuple[str, ...], rowid: int) -> bool:
    sql = "SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid = ?"
    return conn.execute(sql, (_match(words), rowid)).fetchone() is not None
