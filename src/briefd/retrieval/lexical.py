"""Lexical retrieval (R1): FTS5 BM25, AND-first then any-term, free text always escaped.

``build_match`` and ``search_sql`` are pure (build the query); ``lexical_lists`` runs it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from briefd.errors import QueryError
from briefd.store.db import content_version
from briefd.store.vocabulary import normal_word
from briefd.text import compound_words, fold, joined_words, query_terms, typed_words

QueryMode = Literal["text", "advanced"]


@dataclass(frozen=True, slots=True)
class MatchPlan:
    """FTS5 MATCH expressions for one query: every term (AND), then any term (OR)."""

    terms: tuple[str, ...]
    all_terms: str | None  # None when it would equal any_term (one term, or advanced mode)
    any_term: str
    corrections: tuple[tuple[str, str], ...] = ()  # (typed word, indexed word it also matches)
    # free text only: the words of each query term (the term, then its correction, then their
    # prefix forms "abcde*"), for the all-terms query and for the any-term query
    groups: tuple[tuple[str, ...], ...] = ()
    any_groups: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class FieldWeights:
    title: float = 3.0
    heading: float = 2.0
    body: float = 1.0


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


PREFIX_LENGTH = 5  # letters a longer query word is also matched by (see word_forms)
PREFIX = "*"  # marks a prefix form in MatchPlan.groups ("baglantisi" → "bagla*")


def is_prefix(word: str) -> bool:
    return word.endswith(PREFIX)


def prefix_form(word: str, prefix: int) -> str | None:
    """The prefix form of a query word longer than ``prefix`` letters ("bağlantısının" →
    "bağla*"), None for a shorter one or one with digits or underscores (versions,
    identifiers: no inflection to conflate)."""
    if 0 < prefix < len(word) and word.isalpha():
        return word[:prefix] + PREFIX
    return None


def word_forms(term: str, correction: str | None, prefix: int) -> tuple[str, ...]:
    """A query word, its spelling correction, then their prefix forms (see
    :mod:`briefd.retrieval.bm25` for how a prefix form scores)."""
    forms = (term,) if correction is None else (term, correction)
    stems = tuple(p for p in (prefix_form(f, prefix) for f in forms) if p is not None)
    return tuple(dict.fromkeys(forms + stems))


def joined_terms(conn: sqlite3.Connection, query: str) -> tuple[str, ...]:
    """The query's terms (:func:`query_terms`), a joined name the index holds as written
    ("payments.events.v1", "2025-03-14": :func:`joined_words`) one term in place of its parts:
    FTS5 matches it as a phrase, one IDF for the one name. Its parts as words of their own
    counted a name two or three times and matched sections holding them anywhere
    ("payments.state.v1" and "events" for "payments.events.v1"). A name the index does not hold
    keeps its parts (each is corrected and matched as before).

    So does a compound (words joined by hyphens, :func:`compound_words`: "cert-manager",
    "e-mail") whose rarer word the index never writes outside it (:func:`_written_joined`);
    one whose words it also writes apart ("non-teaching" hospitals, where sections say
    "teaching" alone) keeps its parts. A compound's stop word ("in") is part of its phrase."""
    terms = query_terms(query)
    names = [
        (name, set(parts) & set(terms))
        for name, parts in joined_words(query)
        if len(set(parts) & set(terms)) >= 2 and _holds_phrase(conn, name)
    ]
    names += [
        (name, set(parts) & set(terms))
        for name, parts in compound_words(query)
        if set(parts) & set(terms) and _written_joined(conn, name, set(parts) & set(terms))
    ]
    joined: list[str] = []
    for term in terms:
        named = [name for name, parts in names if term in parts]
        joined += [name for name in named if name not in joined] if named else [term]
    return tuple(joined)


def _holds_phrase(conn: sqlite3.Connection, name: str) -> bool:
    row = conn.execute("SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT 1", (_quote(name),))
    return row.fetchone() is not None


