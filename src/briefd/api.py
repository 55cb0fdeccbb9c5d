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
from briefd.bundles.cache import prune as prune_bundles
from briefd.bundles.compile import Engine, compile_bundle, flush_hits
from briefd.embeddings.base import Embedder
from briefd.errors import NotFoundError, SourceError, StoreError
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
from briefd.retrieval.search import SearchRequest, resolve_scopes, search
from briefd.retrieval.semantic import SemanticIndex
from briefd.retrieval.spelling import Speller
from briefd.settings import Settings
from briefd.store import activity
from briefd.store import documents as docs_table
from briefd.store.db import Store
from briefd.sync.history import document_history
from briefd.sync.runner import SyncRunner, run_sync
from briefd.sync.runner import status as sync_status
from briefd.sync.source import open_clone
from briefd.sync.state import SyncReport, SyncStatus


class _Unset:
    """Marker: no embedder was passed, so the configured one is used."""


UNSET = _Unset()
ACTIVITY_WAIT_MS = 200  # query log and counters: the service keeps them and retries later


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
        try:
            return Store.open(self.settings.db, create=True)
        except StoreError:
            if not rebuild:
                raise
        for suffix in ("", "-wal", "-shm"):  # unusable file: --rebuild starts over
            Path(str(self.settings.db) + suffix).unlink(missing_ok=True)
        return Store.open(self.settings.db, create=True)

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

    def search(self, request: SearchRequest) -> SearchResult:
        semantic = None if request.mode == "bm25" else self.semantic
        with self.store.read() as conn:
            return search(
                conn,
                request,
                self.settings.search,
                self.settings.default_scopes,
                semantic,
                self._speller,
                self._lexicon,
            )

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

    def document(self, path: str, scopes: tuple[str, ...] | None = None) -> DocumentView:
        path = path.strip().removeprefix("./")
        with self.store.read() as conn:
            allowed = resolve_scopes(conn, scopes, self.settings.default_scopes) if scopes else None
            row = conn.execute("SELECT * FROM documents WHERE path = ?", (path,)).fetchone()
            if row is None or (allowed is not None and row["scope"] not in allowed):
                raise NotFoundError(_not_found(conn, path))
            chunks = conn.execute(
                "SELECT * FROM chunks WHERE doc_id = ? ORDER BY position", (row["id"],)
            ).fetchall()
            links = docs_table.stored_links(conn, "WHERE doc_id = ?", (row["id"],))
            backlinks = docs_table.stored_links(
                conn, "WHERE target_path = ? AND source_path != ?", (path, path)
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
        """Store which chunks of a bundle were useful (T2; no ranking effect yet)."""
        return activity.report_usage(self.store, bundle_id, useful_chunk_ids, client)

    def suggest_links(self, doc_path: str | None = None, limit: int = 20) -> list[LinkSuggestion]:
        """Unlinked mentions of other documents and broken links, dismissed ones left out (T5)."""
        broken = self.link_findings().broken
        with self.store.read() as conn:
            return activity.suggest_links(conn, broken, doc_path, limit)

    def dismiss_link_suggestion(self, doc_path: str, target: str) -> None:
        with self.store.write() as conn:
            activity.dismiss_link(conn, doc_path, target, activity.now_iso())

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


def _not_found(conn: sqlite3.Connection, path: str) -> str:
    paths = [r[0] for r in conn.execute("SELECT path FROM documents")]
    close = difflib.get_close_matches(path, paths, n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]}?" if close else "; list documents with `briefd scopes`"
    return f"no document '{path}' in the index (or outside the requested scopes){hint}"
