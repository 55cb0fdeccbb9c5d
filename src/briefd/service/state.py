"""What every route and tool shares: the one :class:`Briefd`, the lock that serialises calls into
it (one SQLite connection), the metrics, the pending query log and the admin jobs; and the
operations both REST and MCP serve with bookkeeping (search, bundles, documents), written once
so the adapters stay thin."""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from briefd.api import Briefd
from briefd.atlassian import Account
from briefd.bundles import Bundle, BundleRequest
from briefd.bundles.collect import retrieval_query
from briefd.bundles.compile import issue_share
from briefd.bundles.wire import response
from briefd.errors import BriefdError, IndexNotFoundError, StoreError
from briefd.graph.suggest import Suggestions
from briefd.model import DocumentView, LinkFindings, SearchResult
from briefd.proposals.model import Proposal
from briefd.retrieval.candidates import prefetch
from briefd.retrieval.search import SearchRequest
from briefd.retrieval.semantic import serving
from briefd.service.config import ServiceConfig
from briefd.service.docpath import checked_doc_path, ensure_inside, within_source
from briefd.service.documents import DocumentOut, document_out, fields_tokens, link_costs
from briefd.service.logwrites import LogWrites
from briefd.service.metrics import CACHE, DURATION, INVALID, REQUESTS, TOKENS, Metrics
from briefd.service.reading import Part, read_within
from briefd.service.refill import Refill
from briefd.service.schemas import (
    BundleOut,
    ProposalOut,
    SearchOut,
    proposal_out,
    search_out,
)
from briefd.sources.refs import normalise_paths
from briefd.store.activity import QueryLogEntry
from briefd.store.db import Reopened, content_version
from briefd.store.reloads import Reloads
from briefd.store.scopes import resolve_scopes
from briefd.store.supersession import superseded_by, superseders
from briefd.sync.webhook import Deliveries
from briefd.team.suggestions import ALL_SUGGESTIONS as EVERY
from briefd.tokens import count_tokens

T = TypeVar("T")
# A query up to this long (~120 tokens, ~60 ms to embed on 2 cores) is embedded while the
# search holds the lock, beside its lexical part; a longer one before the lock is taken.
OVERLAP_CHARS = 500
WARM_UP = SearchRequest("warm up the index", scopes=("all",), related=0)  # loads what a query would

log = logging.getLogger(__name__)
BEING_BUILT = (
    "the index is being built for the first time: briefd answers from it once it is done "
    "(`indexed …` on its stderr); try again in a minute"
)
# The client the dashboard's searches name: a person reading, not an agent served — no tokens
# served, and nothing in the query log (so neither in gaps, usage nor the daily charts). Only
# from the dashboard's page itself (see :func:`dashboard_search`): any other caller naming it is
# booked as any client is, so an agent cannot keep its searches out of the team's reports.
DASHBOARD = "dashboard"


@dataclass
class Job:
    """A background admin action (rebuild) and how it ended."""

    name: str
    started_at: str
    finished_at: str | None = None
    error: str | None = None
    summary: dict[str, object] = field(default_factory=dict)

    @property
    def running(self) -> bool:
        return self.finished_at is None


@dataclass(frozen=True, slots=True)
class Caller:
    """Who asks, for the counters and the query log: the surface (``rest``, ``mcp``), the
    operation's name there, and the client the request names (None: unnamed)."""

    surface: str
    name: str
    client: str | None = None
    account: Account | None = None  # Atlassian account from the request's headers (A1, A2)
    head: bool = False  # a HEAD answered as a GET: it serves nobody, so counts as a request only
    dashboard: bool = False  # the dashboard page's own search (dashboard_search): likewise


def dashboard_search(client: str | None, fetch_site: str | None) -> bool:
    """Whether a search is the dashboard page's own: it names ``client=dashboard`` and comes
    from a page of this server (``Sec-Fetch-Site: same-origin``, which browsers set and a page's
    script cannot). An API client naming itself ``dashboard`` is booked as any client is. Not
    an authentication: the bearer token is that, and a program holding it could send the
    header too (as it could reset the counters); it keeps a claimed name from hiding searches."""
    return client == DASHBOARD and fetch_site == "same-origin"


