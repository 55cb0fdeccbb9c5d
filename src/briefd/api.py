"""The one in-process API. The CLI (and later REST, MCP, the hook, the dashboard) are thin
front ends over :class:`Briefd`; none of them talks to another over HTTP."""

from __future__ import annotations

import difflib
import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from briefd.bundles import Bundle, BundleCacheStats, BundleRequest
from briefd.bundles.cache import BundleCache
from briefd.bundles.cache import manifest as bundle_manifest
from briefd.bundles.cache import prune as prune_bundles
from briefd.bundles.compile import Engine, compile_bundle, flush_hits
from briefd.embeddings.base import Embedder
from briefd.errors import (
    ForeignDatabaseError,
    NotFoundError,
    QueryError,
    SourceError,
    StoreError,
)
from briefd.graph import suggest
from briefd.graph.resolve import Catalog, findings
from briefd.graph.suggest import LinkSuggestion
from briefd.ingest import Progress, index_source, no_progress
from briefd.model import DocumentView, IndexReport, LinkFindings, ScopeInfo, SearchResult
from briefd.proposals import records as proposal_records
from briefd.proposals.model import Proposal, ProposalRequest
from briefd.proposals.service import propose
from briefd.recall import engine as recall_engine
from briefd.recall.engine import RecallRequest, RecallResult
from briefd.retrieval.bm25 import Lexicon
from briefd.retrieval.governed import governed_first
from briefd.retrieval.search import RANKING_VERSION, SearchRequest, search
from briefd.retrieval.semantic import SemanticIndex
from briefd.retrieval.spelling import Speller
from briefd.settings import Settings
from briefd.sources.refs import normalise_paths
from briefd.sources.scan import scope_of
from briefd.store import activity
from briefd.store import documents as docs_table
from briefd.store.db import Store, is_briefd_or_sqlite
from briefd.store.scopes import known_scopes, resolve_scopes
from briefd.sync.history import document_history
from briefd.sync.runner import SyncRunner, run_sync
from briefd.sync.runner import status as sync_status
from briefd.sync.source import open_clone
from briefd.sync.state import SyncReport, SyncStatus
from briefd.text import query_terms


class _Unset:
    """Marker: no embedder was passed, so the configured one is used."""


UNSET = _Unset()
ACTIVITY_WAIT_MS = 200  # query log and counters: the service keeps them and retries later
MAX_LISTED = 10  # chunk ids named in a report_usage error
ALL_SUGGESTIONS = 1_000_000  # suggestions are filtered to the visible documents, then capped


