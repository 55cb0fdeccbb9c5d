"""The service's own record: the query log (read by the gaps report, T3) and the persisted
service counters (I4), plus the index overview for ``/api/stats``."""

from __future__ import annotations

from collections.abc import Sequence

from briefd.store import activity
from briefd.store.activity import QueryLogEntry
from briefd.store.db import Store

WAIT_MS = 200  # query log and counters: the service keeps them and retries later


def log_queries(store: Store, entries: Sequence[QueryLogEntry]) -> None:
    """Append searches and bundles to the query log; a busy index raises after ``WAIT_MS``
    (the caller keeps the entries and retries)."""
    if entries:
        with store.write(wait_ms=WAIT_MS, durable=False) as conn:
            activity.save_queries(conn, entries)


def recent_queries(store: Store, limit: int = 100) -> list[QueryLogEntry]:
    with store.read() as conn:
        return activity.recent_queries(conn, limit)


def overview(store: Store) -> dict[str, object]:
    """Index size, last index run, sync sources, proposal and usage counts (I2 stats)."""
    with store.read() as conn:
        return activity.overview(conn)


def counters(store: Store) -> dict[tuple[str, str], float]:
    """Persisted service counters keyed by (name, labels JSON)."""
    with store.read() as conn:
        return activity.load_counters(conn)


def save_counters(store: Store, values: dict[tuple[str, str], float], reset: bool) -> None:
    """Write absolute counter values; ``reset`` forgets the stored ones and records when."""
    with store.write(wait_ms=None if reset else WAIT_MS) as conn:
        activity.store_counters(conn, values, replace=reset)
        if reset:
            activity.mark_counters_reset(conn, activity.now_iso())
