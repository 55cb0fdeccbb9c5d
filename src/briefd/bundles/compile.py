"""``compile_bundle``: request → cache lookup → tiered collection → packing → rendering, then
incremental reuse against a base bundle (B1–B8). A document context is the same with a
``target``. The caller supplies the store and a search function bound to its settings, so
this module stays free of the API object."""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from briefd.bundles import cache as cache_table
from briefd.bundles import render
from briefd.bundles.cache import (
    BundleCache,
    CacheKey,
    StoredSection,
    cache_key,
    settings_digest,
    stored_sections,
)
from briefd.bundles.collect import Ask, collect, retrieval_query
from briefd.bundles.fitted import within_limit
from briefd.bundles.governed import unrequested
from briefd.bundles.measure import (
    answer_tokens,
    envelope_tokens,
    field_tokens,
    measure,
    warnings_tokens,
)
from briefd.bundles.model import (
    MAX_HARD_LIMIT,
    MAX_TOKENS,
    MIN_TOKENS,
    MODES,
    Bundle,
    BundleDelta,
    BundleItem,
    BundleRequest,
    Candidate,
    DeltaEntry,
    Diagnostics,
    ItemDrift,
)
from briefd.bundles.pack import ISSUE_RESERVE, effective_budget, pack
from briefd.bundles.structure import elsewhere, issue_head, unresolved
from briefd.bundles.warned import (
    ISSUE,
    counted,
    crowded_out,
    gated,
    issue_alone,
    issue_left_out,
    issue_reserve,
    no_text,
    over_budget,
    recovered,
    target_cut_reserve,
    too_small,
    with_warnings,
)
from briefd.bundles.wire import document
from briefd.errors import (
    EmbeddingError,
    IndexNotFoundError,
    NotFoundError,
    QueryError,
    StoreError,
)
from briefd.model import DocumentView, SearchMode, SearchResult
from briefd.retrieval.governed import (
    check_governed,
    elsewhere_answers,
    elsewhere_warning,
    governing_elsewhere,
)
from briefd.retrieval.lexical import no_terms_message
from briefd.retrieval.search import RANKING_VERSION, SearchRequest
from briefd.settings import BundleSettings, Settings
from briefd.sources.refs import normalise_paths
from briefd.state import Manifest, SharedState
from briefd.store import code as code_table
from briefd.store import documents as docs_table
from briefd.store import sync_state, views
from briefd.store.db import Store
from briefd.store.scopes import request_warnings, resolve_scopes
from briefd.store.supersession import superseded_by, superseders
from briefd.store.tags import check_tags, normalise_tags
from briefd.text import query_terms
from briefd.tokens import ESTIMATOR, count_tokens

SearchFn = Callable[[sqlite3.Connection, SearchRequest], SearchResult]
# (issue as given, token budget) → (Markdown heading the bundle, query text) for an issue key
# fetched live, None for an issue's text (see ``briefd.atlassian.Atlassian.issue_lookup``)
IssueLookup = Callable[[str, int], "tuple[str, str] | None"]
_BUNDLE_ID = re.compile(r"^[0-9a-f]{16}$")
ISSUE_ATTRIBUTION_TOKENS = 40  # the "> tracker issue · …" line above the issue
MIN_ISSUE_TOKENS = 100  # the least issue text kept, as a live issue's lookup keeps
LIVE_ISSUE_SHARE = 0.35  # a live Jira issue is rendered within this share of the budget (B1)
LIVE_ISSUE_FLOOR = 50  # the least a live issue is fitted to (atlassian.service.MIN_TOKENS)
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
    lookup_issue: IssueLookup | None = None
    # replicas: the shared state (manifests compiled by any replica), the knowledge commit
    # served here and whether a commit is this one or one of its ancestors
    shared: SharedState | None = None
    commit: str | None = None
    knows: Callable[[str], bool] | None = None
    # why ``mode`` cannot be searched on this index now (no vectors of the model yet: an
    # upgrade's, or an index run still embedding), else None: compiled in bm25 and said
    fallback: Callable[[sqlite3.Connection], str | None] | None = None


