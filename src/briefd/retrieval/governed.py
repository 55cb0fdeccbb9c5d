"""Search with code paths (R5): documents whose front-matter ``refs`` cover a path a task
touches lead the results, one section each, then the other hits.

Paths are evidence of their own: those sections lead even when the relevance gate finds the
query off-topic, as they head a bundle (B1 tier 2). The matcher is the bundles' one
(:mod:`briefd.sources.refs`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import replace

from briefd.errors import QueryError
from briefd.model import Hit, SearchResult
from briefd.retrieval.lexical import QueryMode, build_match, no_terms_message
from briefd.retrieval.search import RANKING_VERSION, SearchRequest, hit_from_row, hydrate
from briefd.settings import SearchSettings
from briefd.sources.refs import covering, normalise_paths
from briefd.store import documents as docs_table
from briefd.store.scopes import known_scopes, request_warnings, resolve_scopes
from briefd.store.sections import documents_with_refs
from briefd.store.tags import check_tags, normalise_tags, tagged_paths
from briefd.text import query_terms

Run = Callable[[sqlite3.Connection, SearchRequest], SearchResult]


def search_with_paths(
    conn: sqlite3.Connection,
    request: SearchRequest,
    settings: SearchSettings,
    default_scopes: Sequence[str],
    run: Run,
) -> SearchResult:
    """``run`` the request; with ``request.paths`` the best section of each document whose
    ``refs`` cover one of them leads, then the other hits, within ``top_k``. A query of stop
    words only ("what breaks here?") is answered by the governing documents alone."""
    wanted = normalise_paths(request.paths)
    tags = normalise_tags(request.tags)
    check_tags(conn, tags)
    text_mode = (request.query_mode or settings.query_mode) == "text"
    if wanted and text_mode and not query_terms(request.query):
        scopes = resolve_scopes(conn, request.scopes, default_scopes)
        check_tags(conn, tags, scopes)
        check_governed(conn, request.query, scopes, wanted, tags)
        result = SearchResult(request.query, "bm25", scopes, (), RANKING_VERSION, 0.0)
    else:
        result = run(conn, request)
    warnings = request_warnings(conn, request.scopes, default_scopes)
    if wanted:
        warnings += elsewhere_warning(governing_elsewhere(conn, result.scopes, wanted))
    if warnings:
        result = replace(result, warnings=(*result.warnings, *warnings))
    if wanted:
        result = governed_first(conn, result, request, wanted, settings)
    if hint := answered_elsewhere(conn, result, request, run):
        result = replace(result, warnings=(*result.warnings, hint))
    return result


def governed_first(
    conn: sqlite3.Connection,
    result: SearchResult,
    request: SearchRequest,
    paths: Sequence[str],
    settings: SearchSettings,
) -> SearchResult:
    """``result`` led by the best section of each document in its scopes whose ``refs`` cover
    one of ``paths``; then the other direct hits; ``top_k`` kept; a related hit stays only
    with the hit it is linked from."""
    governed = _governed_docs(conn, result.scopes, paths)
    tags = normalise_tags(request.tags)
    if tags:
        tagged = tagged_paths(conn, governed.values(), tags)
        governed = {i: p for i, p in governed.items() if p in tagged}
    if not governed:
        return result
    direct = [h for h in result.hits if h.related_to is None]
    lead = _best_sections(conn, request, governed, direct, settings)
    taken = {h.chunk_id for h in lead}
    top_k = request.top_k if request.top_k is not None else settings.top_k
    hits = (lead + [h for h in direct if h.chunk_id not in taken])[:top_k]
    kept = {h.chunk_id for h in hits}
    related = [h for h in result.hits if h.related_to in kept and h.chunk_id not in kept]
    return replace(result, hits=tuple(hits + related))


ELSEWHERE_NAMED = 3  # governing documents of other scopes a warning names; the rest counted


def answered_elsewhere(
    conn: sqlite3.Connection, result: SearchResult, request: SearchRequest, run: Run
) -> str | None:
    """When ``result`` has no hit in the scopes it searched and scopes it did not search have
    some, the warning that names the best of them (and the scopes to ask): an empty answer
    must not read as "nothing is written" when a project's own scope holds the answer. One
    more search of the other scopes, only for an empty answer (the query's vector is cached)."""
    if not result.scopes or any(hit.related_to is None for hit in result.hits):
        return None
    return elsewhere_answers(conn, request, result.scopes, run)


def elsewhere_answers(
    conn: sqlite3.Connection, request: SearchRequest, searched: Sequence[str], run: Run
) -> str | None:
    """The warning naming the best sections for ``request`` in the scopes other than
    ``searched`` (None when those have none): what an empty search or bundle carries."""
    others = tuple(s for s in known_scopes(conn) if s not in searched)
    if not searched or not others:
        return None
    probe = replace(
        request, scopes=others, top_k=ELSEWHERE_NAMED, related=0, explain=False, paths=()
    )
    try:
        found = [hit for hit in run(conn, probe).hits if hit.related_to is None]
    except QueryError:  # a tag no other scope has, a query with no word to search for
        return None
    if not found:
        return None
    named = "; ".join(
        f"{hit.doc_path} § {' > '.join(hit.heading_path) or hit.title}" for hit in found
    )
    scopes = ", ".join(sorted({hit.scope for hit in found}))
    return (
        f"nothing in scopes {', '.join(searched)} answers this, but scopes not requested "
        f"do ({scopes}): {named}; add them to the requested scopes (or ask every scope: all) "
        "to get them"
    )


def governing_elsewhere(
    conn: sqlite3.Connection, scopes: Sequence[str], paths: Sequence[str]
) -> list[tuple[str, str, str]]:
    """Documents in scopes other than ``scopes`` whose ``refs`` cover one of ``paths``: (path,
    scope, why), scope by scope — left out of the answer, so the caller is told of them."""
    if not paths:
        return []
    found = []
    for scope in (s for s in known_scopes(conn) if s not in scopes):
        for _, path, refs in documents_with_refs(conn, (scope,)):
            if (why := covering(refs, paths)) is not None:
                found.append((path, scope, why))
    return found


def elsewhere_warning(found: Sequence[tuple[str, str, str]]) -> tuple[str, ...]:
    """The warning an answer carries when documents of scopes not requested govern its paths
    (an agent passing ``paths`` wants those documents above all): none when there are none."""
    if not found:
        return ()
    named = "; ".join(f"{path} ({why})" for path, _, why in found[:ELSEWHERE_NAMED])
    more = len(found) - ELSEWHERE_NAMED
    scopes = ", ".join(sorted({scope for _, scope, _ in found}))
    return (
        f"documents governing these paths are in scopes not requested ({scopes}): {named}"
        + (f" and {more} more" if more > 0 else "")
        + "; add them to the requested scopes to get them",
    )


def check_governed(
    conn: sqlite3.Connection,
    query: str,
    scopes: Sequence[str],
    paths: Sequence[str],
    tags: Sequence[str],
) -> None:
    """A query with no word to search for is answered by the documents governing ``paths``
    alone: when none in ``scopes`` (with ``tags``) does, a QueryError says so, naming those of
    other scopes that do, rather than an empty answer that reads as "nothing is written"."""
    governed = set(_governed_docs(conn, scopes, paths).values())
    if tagged_paths(conn, governed, tags) if tags else governed:
        return
    tagged = f" tagged {', '.join(tags)}" if tags else ""
    shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    others = [s for s in known_scopes(conn) if s not in scopes]
    elsewhere = list(_governed_docs(conn, others, paths).values())
    hint = (
        f" ({', '.join(elsewhere[:5])} {'does' if len(elsewhere) == 1 else 'do'}, in scopes "
        "not requested: add them to scopes)"
        if elsewhere
        else ""
    )
    raise QueryError(
        f"no document{tagged} in scopes {', '.join(scopes)} has refs covering {shown}{hint}, "
        f"and {no_terms_message(query)}"
    )


def _governed_docs(
    conn: sqlite3.Connection, scopes: Sequence[str], paths: Sequence[str]
) -> dict[int, str]:
    """Documents in ``scopes`` whose front-matter ``refs`` cover one of ``paths`` (id → path,
    in path order); the matcher is the one bundles use (``briefd.sources.refs``)."""
    if not scopes:
        return {}
    marks = ", ".join("?" * len(scopes))
    rows = conn.execute(
        f"SELECT id, path, front_matter FROM documents WHERE scope IN ({marks}) ORDER BY path",
        tuple(scopes),
    )
    return {
        r["id"]: r["path"]
        for r in rows
        if covering(docs_table.front_matter_from_row(r).refs, paths) is not None
    }


def _best_sections(
    conn: sqlite3.Connection,
    request: SearchRequest,
    governed: dict[int, str],
    direct: Sequence[Hit],
    settings: SearchSettings,
) -> list[Hit]:
    """One section per governed document, best first: its best-ranked hit (in rank order);
    else its best match for the query within the document (every term before any term, then
    BM25); else its first section."""
    ranked: dict[str, Hit] = {}
    for hit in direct:
        if hit.doc_path in governed.values():
            ranked.setdefault(hit.doc_path, hit)
    rest = [doc_id for doc_id, path in governed.items() if path not in ranked]
    matched = matching_sections(conn, request.query, request.query_mode, rest, settings)
    unmatched = [doc_id for doc_id in rest if doc_id not in matched]
    return list(ranked.values()) + _section_hits(
        conn, [*matched.values(), *_first_sections(conn, unmatched)]
    )


def matching_sections(
    conn: sqlite3.Connection,
    query: str,
    query_mode: QueryMode | None,
    doc_ids: Sequence[int],
    settings: SearchSettings,
) -> dict[int, int]:
    """document id → rowid of its best section for the query (every term before any term,
    then BM25), best documents first; documents without a matching section are left out."""
    if not doc_ids:
        return {}
    try:
        plan = build_match(query, query_mode or settings.query_mode)
    except QueryError:
        return {}
    weights = f"{settings.title_weight!r}, {settings.heading_weight!r}, {settings.body_weight!r}"
    marks = ", ".join("?" * len(doc_ids))
    sql = (
        "SELECT c.rowid, c.doc_id FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid "
        f"WHERE chunks_fts MATCH ? AND c.doc_id IN ({marks}) "
        f"ORDER BY bm25(chunks_fts, {weights}), c.id"
    )
    best: dict[int, int] = {}
    for match in (plan.all_terms, plan.any_term):
        try:
            rows = conn.execute(sql, (match, *doc_ids)).fetchall() if match else []
        except sqlite3.OperationalError:  # advanced syntax FTS5 refuses: no match, no error
            rows = []
        for rowid, doc_id in rows:
            best.setdefault(doc_id, rowid)
    return best


def _first_sections(conn: sqlite3.Connection, doc_ids: Sequence[int]) -> list[int]:
    found = (
        conn.execute(
            "SELECT rowid FROM chunks WHERE doc_id = ? ORDER BY position LIMIT 1", (doc_id,)
        ).fetchone()
        for doc_id in doc_ids
    )
    return [row[0] for row in found if row is not None]


def _section_hits(conn: sqlite3.Connection, rowids: Sequence[int]) -> list[Hit]:
    """Chunks as unranked hits (score 0), in the order of ``rowids``."""
    rows = hydrate(conn, rowids)
    return [hit_from_row(rows[r], 0.0, None) for r in rowids if r in rows]
