"""The shared state's pool of PostgreSQL connections: each call bounded by
``state.timeout_seconds`` (waiting for a connection, and the server's answer: a statement
waiting on a lock another session holds, a replica frozen mid-transaction among them, or an
overloaded server, is cancelled by PostgreSQL's ``statement_timeout``), and connections to a
server that has restarted since dropped all at once."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from briefd.settings import StateSettings

Conn = psycopg.Connection[Any]


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
    """Whether ``exc`` is the statement timeout (the server answers, not in time)."""
    return isinstance(exc, psycopg.errors.QueryCanceled)