def validate(request: BundleRequest) -> None:
    if request.target is not None and not request.target.strip():
        raise QueryError("the document path is empty; name a document, e.g. domain/glossary.md")
    given = request.task.strip() or (request.issue or "").strip() or (request.target or "").strip()
    if not given and not normalise_paths(request.paths):  # paths: their governing documents
        blank = " and the paths are blank" if request.paths else ""
        raise QueryError(
            f"the task description is empty{blank}; describe the task (or pass an issue, or paths)"
        )
    if not MIN_TOKENS <= request.max_tokens <= MAX_TOKENS:
        raise QueryError(
            f"max_tokens must be between {MIN_TOKENS} and {MAX_TOKENS}, got {request.max_tokens}"
        )
    if not MIN_TOKENS <= request.ceiling <= MAX_HARD_LIMIT:
        raise QueryError(
            f"hard_limit must be between {MIN_TOKENS} and {MAX_HARD_LIMIT} (default: 4 × "
            f"max_tokens), got {request.ceiling}"
        )
    if request.mode not in MODES:
        raise QueryError(f"mode must be one of {', '.join(MODES)}, got '{request.mode}'")


@dataclass(frozen=True, slots=True)
class _Resolved:
    """A request with its scopes, paths, tags and target resolved against the index."""

    request: BundleRequest
    scopes: tuple[str, ...]
    paths: tuple[str, ...]
    tags: tuple[str, ...]
    target: DocumentView | None
    fingerprint: str
    drift: str  # the drift state (T4): items are packed with their drift, so it is in the key
    dates: str  # the documents' "updated" days: attribution lines show them, so they are too
    # a default scope the index lacks: the answer carries it, so its room is kept back and it
    # is in the key (a request naming the same scopes gets none)
    warned: tuple[str, ...]


def compile_bundle(engine: Engine, request: BundleRequest) -> Bundle:
    """A model that fails (a remote embedding service down) leaves a bundle compiled by
    keywords that says why, as the configured search mode falls back in a search."""
    validate(request)
    request, live = live_issue(engine, request)
    try:
        return _compiled(engine, request, live)
    except EmbeddingError as exc:
        if engine.mode == "bm25":
            raise
        said = f"compiled by keywords only (bm25): the embedding model failed ({exc})"
        return _compiled(replace(engine, fallback=lambda _: said), request, live)


def _compiled(engine: Engine, request: BundleRequest, live: bool) -> Bundle:
    with engine.store.read() as conn:
        engine, fell_back = _searchable(conn, engine)
        asked = _resolve(conn, engine, request)
        asked = replace(asked, warned=(*fell_back, *asked.warned))
        key = _key(engine, asked)
        bundle = engine.cache.get(key.key)
        fresh = False
        if bundle is None:
            bundle = cache_table.load(conn, key.key)
            if bundle is None:
                bundle = _build(conn, engine, asked, key)
                fresh = True
            engine.cache.put(key.key, bundle, hit=not fresh)
        else:
            bundle = replace(bundle, cached=True)
        warned = asked.warned + too_small(bundle, asked.warned) + over_budget(bundle)
        warned += issue_left_out(bundle, warned, _growth(engine, request) if live else None)
        warned += crowded_out(bundle, warned)
        warned += _answered_elsewhere(conn, engine, asked, bundle, warned) + no_text(bundle)
        warned += issue_alone(bundle, warned)
        warned += gated(bundle, warned)
        base = _base(conn, engine, request.base, key) if request.base else None
        held = not fresh and _remembered(conn, engine.store, bundle.bundle_id)
    if fresh and not live:  # a live issue's text is never stored
        _persist(engine, key, bundle, asked)
    elif not held:  # a live issue's bundle, or one served after its manifest aged out
        _remember(engine, key, bundle)
    if engine.shared is not None:  # what it holds, never a live issue's text
        bundle = _share(engine, engine.shared, key, bundle)
    bundle = with_warnings(bundle, warned)
    if not request.base:  # none, or "" (a client that sends every field): the full bundle
        return as_sent(within_limit(bundle))
    if base is None:
        return as_sent(within_limit(recovered(bundle)))
    delta = diff(request.base, base, bundle.items)
    markdown = render.delta_markdown(delta) if bundle.mode == "markdown" else ""
    answer = replace(bundle, delta=delta, text=markdown)
    d = replace(bundle.diagnostics, tokens=answer_tokens(answer))  # the delta's, as sent
    return as_sent(within_limit(replace(answer, diagnostics=d)))