class Briefd:
    """Open with settings; use as a context manager or call :meth:`close`."""

    def __init__(self, settings: Settings, embedder: Embedder | _Unset | None = UNSET) -> None:
        """``embedder`` overrides the configured one (tests inject a fake; None: BM25 only)."""
        self.settings = settings
        self._store: Store | None = None
        self._embedder = embedder
        self._semantic: SemanticIndex | None = None
        self._speller = Speller()
        self._lexicon = Lexicon()
        self._bundles = BundleCache(settings.bundles.cache_entries)
        self._sync_runner = SyncRunner(lambda: run_sync(self))

    def __enter__(self) -> Briefd:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._store is not None:
            self.flush_bundle_hits()
            self._store.close()
            self._store = None

    @property
    def embedder(self) -> Embedder | None:
        """The configured embedder, created on first use (None: embeddings are off)."""
        if isinstance(self._embedder, _Unset):
            from briefd.embeddings.registry import create_embedder

            self._embedder = create_embedder(self.settings)
        return self._embedder

    @property
    def store(self) -> Store:
        if self._store is None:
            self._store = Store.open(self.settings.db)
        return self._store

    # -- indexing ---------------------------------------------------------------------------

    def index(
        self, source: Path | None = None, rebuild: bool = False, progress: Progress = no_progress
    ) -> IndexReport:
        """Index ``source`` (default: the configured one) incrementally, or from scratch."""
        root = source or self.settings.source
        if root is None and self.settings.sync.remote:
            root = open_clone(self.settings)  # a git URL source: cloned on first use
        if root is None:
            raise SourceError(
                "no knowledge source configured; pass --source DIR, set 'source:' in "
                "briefd.yaml, or set BRIEFD_SOURCE"
            )
        if not root.is_dir():
            raise SourceError(f"knowledge source {root} is not a directory; pass --source DIR")
        if self._store is None:
            self._store = self._open_for_writing(rebuild)
        history = document_history(root, self.settings.sync.git_timeout)
        report = index_source(
            self._store, root, self.settings, rebuild, progress, self.embedder, history
        )
        if self._semantic is not None:
            self._semantic.invalidate()
        self._speller.invalidate()
        self._lexicon.invalidate()
        self._prune_bundles(report.fingerprint)
        return report

    def _prune_bundles(self, fingerprint: str) -> None:
        """Cached bundles of other knowledge states can never be hit again (B3)."""
        self._bundles.clear()
        with self.store.write() as conn:
            prune_bundles(conn, fingerprint, self.settings.bundles.manifest_days)

    def _open_for_writing(self, rebuild: bool) -> Store:
        """The index to write; with ``rebuild``, an SQLite file that is damaged inside is
        replaced (a file that is not SQLite, or another application's database, never is)."""
        db = self.settings.db
        try:
            store = Store.open(db, create=True)
        except ForeignDatabaseError:
            raise
        except StoreError:
            if not rebuild or not is_briefd_or_sqlite(db):
                raise
            return self._start_over(db)
        if rebuild and not store.healthy():
            store.close()
            return self._start_over(db)
        return store

    @staticmethod
    def _start_over(db: Path) -> Store:
        for suffix in ("", "-wal", "-shm"):  # unusable file: --rebuild starts over
            Path(str(db) + suffix).unlink(missing_ok=True)
        return Store.open(db, create=True)

    # -- reading ----------------------------------------------------------------------------

    @property
    def semantic(self) -> SemanticIndex | None:
        """The vector side of search, or None when embeddings are off."""
        if self._semantic is None and self.embedder is not None:
            vectors = self.settings.vectors
            self._semantic = SemanticIndex(
                self.embedder, vectors.blas_threads, vectors.ann_threshold
            )
        return self._semantic

    def search(self, request: SearchRequest, paths: Sequence[str] = ()) -> SearchResult:
        """Ranked sections (R1–R6). With ``paths`` (code paths a task touches, R5) the best
        section of each document whose ``refs`` cover one of them leads, then the other hits,
        within ``top_k``. Paths are evidence of their own: those sections lead even when the
        relevance gate finds the query off-topic, as they head a bundle (B1 tier 2)."""
        semantic = None if request.mode == "bm25" else self.semantic
        wanted = normalise_paths(paths)
        with self.store.read() as conn:
            text_mode = (request.query_mode or self.settings.search.query_mode) == "text"
            if wanted and text_mode and not query_terms(request.query):  # "what breaks here?"
                scopes = resolve_scopes(conn, request.scopes, self.settings.default_scopes)
                result = SearchResult(request.query, "bm25", scopes, (), RANKING_VERSION, 0.0)
            else:
                result = search(
                    conn,
                    request,
                    self.settings.search,
                    self.settings.default_scopes,
                    semantic,
                    self._speller,
                    self._lexicon,
                )
            if not wanted:
                return result
            return governed_first(conn, result, request, wanted, self.settings.search)

    def compile_bundle(self, request: BundleRequest) -> Bundle:
        """The smallest sufficient context for a task, inside ``max_tokens`` (B1–B5)."""
        semantic = self.semantic
        mode = self.settings.search.mode if semantic is not None else "bm25"
        model = semantic.embedder.model_id if semantic is not None and mode != "bm25" else "none"

        def run(conn: sqlite3.Connection, search_request: SearchRequest) -> SearchResult:
            return search(
                conn,
                search_request,
                self.settings.search,
                self.settings.default_scopes,
                semantic,
                self._speller,
                self._lexicon,
            )

        engine = Engine(self.store, self.settings, run, mode, model, self._bundles)
        return compile_bundle(engine, request)

    def flush_bundle_hits(self) -> None:
        """Add the bundle cache hits counted in memory to the ``bundles`` rows (a busy index
        keeps them for the next call)."""
        if self._store is not None:
            flush_hits(self._store, self._bundles)

    def bundle_cache_stats(self) -> BundleCacheStats:
        """Hits and misses of this process's bundle cache, and its LRU size."""
        return self._bundles.stats()

    def recall(self, request: RecallRequest) -> RecallResult:
        """Prompt-time recall (I8): the sections to inject for one prompt, none the session
        already has, within the recall budget; hybrid (semantic gate) when the index has
        vectors, else BM25 behind the lexical evidence gate (``briefd.recall.evidence``)."""
        requested = request.mode or self.settings.recall.mode
        with self.store.read() as conn:
            mode = recall_engine.choose_mode(conn, requested, self.embedder is not None)
        hybrid = self._recall_search if mode == "hybrid" and self.semantic is not None else None
        return recall_engine.answer(self.store, request, self.settings, hybrid)

    def _recall_search(
        self, prompt: str, scopes: tuple[str, ...], top_k: int
    ) -> tuple[list[tuple[str, float]], str]:
        request = SearchRequest(prompt, scopes=scopes, top_k=top_k, mode="hybrid", related=0)
        result = self.search(request)
        return [(hit.chunk_id, hit.score) for hit in result.hits], result.gate

    def scopes(self) -> list[ScopeInfo]:
        with self.store.read() as conn:
            rows = conn.execute(
                "SELECT d.scope, count(DISTINCT d.id) AS docs, count(c.rowid) AS chunks "
                "FROM documents d LEFT JOIN chunks c ON c.doc_id = d.id "
                "GROUP BY d.scope ORDER BY d.scope"
            )
            return [ScopeInfo(r["scope"], r["docs"], r["chunks"]) for r in rows]

    def document(
        self, path: str, scopes: Sequence[str] | None = None, *, scoped: bool = False
    ) -> DocumentView:
        """A document with its sections, links and backlinks (K5). Only documents in
        ``scopes`` (``all``: every scope) are visible; without ``scopes`` a ``scoped`` call
        (REST and MCP, serving agents) sees the configured default scopes, as search does, and
        an unscoped one (``briefd doc`` on the user's own machine) every document. Backlinks
        from documents that are not visible are left out."""
        path = path.strip().removeprefix("./")
        with self.store.read() as conn:
            allowed = self._visible_scopes(conn, scopes, scoped)
            row = conn.execute("SELECT * FROM documents WHERE path = ?", (path,)).fetchone()
            if row is None or (allowed is not None and row["scope"] not in allowed):
                raise NotFoundError(_not_found(conn, path, allowed))
            chunks = conn.execute(
                "SELECT * FROM chunks WHERE doc_id = ? ORDER BY position", (row["id"],)
            ).fetchall()
            links = docs_table.stored_links(conn, "WHERE doc_id = ?", (row["id"],))
            where, args = _from_scopes(allowed)
            backlinks = docs_table.stored_links(
                conn, f"WHERE target_path = ? AND source_path != ?{where}", (path, path, *args)
            )
            return DocumentView(
                path=row["path"],
                scope=row["scope"],
                title=row["title"],
                front_matter=docs_table.front_matter_from_row(row),
                body=row["body"],
                updated_at=row["updated_at"] or row["indexed_at"],
                chunks=tuple(docs_table.chunk_from_row(c, path) for c in chunks),
                links=tuple(r for _, r in links),
                backlinks=tuple(r for _, r in backlinks),
                problems=tuple(json.loads(row["problems"])),
            )

    def _visible_scopes(
        self, conn: sqlite3.Connection, scopes: Sequence[str] | None, scoped: bool
    ) -> tuple[str, ...] | None:
        """The scopes a request may read, resolved as search resolves them; None: all."""
        if not scopes and not scoped:
            return None
        return resolve_scopes(conn, scopes or None, self.settings.default_scopes)

    def link_findings(self) -> LinkFindings:
        with self.store.read() as conn:
            rows = conn.execute("SELECT path, headings FROM documents").fetchall()
            catalog = Catalog.build(
                (r["path"], docs_table.headings_from_json(r["headings"])) for r in rows
            )
            resolved = [r for _, r in docs_table.stored_links(conn)]
            return findings(resolved, catalog)

    def last_report(self) -> dict[str, object]:
        with self.store.read() as conn:
            row = conn.execute(
                "SELECT last_report FROM sync_state WHERE source = 'index'"
            ).fetchone()
            return dict(json.loads(row["last_report"])) if row else {}

    # -- git team flow (K3, T1) -----------------------------------------------------------

    def sync(self) -> SyncReport:
        """Fetch the source (an owned clone is reset hard to the remote branch), reindex what
        changed, refresh open pull requests. Blocking; concurrent callers share one run. A
        failure is in the report (and ``sync_status``), never raised: the last good index
        keeps answering."""
        return self._sync_runner.run()

    def trigger_sync(self) -> bool:
        """Start a sync in the background (webhook, dashboard); coalesced like :meth:`sync`."""
        return self._sync_runner.trigger()

    def sync_status(self) -> SyncStatus:
        return sync_status(self, self._sync_runner)

    def propose_update(self, request: ProposalRequest) -> Proposal:
        """Push ``request`` as branch ``briefd/proposal-<id>`` with one commit (and open a pull
        request when a forge is configured); raises :class:`ProposalError`."""
        return propose(self.settings, request)

    def proposals(self, status: str | None = None) -> list[Proposal]:
        """Stored proposals, newest first (optionally only those with ``status``)."""
        with self.store.read() as conn:
            return proposal_records.all_proposals(conn, status)

    # -- service activity (T2, T3, T5, I4) -------------------------------------------------

    def report_usage(
        self, bundle_id: str, useful_chunk_ids: Sequence[str] = (), client: str | None = None
    ) -> activity.UsageReceipt:
        """Store which sections of a bundle were useful (T2; no ranking effect yet). The bundle
        must be one this index issued (remembered ``bundles.manifest_days``) and every chunk id
        one of its sections; otherwise nothing is stored (:class:`NotFoundError`,
        :class:`QueryError`)."""
        if bundle_id.strip():
            self._check_usage(bundle_id.strip(), useful_chunk_ids)
        return activity.report_usage(self.store, bundle_id, useful_chunk_ids, client)

    def _check_usage(self, bundle_id: str, useful_chunk_ids: Sequence[str]) -> None:
        with self.store.read() as conn:
            held = bundle_manifest(conn, bundle_id)
        if held is None:
            raise NotFoundError(
                f"no bundle '{bundle_id}' was issued by this index (bundles are remembered "
                f"for {self.settings.bundles.manifest_days} days); pass the bundle_id that "
                "compile_bundle (POST /api/bundle, `briefd bundle`) returned"
            )
        sections = [s.chunk_id for s in held[1]]
        given = dict.fromkeys(c.strip() for c in useful_chunk_ids if c.strip())
        strangers = [c for c in given if c not in sections]
        if strangers:
            listing = ", ".join(sections[:MAX_LISTED]) + (
                ", …" if len(sections) > MAX_LISTED else ""
            )
            raise QueryError(
                f"not sections of bundle {bundle_id}: {', '.join(strangers[:MAX_LISTED])}; "
                f"nothing was stored. Report chunk ids of its sections: {listing or 'none'}"
            )

    def suggest_links(
        self, doc_path: str | None = None, limit: int = 20, scopes: Sequence[str] | None = None
    ) -> list[LinkSuggestion]:
        """Unlinked mentions of other documents and broken links, dismissed ones left out (T5),
        among the documents in ``scopes`` (default: the configured default scopes): a
        suggestion never names a document outside them."""
        if limit < 1:
            raise QueryError(f"limit must be at least 1, got {limit}")
        broken = self.link_findings().broken
        with self.store.read() as conn:
            visible = self._visible_paths(conn, scopes, doc_path)
            found = activity.suggest_links(conn, broken, doc_path, ALL_SUGGESTIONS)
        return suggest.visible(found, visible)[:limit]

    def dismiss_link_suggestion(
        self, doc_path: str, target: str, scopes: Sequence[str] | None = None
    ) -> None:
        """Stop suggesting ``target`` for ``doc_path``, a document in ``scopes`` (default: the
        default scopes)."""
        with self.store.read() as conn:
            self._visible_paths(conn, scopes, doc_path)
        with self.store.write() as conn:
            activity.dismiss_link(conn, doc_path, target, activity.now_iso())

    def _visible_paths(
        self, conn: sqlite3.Connection, scopes: Sequence[str] | None, doc_path: str | None
    ) -> set[str]:
        """Paths of the documents in ``scopes`` (default: the default scopes); raises
        :class:`NotFoundError` when ``doc_path`` is given and is not one of them."""
        allowed = resolve_scopes(conn, scopes, self.settings.default_scopes)
        visible = set(_paths_in(conn, allowed))
        if doc_path is not None and doc_path not in visible:
            raise NotFoundError(_not_found(conn, doc_path, allowed))
        return visible

    def log_queries(self, entries: Sequence[activity.QueryLogEntry]) -> None:
        """Append searches and bundles to the query log (the gaps report reads it, T3)."""
        if entries:  # kept by the caller and retried when the index is busy
            with self.store.write(wait_ms=ACTIVITY_WAIT_MS, durable=False) as conn:
                activity.save_queries(conn, entries)

    def recent_queries(self, limit: int = 100) -> list[activity.QueryLogEntry]:
        with self.store.read() as conn:
            return activity.recent_queries(conn, limit)

    def overview(self) -> dict[str, object]:
        """Index size, last index run, sync sources, proposal and usage counts (I2 stats)."""
        with self.store.read() as conn:
            return activity.overview(conn)

    def counters(self) -> dict[tuple[str, str], float]:
        """Persisted service counters (I4) keyed by (name, labels JSON)."""
        with self.store.read() as conn:
            return activity.load_counters(conn)

    def save_counters(self, values: dict[tuple[str, str], float], reset: bool = False) -> None:
        with self.store.write(wait_ms=None if reset else ACTIVITY_WAIT_MS) as conn:
            activity.store_counters(conn, values, replace=reset)
            if reset:
                activity.mark_counters_reset(conn, activity.now_iso())


