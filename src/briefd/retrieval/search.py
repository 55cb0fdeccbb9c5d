"""The search entry point: scopes → lexical lists → fusion → hits (R1, R3, R5)."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass

from briefd.errors import QueryError, ScopeError
from briefd.model import Hit, HitExplain, SearchMode, SearchResult
from briefd.retrieval.fusion import RankedList, rrf
from briefd.retrieval.lexical import FieldWeights, QueryMode, build_match, run_match, search_sql
from briefd.settings import SearchSettings

RANKING_VERSION = "r1"
ALL_SCOPES = "all"


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query: str
    scopes: tuple[str, ...] | None = None  # None: the configured default scopes
    top_k: int | None = None
    mode: SearchMode = "bm25"
    explain: bool = False
    query_mode: QueryMode | None = None


def known_scopes(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT DISTINCT scope FROM documents ORDER BY scope")]


def resolve_scopes(
    conn: sqlite3.Connection, requested: Sequence[str] | None, default: Sequence[str]
) -> tuple[str, ...]:
    """Requested scopes must exist; ``all`` means every scope; defaults that are absent are
    simply not searched."""
    known = known_scopes(conn)
    if requested is None:
        return tuple(s for s in default if s in known)
    if ALL_SCOPES in requested:
        return tuple(known)
    unknown = [s for s in requested if s not in known]
    if unknown:
        listing = ", ".join(known) if known else "none (the index is empty)"
        raise ScopeError(
            f"scope '{unknown[0]}' does not exist; known scopes: {listing} (or '{ALL_SCOPES}')"
        )
    return tuple(dict.fromkeys(requested))


def search(
    conn: sqlite3.Connection,
    request: SearchRequest,
    settings: SearchSettings,
    default_scopes: Sequence[str],
) -> SearchResult:
    started = time.perf_counter()
    if request.mode != "bm25":
        raise QueryError(
            f"search mode '{request.mode}' needs embeddings, which this index does not have yet; "
            "use --mode bm25"
        )
    top_k = request.top_k if request.top_k is not None else settings.top_k
    if top_k < 1:
        raise QueryError(f"top_k must be at least 1, got {top_k}")
    scopes = resolve_scopes(conn, request.scopes, default_scopes)
    plan = build_match(request.query, request.query_mode or settings.query_mode)
    weights = FieldWeights(settings.title_weight, settings.heading_weight, settings.body_weight)
    depth = max(settings.candidates, top_k)
    all_list = run_match(conn, plan.all_terms, scopes, weights, depth) if plan.all_terms else []
    any_list = run_match(conn, plan.any_term, scopes, weights, depth) if scopes else []
    lists = [RankedList("all-terms", 1.0, [r for r, _ in all_list])] if plan.all_terms else []
    any_weight = settings.any_term_weight if plan.all_terms else 1.0
    lists.append(RankedList("any-term", any_weight, [r for r, _ in any_list]))
    fused = rrf(lists, settings.rrf_k)[:top_k]
    explain_data = {
        "all-terms": {row: (rank, score) for rank, (row, score) in enumerate(all_list, 1)},
        "any-term": {row: (rank, score) for rank, (row, score) in enumerate(any_list, 1)},
    }
    rows = _hydrate(conn, [f.key for f in fused])
    hits = []
    for item in fused:
        explain = None
        if request.explain:
            and_rank, and_bm25 = explain_data["all-terms"].get(item.key, (None, None))
            any_rank, any_bm25 = explain_data["any-term"].get(item.key, (None, None))
            explain = HitExplain(and_rank, and_bm25, any_rank, any_bm25, item.contributions)
        hits.append(_hit(rows[item.key], item.score, explain))
    sql: tuple[str, ...] = ()
    if request.explain:
        matches = [m for m in (plan.all_terms, plan.any_term) if m]
        sql = tuple(f"{search_sql(len(scopes), weights)}\n-- MATCH {m}" for m in matches)
    return SearchResult(
        query=request.query,
        mode=request.mode,
        scopes=scopes,
        hits=tuple(hits),
        ranking_version=RANKING_VERSION,
        took_ms=round((time.perf_counter() - started) * 1000, 3),
        sql=sql,
    )


def _hydrate(conn: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, sqlite3.Row]:
    if not rowids:
        return {}
    placeholders = ", ".join("?" * len(rowids))
    rows = conn.execute(
        "SELECT c.rowid AS rowid, c.id, d.path, c.scope, c.title, c.heading, c.heading_path, "
        "c.content, c.tokens, c.start_line, c.end_line "
        f"FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE c.rowid IN ({placeholders})",
        tuple(rowids),
    )
    return {row["rowid"]: row for row in rows}


def _hit(row: sqlite3.Row, score: float, explain: HitExplain | None) -> Hit:
    return Hit(
        chunk_id=row["id"],
        doc_path=row["path"],
        scope=row["scope"],
        title=row["title"],
        heading=row["heading"],
        heading_path=tuple(json.loads(row["heading_path"])),
        content=row["content"],
        score=round(score, 6),
        tokens=row["tokens"],
        start_line=row["start_line"],
        end_line=row["end_line"],
        explain=explain,
    )