def as_sent(bundle: Bundle) -> Bundle:
    """A package or manifest whose ``text`` is its answer as finally sent: the figures,
    warnings and marks added after packing (a stored one holds those it was packed with)."""
    return bundle if bundle.mode == "markdown" else replace(bundle, text=document(bundle))


def _answered_elsewhere(
    conn: sqlite3.Connection,
    engine: Engine,
    asked: _Resolved,
    bundle: Bundle,
    warned: tuple[str, ...],
) -> tuple[str, ...]:
    """A bundle for a task (no target) in whose scopes nothing matched says which scopes not
    requested answer it, as an empty search does: a project's runbook outside the default
    scopes is not "nothing". Only where the warning fits the budget beside ``warned``."""
    d = bundle.diagnostics
    if bundle.knowledge or asked.target is not None:
        return ()  # (an issue heading the bundle alone does not answer it)
    if any(e.chunk_id and not e.chunk_id.startswith(ISSUE) for e in d.exclusions):
        return ()
    query = retrieval_query(asked.request.task, asked.request.issue, None)
    if not query_terms(query):
        return ()
    search = SearchRequest(query, mode=engine.mode, tags=asked.tags)
    hint = elsewhere_answers(conn, search, asked.scopes, engine.search)
    room = min(d.budget, d.hard_limit) - d.tokens - warnings_tokens(warned)
    fits = hint and warnings_tokens((*warned, hint)) - warnings_tokens(warned) <= room
    return (hint,) if hint and fits else ()


def _searchable(conn: sqlite3.Connection, engine: Engine) -> tuple[Engine, tuple[str, ...]]:
    """The engine in a mode this index can be searched in, and the warning when that is not
    the configured one (as search falls back to bm25 when the vectors are missing)."""
    why = engine.fallback(conn) if engine.fallback and engine.mode != "bm25" else None
    if why is None:
        return engine, ()
    return replace(engine, mode="bm25", model="none"), (why,)


def live_issue(engine: Engine, request: BundleRequest) -> tuple[BundleRequest, bool]:
    """B1 with a tracker: an issue key is fetched within its share of the budget (of the
    tighter of max_tokens and hard_limit, as pasted issue text is cut); its Markdown heads the
    bundle and its summary and description join the query. Issue text as given (or no
    lookup) leaves the request as it is."""
    if not request.issue:
        return request, False
    share = issue_share(engine.settings.bundles, request)
    found = engine.lookup_issue(request.issue, share) if engine.lookup_issue else None
    if found is None:
        return _pasted_issue(engine, request), False
    text, query = found
    return replace(request, task=f"{request.task.strip()} {query}".strip(), issue=text), True


def _growth(engine: Engine, request: BundleRequest) -> Callable[[int], int]:
    """How many tokens more than now a live issue is fitted to at a given hard limit."""
    now = max(issue_share(engine.settings.bundles, request), LIVE_ISSUE_FLOOR)
    return lambda limit: max(
        0, issue_share(engine.settings.bundles, replace(request, hard_limit=limit)) - now
    )


def _pasted_issue(engine: Engine, request: BundleRequest) -> BundleRequest:
    """Issue text as given, whole while it fits the hard limit; over it, cut as a live Jira
    issue is, to its share of the budget with the marker that says so: 16,000 characters
    pasted as the issue came whole past any hard limit (past Claude Code's 25,000 too)."""
    text = (request.issue or "").strip()
    room = effective_budget(request.ceiling, engine.settings.bundles) - ISSUE_ATTRIBUTION_TOKENS
    if count_tokens(text) <= room:
        return request
    share = issue_share(engine.settings.bundles, request)
    return replace(request, issue=issue_head(text, max(share, MIN_ISSUE_TOKENS)))


def issue_share(settings: BundleSettings, request: BundleRequest) -> int:
    """The tokens an issue heading the bundle may take: its share of the tighter of
    max_tokens and hard_limit, less its attribution line (a hard_limit below max_tokens must
    hold the issue too). A server fits a live issue to it before taking its lock."""
    budget = effective_budget(min(request.max_tokens, request.ceiling), settings)
    return int(budget * LIVE_ISSUE_SHARE) - ISSUE_ATTRIBUTION_TOKENS


