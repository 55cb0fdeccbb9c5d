"""The one in-process API under the CLI, REST, MCP, the hook and the dashboard: each method
delegates to the package owning the rule (ARCHITECTURE.md); it holds index, embedder, caches."""

from __future__ import annotations

import functools
import sqlite3
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from briefd.embeddings.base import Embedder
from briefd.model import DocumentView, IndexReport, LinkFindings, ScopeInfo, SearchResult
from briefd.recall import engine as recall_engine
from briefd.recall.confidence import Specificity, recall_ranking
from briefd.recall.engine import RecallRequest, RecallResult
from briefd.recall.ranking import Ranking
from briefd.retrieval import calibration
from briefd.retrieval.bm25 import Lexicon
from briefd.retrieval.governed import search_with_paths
from briefd.retrieval.search import SearchRequest, search, vectors_missing
from briefd.retrieval.semantic import SemanticIndex, follow
from briefd.retrieval.spelling import Speller
from briefd.settings import Settings
from briefd.sources.worktree import from_work_trees
from briefd.state import SessionMemory, SharedState, open_state
from briefd.store import activity, sync_state, views
from briefd.store.db import Store
from briefd.sync.runner import SyncRunner, Told
from briefd.team import activity as team_activity

# What a command needs is imported when it runs: `briefd search` never loads the indexer,
# bundles, the Atlassian client, proposals or the team reports (~450 ms of imports, measured
# with -X importtime; a CLI command pays them on every start).
if TYPE_CHECKING:
    from briefd.atlassian import Atlassian, IssueLookup
    from briefd.bundles import Bundle, BundleCacheStats, BundleRequest
    from briefd.bundles.cache import BundleCache
    from briefd.graph.suggest import Suggestions
    from briefd.ingest import Progress
    from briefd.proposals.model import Proposal, ProposalRequest
    from briefd.sync.runner import SyncSteps
    from briefd.sync.state import SyncReport, SyncStatus
    from briefd.team import gaps
    from briefd.team.drift import DriftReport
    from briefd.team.gaps import GapsReport, GapsRequest
    from briefd.team.usage import UsageReport


class _Unset:
    """Marker: no embedder was passed, so the configured one is used."""


UNSET = _Unset()