class ServiceState(LogWrites):
    def __init__(self, api: Briefd, config: ServiceConfig, metrics: Metrics) -> None:
        self.api = api
        self.config = config
        self.metrics = metrics
        self.lock = threading.RLock()
        self.started = time.monotonic()  # a duration's start: a clock set back does not move it
        self._pending: list[QueryLogEntry] = []
        self._pending_lock = threading.Lock()
        # one flush at a time: a flush that returns has written every entry queued before it,
        # also those a flush already in flight (the periodic one) took from the queue
        self._flushing = threading.Lock()
        self._pruned_at = -math.inf  # monotonic; the first flush prunes
        self.jobs: dict[str, Job] = {}
        self.deliveries = Deliveries(  # signed webhooks seen, by any replica
            api.settings.sync.webhook_window,
            shared=lambda keys, now, window: api.state.claim_deliveries(keys, now, window),
        )
        self.refill = Refill()  # the index file deleted under the server, filled again
        self.agreement: object | None = None  # replicas set up alike (service.agreement)
        self._counted_in: Reopened | None = None  # the index file the counters were saved to
        self._warmed = False  # the embedding model is loaded (see warm_up)
        self._warm_version: tuple[int, int] | None = None  # the index content warmed up
        self._reloads = Reloads(log)  # the index loaded again after another process changed it
        self._findings: tuple[tuple[int, int], LinkFindings] | None = None  # of that content
        self.first_build: Callable[[], bool] = lambda: False  # a first index runs beside serving
        self.first_left: Callable[[], float | None] = lambda: None  # its seconds left, said
        serving(api.semantic, api.settings)  # how long a search waits for its query vector

    def building(self) -> bool:
        """Whether requests are told the index is being built (:meth:`being_built`) rather
        than answered from it: a first index runs beside serving, or the index file was
        deleted and a sync fills the new one (:class:`Refill`; started here when a deletion
        is first seen)."""
        return self.first_build() or self._refilling()

    def being_built(self) -> str:
        """What a request is told while :meth:`building`."""
        if self.first_build():
            return BEING_BUILT
        return self.index_notice() or BEING_BUILT

    def _refilling(self) -> bool:
        try:
            store = self.api.store
            if self.refill.running(store.reopened, self.api.trigger_sync):
                return True
            store.follow_file()  # a deletion seen before a request reads the new, empty file
            return self.refill.running(store.reopened, self.api.trigger_sync)
        except BriefdError:  # no index to follow (--no-index): the request says it
            return False

    def call(
        self,
        surface: str,
        name: str,
        fn: Callable[[], T],
        exclusive: bool = True,
        started: float | None = None,
    ) -> T:
        """Run ``fn`` against the API, counting and timing it; under the lock unless it works
        on connections of its own (``exclusive=False``: proposals, which push over the
        network and must not hold up every other request meanwhile). ``started``: when the
        request began (``time.perf_counter``), if work of it ran before (a long query
        embedded outside the lock), so its latency counts that too."""
        started = time.perf_counter() if started is None else started
        outcome = "ok"
        try:
            if not exclusive:
                return fn()
            if self.building():  # what the shared connection reads is not there yet
                raise IndexNotFoundError(self.being_built())
            with self.lock:
                return fn()
        except BriefdError:
            outcome = "error"
            raise
        except Exception:
            outcome = "failure"
            raise
        finally:
            labels = {"surface": surface, "name": name}
            self.metrics.inc(REQUESTS, {**labels, "outcome": outcome})
            self.metrics.observe(DURATION, labels, time.perf_counter() - started)

    def apart(self, surface: str, name: str, fn: Callable[[], T]) -> T:
        """:meth:`call` for ``fn`` that reads on a connection of its own, outside the lock (a
        long read need not hold up every search), told as every request is while the index is
        being built."""

        def run() -> T:
            if self.building():
                raise IndexNotFoundError(self.being_built())
            return fn()

        return self.call(surface, name, run, exclusive=False)

    def rejected(self, surface: str, name: str) -> None:
        """Count a request whose arguments failed validation before anything ran (REST 422,
        an MCP tool's arguments): outcome ``invalid``, not timed, so a misbehaving client shows
        in the counters without lowering the latency of the calls that did work. ``name`` is
        the route's or tool's name, never the raw path or an argument."""
        self.metrics.inc(REQUESTS, {"surface": surface, "name": name, "outcome": INVALID})

    def locked(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` under the lock without counting it as a request."""
        with self.lock:
            return fn()

    def embed_first(self, query: str, mode: str | None) -> None:
        """Embed a query before the lock is taken, so the model's time is not spent holding
        it. A short one is only started (:func:`prefetch`): the search under the lock runs its
        lexical part meanwhile. A longer one (one window at most) is embedded here: under the
        lock it would hold up every other request, and on the shared worker delay their
        vectors. Here too no longer than a search waits (:attr:`SemanticIndex.wait`): then the
        search answers by keywords at once. Not before the warm-up has loaded the model."""
        semantic = self.api.semantic
        if semantic is None or not self._warmed:
            return
        if (mode or self.api.settings.search.mode) == "bm25":
            return
        if len(query) <= OVERLAP_CHARS:
            prefetch(semantic, query)
            return
        wait = semantic.wait
        with contextlib.suppress(BriefdError):  # the search says it under the lock
            semantic.query_vector(query, time.monotonic() + wait if wait else None)

    def warm_up(self) -> None:
        """Load what the first query would otherwise wait for (the embedding model, the
        vectors and the gate's calibration, the vocabulary, the tokenizer that bundles and
        hybrid recalls count with) before any client asks."""
        started = time.perf_counter()
        count_tokens("warm up the tokenizer")
        if self.building():  # loaded by keep_warm once the first index is committed
            log.info("warm-up: the index is being built for the first time")
            self._warmed = True
            return
        try:
            with self.lock:
                self._warm_version = self._content_version()
                self._search(WARM_UP, ())
        except BriefdError as exc:  # no index yet, or embeddings unavailable: said elsewhere
            log.info("warm-up skipped: %s", exc)
        else:
            log.info("warm-up: the index loaded in %.0f ms", (time.perf_counter() - started) * 1000)
        self._warmed = True

    def keep_warm(self) -> None:
        """Between requests (each flush): when another process has changed the index (``briefd
        index`` from a git hook or cron, a sync), load it again now as the warm-up did, so the
        next query does not wait for it (the vectors and postings of 50K chunks: 0.1-0.5 s)."""
        if not self._warmed or self.building():
            return
        with self.lock:
            try:
                version = self._content_version()
            except IndexNotFoundError:  # no index yet: nothing to load (the flush is quiet too)
                return
            if version == self._warm_version:
                self._reloads.say(None)
                return
            self._warm_version = version  # once per change, also if the search below fails
            started = time.perf_counter()
            self._search(WARM_UP, ())
        self._reloads.say((time.perf_counter() - started) * 1000)

    def link_findings(self) -> LinkFindings:
        """The index's link findings, resolved again only when its content changed: the
        dashboard asks every 10 s, and resolving every link of thousands of documents takes
        most of a second, under the lock every search waits for. Call it under the lock."""
        version = self._content_version()
        if self._findings is None or self._findings[0] != version:
            self._findings = (version, self.api.link_findings())
        return self._findings[1]

    def _content_version(self) -> tuple[int, int]:
        with self.api.store.read() as conn:
            return content_version(conn)

    def search(
        self, request: SearchRequest, paths: tuple[str, ...], max_tokens: int, caller: Caller
    ) -> SearchOut:
        """Search, keep what fits in ``max_tokens``, count the tokens served and log the query
        (not the dashboard's own search, nor a HEAD: counted as a request only). With
        ``paths``, the best section of each document whose ``refs`` cover one of them leads
        (see :meth:`Briefd.search`)."""
        started = time.perf_counter()
        self.embed_first(request.query, request.mode)
        result = self.call(
            caller.surface, caller.name, lambda: self._search(request, paths), started=started
        )
        out = search_out(result, max_tokens)
        if caller.dashboard or caller.head:
            return out
        self.served(caller.surface, caller.name, out.tokens)
        top = out.hits[0].score if out.hits else None
        elapsed = (time.perf_counter() - started) * 1000
        self.log_query(
            "search",
            request.query,
            result.scopes,
            len(out.hits),
            top,
            elapsed,
            caller.client,
            surface=caller.surface,
            gate=result.gate,
            sections=[h.chunk_id for h in out.hits],
        )
        return out

    def compile_bundle(
        self, request: BundleRequest, caller: Caller, verbose: bool = False
    ) -> BundleOut:
        """Compile a bundle (or a document context), count the cache hit or miss and the
        tokens served, log the task; diagnostics in the answer only when ``verbose``."""
        started = time.perf_counter()
        if request.target is not None:  # document_context: as get_document reads its path
            request = replace(request, target=self.doc_path(request.target))
        self.embed_first(retrieval_query(request.task, request.issue), None)

        def run() -> Bundle:
            if self.building():  # unlocked (the issue lookup): ``call`` did not ask
                raise IndexNotFoundError(self.being_built())
            lookup = self.api.atlassian.prefetch(request.issue, caller.account)  # network: unlocked
            lookup(request.issue or "", issue_share(self.api.settings.bundles, request))  # fitted
            with self.lock:
                return self.api.compile_bundle(request, lookup)

        result = self.call(caller.surface, caller.name, run, exclusive=False, started=started)
        self.bundle_cache(result.cached)
        self.served(caller.surface, caller.name, result.tokens)  # a delta's: what it sends
        elapsed = (time.perf_counter() - started) * 1000
        asked = request.task or (request.issue or "")[:500]
        # a document or code paths asked for alone (no task) is no question: no score to weigh
        # (gaps never reads it as weak), logged by what named it (not as a query '' group)
        answered = result.knowledge  # a tracker issue heading it is no answer, no section
        top = max((i.score for i in answered), default=None) if asked else None
        query = asked or request.target or ", ".join(normalise_paths(request.paths))[:500]
        scopes = result.diagnostics.scopes
        self.log_query(
            "bundle",
            query,
            scopes,
            len(answered),
            top,
            elapsed,
            caller.client,
            surface=caller.surface,
            gate=result.diagnostics.gate,
            sections=[i.chunk_id for i in answered],
            bundle_id=result.bundle_id,
        )
        return BundleOut.model_validate(response(result, verbose))

    def document(
        self,
        path: str,
        scopes: tuple[str, ...] | None,
        caller: Caller,
        start_line: int | None = None,
        max_tokens: int | None = None,
        start_char: int = 0,
    ) -> DocumentOut:
        """A document by a path from the network (see :meth:`_document`), whole or the part
        from ``start_line`` (character ``start_char``) that fits ``max_tokens``
        (:func:`read_part`), its sections' tokens counted as served (not for a HEAD)."""

        def read() -> tuple[DocumentView, Part | None]:
            view = self._document(path, scopes)
            costs = link_costs()
            return read_within(view, start_line, max_tokens, fields_tokens, costs, start_char)

        view, part = self.call(caller.surface, caller.name, read)
        out = document_out(view, part)
        if not caller.head:
            self.served(caller.surface, caller.name, sum(s.tokens for s in out.sections))
        return out

    def doc_path(self, path: str) -> str:
        """A document path from the network as documents are known: an absolute path to a file
        inside the knowledge folder on this machine (what an agent beside the server sees) from
        that folder's root; any other as given (:func:`within_source`)."""
        return within_source(path, self._roots())  # read only for an absolute path

    def _roots(self) -> Iterator[Path | None]:
        """The knowledge folders a document's absolute path may be inside, read as asked (the
        last run's source takes an index read)."""
        yield self.source_root()
        yield self.api.settings.source

    def suggest_links(
        self, surface: str, name: str, doc_path: str | None, scopes: tuple[str, ...] | None
    ) -> Suggestions:
        """Link suggestions for ``doc_path`` (None: every document) as REST and MCP ask."""

        def run() -> Suggestions:
            path = None if doc_path is None else self.doc_path(doc_path)
            return self.api.suggest_links(path, EVERY, scopes)

        return self.apart(surface, name, run)

    def _document(self, path: str, scopes: tuple[str, ...] | None) -> DocumentView:
        """A document by a path from the network: checked lexically, looked up within
        ``scopes`` (None: the default scopes), and refused (404) if its file resolves outside
        the knowledge repository. Call under the lock."""
        safe = checked_doc_path(self.doc_path(path))
        view = self.api.document(safe, scopes, scoped=True)
        ensure_inside(self.source_root(), view.path)
        return view

    def proposed(
        self, proposal: Proposal, scopes: tuple[str, ...] | None, where: str | None = None
    ) -> ProposalOut:
        """A new proposal as REST and MCP answer it: with ``where`` its branch is when its
        status and pull request do not say it (:func:`briefd.proposals.service.where_kept`), and
        the documents superseding the one it changes (K2) that the caller may read, when there
        are any."""
        out = proposal_out(proposal)
        if where is not None:
            out = out.model_copy(update={"where": where})
        try:
            with self.api.store.read() as conn:
                shown = resolve_scopes(conn, scopes, self.api.settings.default_scopes)
                found = superseders(conn, (proposal.doc_path,))
        except BriefdError:  # no index to ask: the proposal stands, without the note
            return out
        newer = superseded_by(found, proposal.doc_path, shown)
        return out.model_copy(update={"superseded_by": list(newer)}) if newer else out

    def _search(self, request: SearchRequest, paths: tuple[str, ...]) -> SearchResult:
        """The one call into :meth:`Briefd.search`. Call under the lock."""
        return self.api.search(replace(request, paths=paths))

    def source_root(self) -> Path | None:
        """The directory the last index run read; before any (no index yet) or when the index
        cannot be read (damaged: what a rebuild replaces), the configured source (None for a git
        URL: a rebuild clones it)."""
        try:
            source = self.api.last_report().get("source") or self.api.settings.source
        except (IndexNotFoundError, StoreError):
            source = self.api.settings.source
        return Path(str(source)) if source else None

    def uptime_seconds(self) -> float:
        return round(time.monotonic() - self.started, 3)

    def served(self, surface: str, name: str, tokens: int) -> None:
        self.metrics.inc(TOKENS, {"surface": surface, "name": name}, tokens)

    def bundle_cache(self, hit: bool) -> None:
        self.metrics.inc(CACHE, {"result": "hit" if hit else "miss"})

    def index_notice(self) -> str | None:
        """What happened to the index file under this server (deleted, replaced), if anything."""
        try:
            reopened = self.api.store.reopened
        except BriefdError:
            return None
        return self.refill.notice(reopened) if reopened is not None else None

    def index_damage(self) -> str | None:
        """Damage a request found inside the index file (until a rebuild replaces it)."""
        try:
            return self.api.store.damaged
        except BriefdError:
            return None