def _resolve(conn: sqlite3.Connection, engine: Engine, request: BundleRequest) -> _Resolved:
    fingerprint = _fingerprint(conn)
    scopes = resolve_scopes(conn, request.scopes, engine.settings.default_scopes)
    tags = normalise_tags(request.tags)
    check_tags(conn, tags, scopes)
    target = None
    if request.target is not None:
        path = request.target.strip().removeprefix("./")
        target = views.document_view(conn, path, scopes, sections=False)
        if target is None:  # as get_document reads it: domain\\refunds.md, domain//refunds.md
            target = views.document_view(conn, views.document_key(path), scopes, sections=False)
        if target is None:
            raise NotFoundError(views.not_found(conn, path, scopes))
    paths = normalise_paths(request.paths)
    drift = code_table.drift_state(conn)
    dates = docs_table.dates_state(conn)
    warned = request_warnings(conn, request.scopes, engine.settings.default_scopes)
    warned += elsewhere_warning(governing_elsewhere(conn, scopes, paths))
    warned += elsewhere(conn, target, scopes) + unresolved(target)
    return _Resolved(request, scopes, paths, tags, target, fingerprint, drift, dates, warned)


def _key(engine: Engine, asked: _Resolved) -> CacheKey:
    request = asked.request
    return cache_key(
        task=request.task.strip(),
        issue=request.issue,
        target=asked.target.path if asked.target else None,
        scopes=asked.scopes,
        paths=asked.paths,
        tags=asked.tags,
        max_tokens=request.max_tokens,
        hard_limit=request.ceiling,
        mode=request.mode,
        search_mode=engine.mode,
        index_fingerprint=asked.fingerprint,
        model=engine.model,
        ranking_version=RANKING_VERSION,
        settings=settings_digest(engine.settings),
        drift=asked.drift,
        dates=asked.dates,
        warnings=asked.warned,
    )


def _build(conn: sqlite3.Connection, engine: Engine, asked: _Resolved, key: CacheKey) -> Bundle:
    request, settings = asked.request, engine.settings.bundles
    title = asked.target.title if asked.target else None
    query = retrieval_query(request.task, request.issue, title)
    result = _search(conn, engine, asked, query)
    comparable = result.mode == "hybrid" and engine.settings.search.fusion == "score"
    floor = settings.min_relative_score if comparable else 0.0  # RRF scores are rank-based
    ask = Ask(asked.scopes, asked.paths, asked.tags, request.issue, asked.target, query, floor)
    collected, capped = collect(conn, result, ask, engine.settings)
    candidates = with_drift(conn, collected)
    candidates = with_superseders(conn, candidates, asked.scopes)
    target = asked.target.path if asked.target else None
    envelope = envelope_tokens(request.mode, target, request.ceiling)
    sizes = measure(request.mode, envelope=envelope + warnings_tokens(asked.warned))
    reserve = _cut_reserve(candidates, target, request)
    packed = pack(candidates, request.max_tokens, settings, sizes, request.ceiling, reserve)
    tokens = sizes.whole(packed.items) + envelope
    diagnostics = Diagnostics(
        estimator=ESTIMATOR,
        budget=request.max_tokens,
        effective_budget=effective_budget(min(request.max_tokens, request.ceiling), settings),
        hard_limit=request.ceiling,
        tokens=tokens,
        budget_exceeded=tokens > request.ceiling,
        overage=max(tokens - request.ceiling, 0),
        truncated=packed.truncated,
        exclusions=packed.exclusions + capped + unrequested(conn, asked.scopes, asked.paths),
        ranking_version=RANKING_VERSION,
        index_fingerprint=asked.fingerprint,
        embedding_model=engine.model,
        search_mode=result.mode,
        gate=result.gate,
        scopes=asked.scopes,
    )
    bundle = Bundle(key.bundle_id, request.mode, "", packed.items, diagnostics, target)
    if request.mode == "markdown":
        return replace(bundle, text=render.markdown(packed.items))
    return as_sent(bundle)