class Briefd(AbstractContextManager["Briefd"]):
    """Open with settings; use as a context manager or call :meth:`close`."""

    def __init__(self, settings: Settings, embedder: Embedder | _Unset | None = UNSET) -> None:
        """``embedder`` overrides the configured one (tests inject a fake; None: BM25 only)."""
        self.settings = settings
        self._store: Store | None = None
        self._state: SharedState | None = None
        self._embedder = embedder
        self._semantic: SemanticIndex | None = None
        self._speller = Speller()
        self._lexicon = Lexicon()
        self._specificity = Specificity()
        self._made = threading.Lock()  # guards the parts made on first use
        self._bundle_cache: BundleCache | None = None
        self.syncs = SyncRunner(self._run_sync)  # the coalesced syncs (K3)

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._lexicon.close()
        if self._store is not None:
            self.flush_bundle_hits()
            self._store.close()
            self._store = None
        if self._state is not None:
            self._state.close()
            self._state = None

    @property
    def embedder(self) -> Embedder | None:
        """The configured embedder, created on first use (None: embeddings are off)."""
        if isinstance(self._embedder, _Unset):
            from briefd.embeddings.registry import create_embedder

            self._embedder = create_embedder(self.settings, deferred=True)
        return self._embedder

    @property
    def _bundles(self) -> BundleCache:
        """This process's bundle cache (B6), made by the first bundle."""
        with self._made:
            if self._bundle_cache is None:
                from briefd.bundles.cache import BundleCache

                self._bundle_cache = BundleCache(self.settings.bundles.cache_entries)
            return self._bundle_cache

    @property
    def store(self) -> Store:
        if self._store is None:
            self._store = Store.open(self.settings.db, source=self.settings.source)
        return self._store

    @property
    def state(self) -> SharedState:
        """Query log, usage, proposals, sessions, manifests: the index's, or shared (replicas)."""
        if self._state is None:
            self._state = open_state(self.settings, lambda: self.store)
        return self._state

    @property
    def semantic(self) -> SemanticIndex | None:
        """The vector side of search, or None when embeddings are off."""
        if self._semantic is None and self.embedder is not None:
            v, words = self.settings.vectors, self.settings.embeddings.window_words
            self._semantic = SemanticIndex(self.embedder, v.blas_threads, v.ann_threshold, words)
        return self._semantic

    def index(
        self, source: Path | None = None, rebuild: bool = False, progress: Progress | None = None
    ) -> IndexReport:
        """Index ``source`` (default: the configured one) incrementally, or from scratch."""
        from briefd.bundles.cache import prune as prune_bundles
        from briefd.ingest import index_configured, no_progress
        from briefd.team import upkeep

        self._store, report = index_configured(
            self.settings, self._store, source, rebuild, progress or no_progress, self.embedder
        )
        if self._semantic is not None:
            self._semantic.invalidate()
        self._speller.invalidate()
        self._lexicon.invalidate()
        if self._bundle_cache is not None:
            self._bundle_cache.clear()  # cached bundles of other knowledge states are never hit again
        self._specificity.calibration(self.store, self.semantic)  # recall's (I8), stored now
        with self.store.write() as conn:
            prune_bundles(conn, report.fingerprint, self.settings.bundles.manifest_days)
        upkeep.after_index(self.store, self.settings, self.state)  # log retention (T6), drift
        return report

    def reindex(self, source: Path | None = None, rebuild: bool = False) -> IndexReport:
        """:meth:`index` on a connection of its own (sync, rebuild: no lock), then :func:`follow`."""
        with type(self)(self.settings, embedder=self.embedder) as worker:
            report = worker.index(source, rebuild)
        follow(self.store, self._semantic, self._lexicon, self._speller)
        return report

    def rebuild(self, source: Path | None = None) -> IndexReport:
        """:meth:`reindex` from scratch, never while a sync resets the clone."""
        from briefd.sources.knowledge import sync_lock

        with sync_lock(self.settings):
            return self.reindex(source, rebuild=True)

    def search(self, request: SearchRequest) -> SearchResult:
        """Ranked sections (R1–R6); with ``request.paths`` the governing documents lead (R5,
        see :mod:`briefd.retrieval.governed`), even when the gate finds the query off-topic."""
        request = replace(request, paths=from_work_trees(request.paths))
        with self.store.read() as conn:
            return search_with_paths(
                conn, request, self.settings.search, self.settings.default_scopes, self._run
            )

    def _run(self, conn: sqlite3.Connection, request: SearchRequest) -> SearchResult:
        semantic, s = None if request.mode == "bm25" else self.semantic, self.settings
        args = (s.search, s.default_scopes, semantic, self._speller, self._lexicon)
        return search(conn, request, *args)

    @functools.cached_property
    def atlassian(self) -> Atlassian:
        """Live Confluence and Jira lookups (A1, A2); nothing is enabled unless configured."""
        from briefd.atlassian import Atlassian

        return Atlassian(self.settings)

    def compile_bundle(self, request: BundleRequest, lookup: IssueLookup | None = None) -> Bundle:
        """The smallest sufficient context for a task or around ``request.target`` (B1–B8); an
        issue key is fetched by ``lookup`` (default: from Jira now, as the configured account)."""
        from briefd.bundles.compile import Engine, compile_bundle
        from briefd.replicas import agree

        semantic = self.semantic
        mode = self.settings.search.mode if semantic is not None else "bm25"
        model = semantic.embedder.model_id if semantic is not None and mode != "bm25" else "none"
        lookup = lookup or self.atlassian.issue_lookup()
        engine = Engine(self.store, self.settings, self._run, mode, model, self._bundles, lookup)
        engine = replace(engine, fallback=lambda conn: vectors_missing(conn, semantic))
        request = replace(request, paths=from_work_trees(request.paths))
        return compile_bundle(agree.across_replicas(engine, self.state), request)

    def flush_bundle_hits(self) -> None:
        """Write the bundle cache hits counted in memory (a busy index keeps them for later)."""
        if self._store is not None and self._bundle_cache is not None:
            from briefd.bundles.compile import flush_hits

            flush_hits(self._store, self._bundle_cache)

    def bundle_cache_stats(self) -> BundleCacheStats:
        """Hits and misses of this process's bundle cache, and its LRU size."""
        return self._bundles.stats()

    def recall(self, request: RecallRequest, memory: SessionMemory | None = None) -> RecallResult:
        """Prompt-time recall (I8, :mod:`briefd.recall`); ``memory``: default the state's."""
        requested = request.mode or self.settings.recall.mode
        with self.store.read() as conn:
            mode = recall_engine.ready_mode(conn, requested, self.semantic)
        hybrid = self._recall_search if mode == "hybrid" and self.semantic is not None else None
        given = memory or self.state
        return recall_engine.answer(self.store, request, self.settings, hybrid, given)

    def _recall_search(self, prompt: str, scopes: tuple[str, ...], k: int, related: int) -> Ranking:
        request = SearchRequest(prompt, scopes=scopes, top_k=k, mode="hybrid", related=related)
        hits = self.search(request)
        strong = self.settings.recall.strong_z
        z = self._specificity.z(self.store, self.semantic, prompt, scopes, strong)
        return recall_ranking(hits, z)

    def gate_calibration(self) -> dict[str, dict[str, object]]:
        """Per embedding model, the relevance gate's knobs fitted to this index (R4)."""
        with self.store.read() as conn:
            return calibration.stored(conn)

    def scopes(self) -> list[ScopeInfo]:
        with self.store.read() as conn:
            return views.scope_counts(conn)

    def documents(self, scopes: Sequence[str] | None = None) -> list[views.DocumentSummary]:
        """Indexed documents by scope, then path (``scopes``: only those; default: all)."""
        with self.store.read() as conn:
            return views.document_list(conn, scopes)

    def document(
        self, path: str, scopes: Sequence[str] | None = None, *, scoped: bool = False
    ) -> DocumentView:
        """A document with its sections, links and backlinks (K5), as :func:`views.visible`
        sees it: ``scoped`` callers (REST, MCP) are held to the default scopes."""
        with self.store.read() as conn:
            return views.visible(conn, path, scopes, scoped, self.settings.default_scopes)

    def link_findings(self) -> LinkFindings:
        from briefd.team import suggestions

        with self.store.read() as conn:
            return suggestions.link_findings(conn, self.settings)

    def last_report(self) -> dict[str, object]:
        with self.store.read() as conn:
            return sync_state.index_report(conn)

    def sync(self) -> SyncReport:
        """Fetch, reindex, refresh pull requests (K3; :mod:`briefd.sync.runner`); never raises."""
        return self.syncs.run()

    def trigger_sync(self, told: Told | None = None) -> bool:
        """Start a sync in the background (webhook, dashboard); coalesced like :meth:`sync`."""
        return self.syncs.trigger(told)

    def sync_status(self) -> SyncStatus:
        from briefd.sync.runner import status

        return status(self._sync_steps(), self.syncs)

    def _run_sync(self) -> SyncReport:
        from briefd.sync.runner import run_sync

        return run_sync(self._sync_steps())

    def _sync_steps(self) -> SyncSteps:
        from briefd.replicas import agree

        return agree.sync_steps(self.settings, self.reindex, lambda: self.store, lambda: self.state)

    def propose_update(self, request: ProposalRequest) -> Proposal:
        """A knowledge change as a one-commit branch (T1; :mod:`briefd.proposals.service`)."""
        from briefd.proposals.service import propose

        return propose(self.settings, request, lambda: self.state, lambda: self.store)

    def proposals(self, status: str | None = None) -> list[Proposal]:
        """Stored proposals, newest first (optionally only those with ``status``)."""
        return self.state.proposals(status)

    def report_usage(
        self, bundle_id: str, useful_chunk_ids: Sequence[str] = (), client: str | None = None
    ) -> activity.UsageReceipt:
        """Store which sections of a bundle were useful (T2; see :mod:`briefd.team.usage`)."""
        from briefd.team import usage

        args = (self.settings, bundle_id, useful_chunk_ids, client)
        return usage.report_usage(self.store, self.state, *args)

    def suggest_links(
        self, doc_path: str | None = None, limit: int = 20, scopes: Sequence[str] | None = None
    ) -> Suggestions:
        """Unlinked mentions and broken links in ``scopes`` and how many were left out (T5)."""
        from briefd.team import suggestions

        return suggestions.suggest_links_apart(self.settings, doc_path, limit, scopes)

    def dismiss_link_suggestion(
        self, doc_path: str, target: str, scopes: Sequence[str] | None = None
    ) -> None:
        """Stop suggesting ``target`` for ``doc_path`` (a document in ``scopes``)."""
        from briefd.team import suggestions

        suggestions.dismiss(self.store, self.settings, doc_path, target, scopes)

    def log_queries(self, entries: Sequence[activity.QueryLogEntry]) -> None:
        """Append searches and bundles to the query log (T3); see :mod:`briefd.team.activity`."""
        team_activity.log_queries(self.store, entries, self.settings.activity, self.state)

    def gaps(self, request: GapsRequest, lock: gaps.Guard = None) -> GapsReport:
        """Queries the knowledge answers weakly or not at all (T3; see :mod:`briefd.team.gaps`)."""
        from briefd.team import gaps

        return gaps.gaps_report(self.settings, request, lambda: self.embedder, self.state, lock)

    def drift(self, refresh: bool = False) -> DriftReport:
        """Documents whose governed code changed after them (T4); ``refresh`` reads code first."""
        from briefd.team import drift

        return drift.drift_report(self.settings, refresh)

    def usage(self, since: str = "30d", limit: int = 20, offset: int = 0) -> UsageReport:
        """What is served, how often, by which surface, reported useful, never served (T6)."""
        from briefd.team import usage

        return usage.usage_report(self.settings, since, limit, self.state, offset)

    def overview(self) -> dict[str, object]:
        """Index size, last index run, sync sources, proposal and usage counts (I2 stats)."""
        return team_activity.overview(self.store, self.state)

    def counters(self) -> dict[tuple[str, str], float]:
        """Persisted service counters (I4) keyed by (name, labels JSON)."""
        return team_activity.counters(self.store)

    def save_counters(self, values: dict[tuple[str, str], float], reset: bool = False) -> None:
        team_activity.save_counters(self.store, values, reset)