def _written_joined(conn: sqlite3.Connection, name: str, words: set[str]) -> bool:
    """Whether every section holding the rarest of the compound's ``words`` (the query terms
    among its parts) holds the compound ``name`` as written: the index never writes that word
    on its own, so the phrase finds every section the words together would, and keeps out
    those holding a part alone ("manager" for "cert-manager"). Where the index also writes
    it apart, the parts stay: matched on their own, in other forms too, they found answers the
    phrase misses (scifact: "AMP-activated" for a section on "AMPK activation")."""
    count = "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?"
    phrase = int(conn.execute(count, (_quote(name),)).fetchone()[0])
    if phrase == 0:
        return False
    rarest = min(int(conn.execute(count, (_quote(w),)).fetchone()[0]) for w in sorted(words))
    return phrase >= rarest


def build_match(
    query: str,
    mode: QueryMode = "text",
    corrections: dict[str, str] | None = None,
    common: dict[str, int] | None = None,
    prefix: int = PREFIX_LENGTH,
    terms: Sequence[str] | None = None,
) -> MatchPlan:
    """Free text becomes quoted terms, so no punctuation can be FTS5 syntax; ``advanced``
    passes the query through (phrases, prefixes, NEAR, AND/OR/NOT). ``terms``: the free text's
    terms when they are not :func:`query_terms` (:func:`joined_terms`).

    ``common`` (term → chunk count) names terms found in a large share of the chunks: they
    stay in the all-terms query but are left out of the any-term query, where matching them
    means scoring a third of the index for almost no BM25 weight. The rarest of them is kept
    when nothing else would remain.

    ``groups`` also hold the prefix form of each word longer than ``prefix`` letters
    (:func:`word_forms`; 0: none), which the postings score; the FTS5 queries match the
    words as typed."""
    if mode == "advanced":
        if not query.strip():
            raise QueryError("the query is empty; type some words to search for")
        return MatchPlan((), None, fold(query))
    terms = tuple(query_terms(query) if terms is None else terms)
    if not terms:
        raise QueryError(no_terms_message(query))
    fixes = corrections or {}
    groups = tuple(word_forms(t, fixes.get(t), prefix) for t in terms)
    quoted = [f"({_quote(t)} OR {_quote(fixes[t])})" if t in fixes else _quote(t) for t in terms]
    all_terms = " AND ".join(quoted) if len(quoted) > 1 else None
    frequent = common or {}
    kept = [t for t in terms if t not in frequent]
    if not kept:
        kept = [min(terms, key=lambda t: (frequent[t], t))]
    return MatchPlan(
        terms,
        all_terms,
        " OR ".join(quoted[terms.index(t)] for t in kept),
        tuple((t, fixes[t]) for t in terms if t in fixes),
        groups,
        tuple(groups[terms.index(t)] for t in kept),
    )


def no_terms_message(query: str) -> str:
    """Why a free-text query has nothing to search for, and what to type instead."""
    words = typed_words(query)
    if not words:
        return "the query has no words to search for; type some words"
    return (
        f"the query has only common words ({', '.join(words[:8])}), which every section "
        "contains; add the words that name what you are looking for"
    )


def common_terms(
    conn: sqlite3.Connection, terms: Sequence[str], share: float, floor: int = 0
) -> dict[str, int]:
    """Terms that occur (as typed) in more than ``share`` of the chunks, and in more than
    ``floor`` chunks, with their counts."""
    if share <= 0 or len(terms) < 2:
        return {}
    total = chunk_count(conn)
    limit = max(share * total, floor)
    if total <= limit:
        return {}
    words = {normal_word(t): t for t in terms}
    marks = ", ".join("?" * len(words))
    rows = conn.execute(
        f"SELECT term, chunks FROM vocabulary WHERE term IN ({marks})", list(words)
    ).fetchall()
    return {words[term]: n for term, n in rows if n > limit}


_COUNTS: dict[tuple[int, int], int] = {}  # content_version → chunks
_COUNTS_KEPT = 16