def _cut_reserve(
    candidates: Sequence[Candidate], target: str | None, request: BundleRequest
) -> dict[str, int]:
    """What the warning of each document that can be cut at the hard limit (the target, an
    ``always: true`` document) costs at most, by path; the tracker issue's by
    :data:`ISSUE_RESERVE`."""
    scopes = {c.doc_path: c.scope for c in candidates if c.tier == "mandatory" and c.doc_path}
    reserve = {
        path: target_cut_reserve(path, scope, request.ceiling, request.max_tokens, path == target)
        for path, scope in scopes.items()
    }
    if request.issue and request.issue.strip():
        reserve[ISSUE_RESERVE] = issue_reserve(request.ceiling, request.max_tokens)
    return reserve


def _search(conn: sqlite3.Connection, engine: Engine, asked: _Resolved, query: str) -> SearchResult:
    """The ranked hits for the query; none for a request with code paths or a target but no
    searchable word ("fix the thing": its context is the structure), with the gate ``off``:
    nothing was searched, so nothing was judged off-topic."""
    if query_terms(query):
        search = SearchRequest(
            query,
            scopes=asked.scopes,
            top_k=engine.settings.bundles.candidates,
            mode=engine.mode,
            tags=asked.tags,
        )
        return engine.search(conn, search)
    if asked.paths or asked.target:
        if asked.target is None:  # the paths' governing documents are the whole answer
            check_governed(conn, query, asked.scopes, asked.paths, asked.tags)
        return SearchResult(query, engine.mode, asked.scopes, (), RANKING_VERSION, 0.0, gate="off")
    raise QueryError(no_terms_message(query))


def with_superseders(
    conn: sqlite3.Connection, candidates: Sequence[Candidate], scopes: Sequence[str]
) -> list[Candidate]:
    """Candidates of superseded documents (a ``supersedes`` in another's front matter) marked
    with the documents superseding them that the caller may read (K2), whatever their tier."""
    found = superseders(conn, {c.doc_path for c in candidates})
    return [
        replace(c, superseded_by=superseded_by(found, c.doc_path, scopes))
        if c.doc_path in found
        else c
        for c in candidates
    ]


def with_drift(conn: sqlite3.Connection, candidates: Sequence[Candidate]) -> list[Candidate]:
    """Candidates of documents that drift from the code (T4) marked ``drift`` before packing,
    so the budget holds for the items as the client receives them, drift included."""
    marks = code_table.drift_marks(conn, sorted({c.doc_path for c in candidates}))
    return [
        replace(c, drift=ItemDrift(*marks[c.doc_path])) if c.doc_path in marks else c
        for c in candidates
    ]


def diff(
    base_id: str, held: tuple[StoredSection, ...], items: tuple[BundleItem, ...]
) -> BundleDelta:
    """What the caller holding ``base_id`` needs: reuse what it holds as it is now (content
    and location: :func:`render.held`), replace the rest."""
    known = {s.chunk_id: s.fingerprint for s in held}
    entries: list[DeltaEntry] = []
    saved = 0
    for item in items:
        if known.get(item.chunk_id) == render.held(item):
            entries.append(DeltaEntry("reuse", item.chunk_id))
            saved += item.tokens
        else:
            entries.append(DeltaEntry("replace", item.chunk_id, item))
    current = {item.chunk_id for item in items}
    removed = tuple(s.chunk_id for s in held if s.chunk_id not in current)
    return BundleDelta(base_id, tuple(entries), removed, saved)


def _base(
    conn: sqlite3.Connection, engine: Engine, base_id: str, key: CacheKey
) -> tuple[StoredSection, ...] | None:
    """The sections of the base bundle, or None when it is unknown or was compiled for a
    different request (then the caller gets the full bundle, marked recovered)."""
    if not _BUNDLE_ID.match(base_id):
        return None
    found = cache_table.manifest(conn, base_id) or unsaved_manifest(engine.store, base_id)
    if found is None and engine.shared is not None:
        found = _shared_base(engine, engine.shared, base_id)
    if found is None or found[0] != key.request_key:
        return None
    return found[1]


def _shared_base(
    engine: Engine, shared: SharedState, base_id: str
) -> tuple[str, tuple[StoredSection, ...]] | None:
    """A base compiled through another replica: usable only when it was compiled at the
    commit served here or at one of its ancestors. A replica behind the base (or on another
    line) answers with the full bundle, never a delta that would take the caller back."""
    try:
        held = shared.manifest(base_id)
    except StoreError:  # unreachable: recovered, the full bundle is always right
        return None
    if held is None:
        return None
    ours = held.commit is None or held.commit == engine.commit
    if not ours and (engine.knows is None or not engine.knows(str(held.commit))):
        return None
    return held.request_key, stored_sections(held)


