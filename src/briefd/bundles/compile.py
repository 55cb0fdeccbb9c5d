"""``compile_bundle``: request → cache lookup → tiered collection → packing → rendering, then
incremental reuse against a base bundle (B1–B5). The caller supplies the store and a search
function bound to its settings, so this module stays free of the API object."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, replace

from briefd.bundles import cache as cache_table
from briefd.bundles.cache import (
    BundleCache,
    CacheKey,
    StoredSection,
    cache_key,
    settings_digest,
)
from briefd.bundles.collect import collect, retrieval_query
from briefd.bundles.model import (
    FORMATS,
    MAX_TOKENS,
    MIN_TOKENS,
    Bundle,
    BundleDelta,
    BundleItem,
    BundleRequest,
    DeltaEntry,
    Diagnostics,
    ItemDrift,
)
from briefd.bundles.pack import effective_budget, pack
from briefd.bundles.render import delta_text, json_text, markdown
from briefd.errors import IndexNotFoundError, QueryError, StoreError
from briefd.model import SearchMode, SearchResult
from briefd.retrieval.lexical import no_terms_message
from briefd.retrieval.search import RANKING_VERSION, SearchRequest
from briefd.settings import Settings
from briefd.sources.refs import normalise_paths
from briefd.store import code as code_table
from briefd.store import sync_state
from briefd.store.db import Store
from briefd.store.scopes import resolve_scopes
from briefd.text import query_terms
from briefd.tokens import ESTIMATOR, count_tokens

SearchFn = Callable[[sqlite3.Connection, SearchRequest], SearchResult]
_BUNDLE_ID = re.compile(r"^[0-9a-f]{16}$")
CACHE_WAIT_MS = 100  # a cache row is not worth waiting for a reindex's write lock


@dataclass(frozen=True, slots=True)
class Engine:
    """What compiling needs from its host: the store, settings, a search bound to them, the
    search mode and embedding model in effect, and the cache."""

    store: Store
    settings: Settings
    search: SearchFn
    mode: SearchMode
    model: str
    cache: BundleCache


def validate(request: BundleRequest) -> None:
    if not request.task.strip() and not (request.issue and request.issue.strip()):
        raise QueryError("the task description is empty; describe the task (or pass an issue)")
    if not MIN_TOKENS <= request.max_tokens <= MAX_TOKENS:
        raise QueryError(
            f"max_tokens must be between {MIN_TOKENS} and {MAX_TOKENS}, got {request.max_tokens}"
        )
    if request.format not in FORMATS:
        raise QueryError(f"format must be one of {', '.join(FORMATS)}, got '{request.format}'")


def compile_bundle(engine: Engine, request: BundleRequest) -> Bundle:
    validate(request)
    paths = normalise_paths(request.paths)
    with engine.store.read() as conn:
        fingerprint = _fingerprint(conn)
        scopes = resolve_scopes(conn, request.scopes, engine.settings.default_scopes)
        key = cache_key(
            task=request.task.strip(),
            issue=request.issue,
            scopes=scopes,
            paths=paths,
            max_tokens=request.max_tokens,
            format=request.format,
            mode=engine.mode,
            index_fingerprint=fingerprint,
            model=engine.model,
            ranking_version=RANKING_VERSION,
            settings=settings_digest(engine.settings),
        )
        bundle = engine.cache.get(key.key)
        fresh = False
        if bundle is None:
            bundle = cache_table.load(conn, key.key)
            if bundle is None:
                bundle = _build(conn, engine, request, key, scopes, paths, fingerprint)
                fresh = True
            engine.cache.put(key.key, bundle, hit=not fresh)
        else:
            bundle = replace(bundle, cached=True)
        bundle = with_drift(conn, bundle)
        base = _base(conn, request.base, key) if request.base else None
    if fresh:
        _persist(engine, key, bundle, request, scopes, paths)
    if request.base is None:
        return bundle
    if base is None:
        return replace(bundle, recovered=True)
    delta = diff(request.base, base, bundle.items)
    as_json = bundle.format != "markdown"
    text = delta_text(delta, with_content=bundle.format != "manifest", as_json=as_json)
    return replace(bundle, delta=delta, text=text)


def _build(
    conn: sqlite3.Connection,
    engine: Engine,
    request: BundleRequest,
    key: CacheKey,
    scopes: tuple[str, ...],
    paths: tuple[str, ...],
    fingerprint: str,
) -> Bundle:
    settings = engine.settings.bundles
    query = retrieval_query(request.task, request.issue)
    if query_terms(query):
        search = SearchRequest(query, scopes=scopes, top_k=settings.candidates, mode=engine.mode)
        result = engine.search(conn, search)
    elif paths:  # "fix the thing" with paths: the documents governing them are the context
        result = SearchResult(query, engine.mode, scopes, (), RANKING_VERSION, 0.0, gate="empty")
    else:
        raise QueryError(no_terms_message(query))
    comparable = result.mode == "hybrid" and engine.settings.search.fusion == "score"
    floor = settings.min_relative_score if comparable else 0.0  # RRF scores are rank-based
    candidates = collect(conn, result, scopes, paths, request.issue, floor)
    packed = pack(candidates, request.max_tokens, settings)
    block = markdown(packed.items)
    diagnostics = Diagnostics(
        estimator=ESTIMATOR,
        budget=request.max_tokens,
        effective_budget=effective_budget(request.max_tokens, settings),
        tokens=count_tokens(block),
        truncated=packed.truncated,
        exclusions=packed.exclusions,
        ranking_version=RANKING_VERSION,
        index_fingerprint=fingerprint,
        embedding_model=engine.model,
        mode=result.mode,
        gate=result.gate,
        scopes=scopes,
    )
    if request.format == "markdown":
        text = block
    else:
        text = json_text(key.bundle_id, packed.items, diagnostics, request.format == "json")
    return Bundle(key.bundle_id, request.format, text, packed.items, diagnostics)


def with_drift(conn: sqlite3.Connection, bundle: Bundle) -> Bundle:
    """Items of documents that drift from the code (T4) marked ``drift``, as of now."""
    marks = code_table.drift_marks(conn, sorted({item.doc_path for item in bundle.items}))
    if not marks:
        return bundle
    items = tuple(
        replace(item, drift=ItemDrift(*marks[item.doc_path])) if item.doc_path in marks else item
        for item in bundle.items
    )
    return replace(bundle, items=items)


def diff(
    base_id: str, held: tuple[StoredSection, ...], items: tuple[BundleItem, ...]
) -> BundleDelta:
    """What the caller holding ``base_id`` needs: reuse what it has, replace the rest."""
    known = {s.chunk_id: s.fingerprint for s in held}
    entries: list[DeltaEntry] = []
    saved = 0
    for item in items:
        if known.get(item.chunk_id) == item.fingerprint:
            entries.append(DeltaEntry("reuse", item.chunk_id))
            saved += item.tokens
        else:
            entries.append(DeltaEntry("replace", item.chunk_id, item))
    current = {item.chunk_id for item in items}
    removed = tuple(s.chunk_id for s in held if s.chunk_id not in current)
    return BundleDelta(base_id, tuple(entries), removed, saved)


def _base(
    conn: sqlite3.Connection, base_id: str, key: CacheKey
) -> tuple[StoredSection, ...] | None:
    """The sections of the base bundle, or None when it is unknown or was compiled for a
    different request (then the caller gets the full bundle, marked recovered)."""
    if not _BUNDLE_ID.match(base_id):
        return None
    found = cache_table.manifest(conn, base_id)
    if found is None or found[0] != key.request_key:
        return None
    return found[1]


def _fingerprint(conn: sqlite3.Connection) -> str:
    fingerprint = sync_state.index_fingerprint(conn)
    if fingerprint is None:
        raise IndexNotFoundError("the index is empty; build it with `briefd index` first")
    return fingerprint


def _persist(
    engine: Engine,
    key: CacheKey,
    bundle: Bundle,
    request: BundleRequest,
    scopes: tuple[str, ...],
    paths: tuple[str, ...],
) -> None:
    """Store the new bundle and the hits counted since the last write. A busy or read-only
    database costs only the cache row: the caller still gets its bundle."""
    pending = engine.cache.take_pending_hits()
    try:
        with engine.store.write(wait_ms=CACHE_WAIT_MS, durable=False) as conn:
            cache_table.save(
                conn, key, bundle, request.task.strip(), scopes, paths, request.max_tokens
            )
            cache_table.add_hits(conn, pending)
    except StoreError:
        engine.cache.restore_pending_hits(pending)


def flush_hits(store: Store, cache: BundleCache) -> None:
    pending = cache.take_pending_hits()
    if not pending:
        return
    try:
        with store.write(wait_ms=CACHE_WAIT_MS, durable=False) as conn:
            cache_table.add_hits(conn, pending)
    except StoreError:
        cache.restore_pending_hits(pending)