def chunk_count(conn: sqlite3.Connection) -> int:
    """How many chunks the index holds, counted once per index state (:func:`content_version`):
    ``count(*)`` walks a whole index of the chunks table, 3.6 CPU-ms at a million chunks, and
    every search with two or more words asks (:func:`common_terms`). A connection the store
    did not open (no number to tell its file apart) counts every time."""
    version = content_version(conn)
    found = _COUNTS.get(version) if version[0] else None
    if found is None:
        found = int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
        if not version[0]:
            return found
        if len(_COUNTS) >= _COUNTS_KEPT:
            _COUNTS.clear()
        _COUNTS[version] = found
    return found


OVERFETCH = 4  # ranked rows read per wanted row when a scope filter applies afterwards
TIE_SLACK = 8  # extra rows read so equal scores at the cut can be ordered by chunk id


def search_sql(weights: FieldWeights) -> str:
    """The one lexical query: BM25 with per-column weights, ranked inside FTS5.

    It reads no other table: joining ``chunks`` for the scope filter inside the ranking query
    made a 50K-chunk index 4x slower, so scopes are checked on the ranked rows afterwards.
    """
    return (
        "SELECT rowid, "
        f"bm25(chunks_fts, {weights.title!r}, {weights.heading!r}, {weights.body!r}) AS bm25\n"
        "FROM chunks_fts\n"
        "WHERE chunks_fts MATCH ?\n"
        "ORDER BY bm25\n"
        "LIMIT ?"
    )


def run_match(
    conn: sqlite3.Connection,
    match: str,
    scopes: Sequence[str],
    weights: FieldWeights,
    limit: int,
    every_scope: bool = False,
) -> list[tuple[int, float]]:
    """(rowid, bm25) best first, ties by chunk id; FTS5's bm25 is negative, lower is better.

    ``every_scope``: the scopes are all the index has, so no filtering is needed.
    """
    wanted = limit + TIE_SLACK if every_scope else limit * OVERFETCH + TIE_SLACK
    rows = _ranked(conn, search_sql(weights), match, wanted)
    info = _scopes_and_ids(conn, [r for r, _ in rows])
    allowed = set(scopes)
    kept = [(r, s) for r, s in rows if r in info and (every_scope or info[r][0] in allowed)]
    if len(kept) < limit and len(rows) == wanted:  # a narrow scope: rank within it instead
        kept = _ranked(conn, _scoped_sql(weights, len(scopes)), match, limit, scopes)
        info = _scopes_and_ids(conn, [r for r, _ in kept])
    kept.sort(key=lambda row: (row[1], info[row[0]][1]))
    return kept[:limit]


def _ranked(
    conn: sqlite3.Connection, sql: str, match: str, limit: int, scopes: Sequence[str] = ()
) -> list[tuple[int, float]]:
    try:
        rows = conn.execute(sql, (match, *scopes, limit)).fetchall()
    except sqlite3.OperationalError as exc:
        raise QueryError(
            f"the query is not valid FTS5 syntax ({exc}); fix it, or search without "
            "--query-mode advanced to have punctuation escaped"
        ) from None
    return [(row[0], row[1]) for row in rows]


def _scoped_sql(weights: FieldWeights, scope_count: int) -> str:
    placeholders = ", ".join("?" * scope_count)
    return (
        "SELECT c.rowid, "
        f"bm25(chunks_fts, {weights.title!r}, {weights.heading!r}, {weights.body!r}) AS bm25 "
        "FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid "
        f"WHERE chunks_fts MATCH ? AND c.scope IN ({placeholders}) ORDER BY bm25 LIMIT ?"
    )


def _scopes_and_ids(conn: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, tuple[str, str]]:
    if not rowids:
        return {}
    marks = ", ".join("?" * len(rowids))
    rows = conn.execute(f"SELECT rowid, scope, id FROM chunks WHERE rowid IN ({marks})", rowids)
    return {r[0]: (r[1], r[2]) for r in rows}