def _share(engine: Engine, shared: SharedState, key: CacheKey, bundle: Bundle) -> Bundle:
    """Tell the other replicas what this bundle holds (for their ``base=``, ``report_usage``);
    an unreachable shared state costs that, never the bundle (the answer says so)."""
    held = Manifest(key.request_key, cache_table.held_sections(bundle), engine.commit)
    try:
        shared.save_manifest(bundle.bundle_id, held, cache_table.now_iso())
    except StoreError as exc:  # the answer says so, and its tokens count it
        error = str(exc)
        return replace(counted(bundle, field_tokens("state_error", error)), state_error=error)
    return bundle


def _fingerprint(conn: sqlite3.Connection) -> str:
    fingerprint = sync_state.index_fingerprint(conn)
    if fingerprint is None:
        raise IndexNotFoundError("the index is empty; build it with `briefd index` first")
    return fingerprint


def _persist(engine: Engine, key: CacheKey, bundle: Bundle, asked: _Resolved) -> None:
    """Store the new bundle and the hits counted since the last write. While another process
    holds the index (a reindex) or the disk is full, the bundle row waits in memory
    (:meth:`Store.defer`) and is written by a later flush: the caller gets its bundle now, and
    ``report_usage`` and ``base=`` recognise it meanwhile."""
    pending = engine.cache.take_pending_hits()
    request = asked.request
    task = request.task.strip()

    def save(conn: sqlite3.Connection) -> None:
        cache_table.save(conn, key, bundle, task, asked.scopes, asked.paths, request.max_tokens)

    try:
        with engine.store.write(wait_ms=CACHE_WAIT_MS, durable=False) as conn:
            save(conn)
            cache_table.add_hits(conn, pending)
    except StoreError:
        engine.cache.restore_pending_hits(pending)
        held = tuple(StoredSection(*section) for section in cache_table.held_sections(bundle))
        engine.store.defer(_unsaved(bundle.bundle_id), save, (key.request_key, held))


def _remembered(conn: sqlite3.Connection, store: Store, bundle_id: str) -> bool:
    """Whether the bundle's manifest is stored (or waits to be): ``report_usage`` and ``base=``
    recognise it."""
    return (
        cache_table.manifest(conn, bundle_id) is not None
        or unsaved_manifest(store, bundle_id) is not None
    )


def _remember(engine: Engine, key: CacheKey, bundle: Bundle) -> None:
    """Store the manifest alone (the bundle row is stored already); a busy index defers it."""
    sections = cache_table.held_sections(bundle)

    def save(conn: sqlite3.Connection) -> None:
        now = cache_table.now_iso()
        cache_table.save_manifest(conn, bundle.bundle_id, key.request_key, sections, now)

    try:
        with engine.store.write(wait_ms=CACHE_WAIT_MS, durable=False) as conn:
            save(conn)
    except StoreError:
        held = tuple(StoredSection(*section) for section in sections)
        engine.store.defer(_unsaved(bundle.bundle_id), save, (key.request_key, held))


def unsaved_manifest(store: Store, bundle_id: str) -> tuple[str, tuple[StoredSection, ...]] | None:
    """(request key, sections) of a bundle served but not yet written (see :func:`_persist`)."""
    held = store.deferred(_unsaved(bundle_id))
    return held if isinstance(held, tuple) else None


def _unsaved(bundle_id: str) -> str:
    return f"bundle:{bundle_id}"


def flush_hits(store: Store, cache: BundleCache) -> None:
    """Write the hits counted in memory and the writes the index could not take earlier
    (bundles, usage reports); a busy index keeps them for the next call."""
    with contextlib.suppress(StoreError):
        store.flush_deferred(CACHE_WAIT_MS)
    pending = cache.take_pending_hits()
    if not pending:
        return
    try:
        with store.write(wait_ms=CACHE_WAIT_MS, durable=False) as conn:
            cache_table.add_hits(conn, pending)
    except StoreError:
        cache.restore_pending_hits(pending)
