"""Lexical retrieval (R1): FTS5 BM25, AND-first then any-term, free text always escaped.

``build_match`` and ``search_sql`` are pure (build the query); ``lexical_lists`` runs it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from briefd.errors import QueryError
from briefd.retrieval.text import fold, query_terms

QueryMode = Literal["text", "advanced"]


@dataclass(frozen=True, slots=True)
class MatchPlan:
    """FTS5 MATCH expressions for one query: every term (AND), then any term (OR)."""

    terms: tuple[str, ...]
    all_terms: str | None  # None when it would equal any_term (one term, or advanced mode)
    any_term: str
    corrections: tuple[tuple[str, str], ...] = ()  # (typed word, indexed word it also matches)


@dataclass(frozen=True, slots=True)
class FieldWeights:
    title: float = 3.0
    heading: float = 2.0
    body: float = 1.0


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def build_match(
    query: str, mode: QueryMode = "text", corrections: dict[str, str] | None = None
) -> MatchPlan:
    """Free text becomes quoted terms, so no punctuation can be FTS5 syntax; ``advanced``
    passes the query through (phrases, prefixes, NEAR, AND/OR/NOT)."""
    if mode == "advanced":
        if not query.strip():
            raise QueryError("the query is empty; type some words to search for")
        return MatchPlan((), None, fold(query))
    terms = tuple(query_terms(query))
    if not terms:
        raise QueryError("the query has no words to search for; type some words")
    fixes = corrections or {}
    quoted = [f"({_quote(t)} OR {_quote(fixes[t])})" if t in fixes else _quote(t) for t in terms]
    all_terms = " AND ".join(quoted) if len(quoted) > 1 else None
    return MatchPlan(
        terms, all_terms, " OR ".join(quoted), tuple((t, fixes[t]) for t in terms if t in fixes)
    )


def search_sql(scope_count: int, weights: FieldWeights) -> str:
    """The one lexical query: BM25 with per-column weights, scope filter, stable tie order."""
    placeholders = ", ".join("?" * scope_count)
    return (
        "SELECT c.rowid AS rowid, "
        f"bm25(chunks_fts, {weights.title!r}, {weights.heading!r}, {weights.body!r}) AS bm25\n"
        "FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid\n"
        f"WHERE chunks_fts MATCH ? AND c.scope IN ({placeholders})\n"
        "ORDER BY bm25, c.id\n"
        "LIMIT ?"
    )


def run_match(
    conn: sqlite3.Connection,
    match: str,
    scopes: Sequence[str],
    weights: FieldWeights,
    limit: int,
) -> list[tuple[int, float]]:
    """(rowid, bm25) best first; FTS5's bm25 is negative, lower is better."""
    sql = search_sql(len(scopes), weights)
    try:
        rows = conn.execute(sql, (match, *scopes, limit)).fetchall()
    except sqlite3.OperationalError as exc:
        raise QueryError(
            f"the query is not valid FTS5 syntax ({exc}); fix it, or search without "
            "--query-mode advanced to have punctuation escaped"
        ) from None
    return [(row["rowid"], row["bm25"]) for row in rows]
