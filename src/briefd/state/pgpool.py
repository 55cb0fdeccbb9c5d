"""The shared state's pool of PostgreSQL connections: each call bounded by
``state.timeout_seconds`` (waiting for a connection, and the server's answer: a statement
waiting on a lock another session holds, a replica frozen mid-transaction among them, or an
overloaded server, is cancelled by PostgreSQL's ``statement_timeout``), and connections to a
server that has restarted since dropped all at once; a question bounded on the client's side
(a server that answers nothing at all) and an advisory lock waited for a bounded time."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

import psycopg
from psycopg_pool import ConnectionPool

from briefd.settings import StateSettings

Conn = psycopg.Connection[Any]
T = TypeVar("T")


def new_pool(url: str, settings: StateSettings, name: str) -> ConnectionPool[Conn]:
    """An open pool (connecting in the background) for ``url``."""
    timeout_ms = f"{settings.timeout_seconds * 1000:.0f}"

    def configure(conn: Conn) -> None:
        conn.execute("SELECT set_config('statement_timeout', %s, false)", (timeout_ms,))
        conn.commit()

    def check(conn: Conn) -> None:
        """A dead connection means the server went away since: the pool's others are as dead,
        so they go now (checked one by one, the pool waits a second from the second on, and a
        call after a restart timed out on them)."""
        try:
            ConnectionPool.check_connection(conn)
        except psycopg.Error:
            pool.check()
            raise

    pool: ConnectionPool[Conn] = ConnectionPool(
        url,
        min_size=1,
        max_size=max(1, settings.pool_size),
        timeout=settings.timeout_seconds,
        kwargs={"connect_timeout": max(1, int(settings.timeout_seconds))},
        configure=configure,
        check=check,
        open=False,
        name=name,
    )
    pool.open(wait=False)
    return pool


def unbounded(conn: Conn) -> None:
    """No statement timeout for the rest of this transaction: reports over the whole log,
    retention's deletes and migrations may rightly take longer than a request's call."""
    conn.execute("SELECT set_config('statement_timeout', '0', true)")


def slow(exc: BaseException) -> bool:
    """Whether ``exc`` is the statement timeout (the server answers, not in time), or a check
    that got no answer in time (TimeoutError)."""
    return isinstance(exc, (psycopg.errors.QueryCanceled, TimeoutError))


def answered_within(seconds: float, ask: Callable[[], T]) -> list[T]:
    """``[ask()]``, or ``[]`` when it did not return within ``seconds`` (it goes on in a
    daemon thread: a call on a connection whose server answers nothing waits for good)."""
    found: list[T] = []
    asking = threading.Thread(
        target=lambda: found.append(ask()), name="briefd-state-check", daemon=True
    )
    asking.start()
    asking.join(seconds)
    return found[:1]


def waited_lock(conn: Conn, key: str, wait: float) -> bool:
    """Whether the advisory lock ``key`` was taken within ``wait`` seconds (held until the
    transaction ends)."""
    try:
        with conn.transaction():
            conn.execute("SELECT set_config('lock_timeout', %s, true)", (f"{wait * 1000:.0f}",))
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (key,))
    except psycopg.errors.LockNotAvailable:
        return False
    conn.execute("SELECT set_config('lock_timeout', '0', true)")
    return True
