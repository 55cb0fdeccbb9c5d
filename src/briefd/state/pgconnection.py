"""How :class:`~briefd.state.postgres.PostgresState` reaches PostgreSQL: its pool, each
call a transaction bounded by ``timeout_seconds`` (:mod:`.pgpool`), and what it does when the
server is away — every call fails at once with :class:`StateUnavailableError` (after the
first, which waited), a thread probes the server every ``RETRY_SECONDS`` and, when it
answers, opens the pool anew and writes what was kept meanwhile (the subclass's
:meth:`PostgresConnection._share_kept`); a server that answers but refuses writes is said
once (:func:`~briefd.state.writable.unwritable`)."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from briefd.errors import StateUnavailableError, StoreError
from briefd.settings import StateSettings
from briefd.state.migrations import migrate
from briefd.state.pgpool import answered_within, new_pool, slow, unbounded
from briefd.state.pgsaid import redacted, said
from briefd.state.writable import unwritable

log = logging.getLogger("briefd.state")
RETRY_SECONDS = 1.0  # while the server is away, how often it is tried again
Conn = psycopg.Connection[Any]


class PostgresConnection:
    """The pool of ``settings.url`` (named for ``replica``), its transactions, and whether
    the server answers (:meth:`problem`)."""

    def __init__(self, settings: StateSettings, replica: str) -> None:
        assert settings.url is not None
        self.url = settings.url
        self.replica = replica
        self._settings = settings
        self._lock = threading.Lock()
        self._problem: str | None = None
        self._refused: str | None = None  # the server answers but refuses (said once)
        self._prober: threading.Thread | None = None
        self._closed = threading.Event()
        self._pool = self._new_pool()
        self._migrated = False

    def _share_kept(self) -> None:
        """Write what was kept while the server was away (the state's own: nothing here)."""

    def _new_pool(self) -> ConnectionPool[Conn]:
        return new_pool(self.url, self._settings, f"briefd-state-{self.replica}")

    @contextlib.contextmanager
    def _tx(self, own: bool = False, long: bool = False) -> Iterator[Conn]:
        """A pooled connection in a transaction (committed on success), each statement
        bounded by ``timeout_seconds``; ``long``: unbounded (reports, retention); ``own``: a
        connection of its own, closed after (a lock waited for, or held through a push, would
        keep a pooled one from every other call, and a few such would empty the pool)."""
        self._gate()
        try:
            with self._connection(own) as conn:
                if not self._migrated and not own:
                    migrate(conn)
                    self._migrated = True
                with conn.transaction():
                    if long:
                        unbounded(conn)
                    yield conn
        except (psycopg.OperationalError, PoolTimeout) as exc:
            raise self._down(exc) from exc
        except psycopg.errors.UndefinedTable as exc:
            # briefd's tables are gone (the database made anew, restored from a dump before
            # briefd): the next call creates them again, as the first one did
            self._migrated = False
            raise StoreError(f"the shared state refused a request: {said(str(exc))}") from exc
        except psycopg.Error as exc:
            doing = "a request" if self._migrated or own else "to create briefd's tables"
            raise StoreError(f"the shared state refused {doing}: {said(str(exc))}") from exc
        self._problem = None

    def _connection(self, own: bool) -> contextlib.AbstractContextManager[Conn]:
        if own:
            return psycopg.connect(self.url, connect_timeout=self._connect_timeout())
        return self._pool.connection()

    def _gate(self) -> None:
        """Fail at once while the server is known to be away (a prober watches for it)."""
        problem = self._problem
        if problem is not None:
            raise StateUnavailableError(problem)

    def _probe_until_back(self) -> None:
        """While the server is away: try it every ``RETRY_SECONDS`` (what it says now is the
        problem: a server back with other settings refuses for another reason); when it
        answers, open a fresh pool (no connection to the old server kept) and let calls
        through again."""
        while not self._closed.wait(RETRY_SECONDS):
            try:
                psycopg.connect(self.url, connect_timeout=self._connect_timeout()).close()
            except psycopg.Error as exc:
                self._down(exc)
                continue
            with self._lock:
                old, self._pool = self._pool, self._new_pool()
                self._problem = None
                self._prober = None
            old.close(timeout=0)
            log.warning("the shared state answers again (%s)", redacted(self.url))
            self._share_kept()
            return

    def _connect_timeout(self) -> int:
        return max(1, int(self._settings.timeout_seconds))

    def _cause(self, exc: BaseException) -> str:
        """Why the server cannot be used: for a pool that gave up waiting, what a connection
        of this call's own is told (the pool keeps its connection errors to its log)."""
        if isinstance(exc, PoolTimeout):
            try:
                psycopg.connect(self.url, connect_timeout=self._connect_timeout()).close()
            except psycopg.Error as direct:
                exc = direct
        return redacted(said(str(exc))) or type(exc).__name__

    def _down(self, exc: BaseException) -> StateUnavailableError:
        detail = self._cause(exc)
        what = (
            f"did not answer within {self._settings.timeout_seconds:g} s (state.timeout_seconds"
            "; a lock held on briefd's tables, or the server overloaded or stopped)"
            if slow(exc)
            else "is unreachable"
        )
        problem = (
            f"the shared state ({redacted(self.url)}) {what}: {detail}; search and "
            "bundles go on from the local index, state writes fail until it answers"
        )
        with self._lock:
            if self._problem != problem:  # said once, and again when the reason changes
                log.error("%s", problem)
            self._problem = problem
            if self._prober is None and not self._closed.is_set():
                self._prober = threading.Thread(
                    target=self._probe_until_back, name="briefd-state-probe", daemon=True
                )
                self._prober.start()
        return StateUnavailableError(problem)

    def problem(self) -> str | None:
        """Within about ``timeout_seconds``: a server that accepts but answers nothing (its
        process stopped, packets dropped) would hold a pooled connection's check for good,
        and health with it; it is then away, as for every call (the prober watches)."""
        if self._problem is not None:  # known: no wait (the prober watches)
            return self._problem
        found = answered_within(self._settings.timeout_seconds + 1, self._checked)
        if not found:
            return str(self._down(TimeoutError("no answer to the health check")))
        return found[0]

    def _checked(self) -> str | None:
        try:
            with self._tx() as conn:
                refused = unwritable(conn)
        except StateUnavailableError as exc:  # logged as it went away
            return str(exc)
        except StoreError as exc:
            return self._refusing(str(exc))
        return self._refusing(refused)

    def _refusing(self, problem: str | None) -> str | None:
        """``problem`` (a server that answers but refuses), logged once, and again when it
        changes: the open health probe tells a caller without the token only that it refuses."""
        with self._lock:
            if problem is not None and problem != self._refused:
                log.error("%s", problem)
            self._refused = problem
        return problem

    def close(self) -> None:
        self._closed.set()
        self._pool.close(timeout=1)