def _from_scopes(allowed: Sequence[str] | None) -> tuple[str, tuple[str, ...]]:
    """A condition on a row's ``doc_id`` (and its arguments): its document is in ``allowed``
    (None: no condition)."""
    if allowed is None:
        return "", ()
    marks = ", ".join("?" * len(allowed))
    return f" AND doc_id IN (SELECT id FROM documents WHERE scope IN ({marks}))", tuple(allowed)


def _paths_in(conn: sqlite3.Connection, allowed: Sequence[str] | None) -> list[str]:
    """Paths of the documents in ``allowed`` (None: every document)."""
    if allowed is None:
        return [r[0] for r in conn.execute("SELECT path FROM documents ORDER BY path")]
    marks = ", ".join("?" * len(allowed))
    rows = conn.execute(
        f"SELECT path FROM documents WHERE scope IN ({marks}) ORDER BY path", tuple(allowed)
    )
    return [r[0] for r in rows]


def _not_found(conn: sqlite3.Connection, path: str, allowed: Sequence[str] | None) -> str:
    """Why ``path`` is not served, naming only documents in ``allowed`` (None: every scope)."""
    close = difflib.get_close_matches(path, _paths_in(conn, allowed), n=1, cutoff=0.5)
    guess = f"; did you mean {close[0]}?" if close else ""
    if allowed is None:
        hint = guess or "; list documents with `briefd scopes`"
        return f"no document '{path}' in the index (or outside the requested scopes){hint}"
    scope = scope_of(path)
    if scope is not None and scope not in allowed and scope in known_scopes(conn):
        guess = f"; scope '{scope}' is not requested: add it to scopes (or use 'all') to read it"
    hint = guess or "; paths are relative to the repository root, e.g. domain/glossary.md"
    return f"no document '{path}' in scopes {', '.join(allowed) or '(none indexed)'}{hint}"
