"""What a server writes behind its answers (T2, T6, O2): the query log entries each request
queues, and the counters, written to SQLite (and a shared state) by a periodic flush, before a
report reads them, and at shutdown; kept in memory while the index cannot take them."""

from __future__ import annotations

import logging
import threading
import time

from briefd.api import Briefd
from briefd.errors import BriefdError, IndexNotFoundError
from briefd.service.metrics import Metrics
from briefd.store.activity import QueryLogEntry, now_iso
from briefd.store.db import Reopened

log = logging.getLogger(__name__)
MAX_PENDING = 10_000  # query log entries kept in memory while SQLite cannot take them
PRUNE_SECONDS = 86_400  # an idle server still prunes the query log (retention) once a day


class LogWrites:
    """The query log and counters part of :class:`~briefd.service.state.ServiceState`, whose
    constructor sets these attributes."""

    api: Briefd
    metrics: Metrics
    lock: threading.RLock
    _pending: list[QueryLogEntry]
    _pending_lock: threading.Lock
    _flushing: threading.Lock
    _pruned_at: float
    _counted_in: Reopened | None

    def _refilling(self) -> bool:
        raise NotImplementedError

    def log_query(
        self,
        kind: str,
        query: str,
        scopes: tuple[str, ...],
        results: int,
        top_score: float | None,
        latency_ms: float,
        client: str | None,
        *,
        surface: str | None = None,
        gate: str | None = None,
        sections: list[str] | None = None,
        bundle_id: str | None = None,
    ) -> None:
        """Queue one query log entry; its text is kept, hashed or dropped when it is written
        (``activity.log_prompts``)."""
        self.queue(
            QueryLogEntry(
                kind,
                query,
                scopes,
                results,
                top_score,
                round(latency_ms, 3),
                client,
                now_iso(),
                surface,
                gate,
                tuple(sections or ()),
                bundle_id,
            )
        )

    def queue(self, entry: QueryLogEntry) -> None:
        """Queue a query log entry made elsewhere (a hook prompt's: ``RecallResult``)."""
        with self._pending_lock:
            self._pending.append(entry)

    def load_counters(self) -> None:
        """Add the counters persisted by earlier runs to this run's (no index yet: none)."""
        try:
            with self.lock:
                stored = self.api.counters()
        except IndexNotFoundError:
            return
        self.metrics.merge(stored)

    def flush(self) -> None:
        """Write the query log and what the counters counted since the last flush to SQLite. If the database
        refuses (busy, disk full, no index yet) or anything else fails, the log entries wait
        for the next flush (at most ``MAX_PENDING``, the oldest dropped first) and the error is
        raised for the caller to report (no index: kept silently). A shared state (PostgreSQL)
        that does not take the log keeps it waiting too; the counters still reach SQLite."""
        with self._flushing:
            self._flush()

    def saved_log(self, wait: float = 2.0) -> None:
        """Before a report reads the query log (gaps, usage): what this process answered so
        far written first, or a report asked right after a search would not count it until
        the next periodic flush (and say nothing was logged). Waits at most ``wait`` seconds
        for a flush in flight or the service lock (a long index update holds it): then, or
        when the flush fails, the entries wait for the next one and the report reads what is
        saved. The flush lock first, as :meth:`flush` takes them."""
        with self._pending_lock:
            if not self._pending:
                return
        if not self._flushing.acquire(timeout=wait):
            return
        try:
            if self.lock.acquire(timeout=wait):
                try:
                    self._flush()
                finally:
                    self.lock.release()
        except Exception as exc:  # the report still answers, from what is saved
            log.warning("could not save the query log before a report: %s", exc)
        finally:
            self._flushing.release()

    def _flush(self) -> None:
        with self._pending_lock:
            pending, self._pending = self._pending, []
        prune = time.monotonic() - self._pruned_at >= PRUNE_SECONDS
        counted: dict[tuple[str, str], float] = {}
        unshared: list[QueryLogEntry] = []  # PostgreSQL away: kept, the counters saved anyway
        shared_error: BriefdError | None = None
        try:
            if (pending or prune) and self.api.state.shared:  # PostgreSQL: not under the lock
                try:
                    self.api.log_queries(pending)
                    self._pruned_at = time.monotonic()
                except BriefdError as exc:
                    unshared, shared_error = pending, exc
                pending, prune = [], False
            with self.lock:
                # first, on their own: proposal records and usage reports a client was told
                # are stored (kept for later if the index refuses them), whatever the log does
                self.api.flush_bundle_hits()
                if pending or prune:
                    self.api.log_queries(pending)  # prunes what is past retention, too
                    pending = []
                    self._pruned_at = time.monotonic()
                counted, mine = self.metrics.unsaved()
                if counted:  # added to the stored counters, which other processes add to too
                    self.api.save_counters(counted)
                saved, counted = counted, {}
                stored = self.api.counters()  # reading them may be what notices a new file
                if self._in_a_new_file():  # it holds none of the counts saved before these
                    counted = {k: v - saved.get(k, 0.0) for k, v in mine.items()}
                    self.api.save_counters({k: v for k, v in counted.items() if v})
                    counted = {}
                    stored = self.api.counters()
                self.metrics.show_stored(stored)  # every process's counts, as stored
        except BaseException as exc:
            with self._pending_lock:
                self._pending = (unshared + pending + self._pending)[-MAX_PENDING:]
            self.metrics.restore(counted)
            if isinstance(exc, IndexNotFoundError):
                return  # nothing indexed yet: kept until there is an index
            raise
        self._refilling()  # a file deleted since: fill the new one (once per deletion)
        if shared_error is not None:
            with self._pending_lock:
                self._pending = (unshared + self._pending)[-MAX_PENDING:]
            raise shared_error

    def unsaved_writes(self) -> list[str]:
        """Proposal records and usage reports a client was told are stored that the index has
        not taken yet (a full disk), named; lost if the process stops now."""
        try:
            return self.api.store.unsaved()
        except BriefdError:
            return []

    def _in_a_new_file(self) -> bool:
        """Whether the store reopened its file (deleted or replaced under the server) since
        the counters were last saved; then the counts saved before belong in it too (once per
        new file). Call it under the lock."""
        reopened = self.api.store.reopened
        if reopened is None or reopened == self._counted_in:
            return False
        self._counted_in = reopened
        return True

    def reset_counters(self) -> None:
        """Zero the counters in SQLite, then here: when the index cannot take the write (a
        sync or rebuild writing for longer than a few seconds), nothing is reset and the
        error says so (zeroed here alone, the stored values would come back at the next
        start)."""
        with self.lock:
            self.api.save_counters({}, reset=True)
            self.metrics.reset()
