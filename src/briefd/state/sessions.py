"""Recall sessions (I8): what each session was already given — chunk id → content hash,
expiring after ``recall.session_hours``. The interface, and its engine on the SQLite index
(migration 13's table). Light on purpose: the hook's in-process path imports it, and nothing
heavier (no numpy)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from briefd.store.db import Store

REMEMBER_WAIT_MS = 200  # a busy index costs one turn's memory, never the answer


class SessionMemory(Protocol):
    """What a recall session was already given (I8): chunk id → content hash, expiring."""

    def seen(self, session_id: str, now: float, hours: float) -> dict[str, str]: ...

    def remember(
        self, session_id: str, sections: Sequence[tuple[str, str]], now: float, hours: float
    ) -> None: ...


class IndexSessions:
    """:class:`SessionMemory` in the index ``open_store`` opens (one node)."""

    def __init__(self, open_store: Callable[[], Store]) -> None:
        self._open = open_store

    def seen(self, session_id: str, now: float, hours: float) -> dict[str, str]:
        """chunk id → content hash of every section injected in ``session_id``, not expired."""
        with self._open().read() as conn:
            rows = conn.execute(
                "SELECT chunk_id, content_hash FROM recall_injections "
                "WHERE session_id = ? AND injected_at >= ?",
                (session_id, now - hours * 3600),
            )
            return {row[0]: row[1] for row in rows}

    def remember(
        self, session_id: str, sections: Sequence[tuple[str, str]], now: float, hours: float
    ) -> None:
        """Remember (chunk id, content hash) pairs as injected now; forget expired rows. Worth
        no fsync and no long wait on the hook's path."""
        with self._open().write(wait_ms=REMEMBER_WAIT_MS, durable=False) as conn:
            conn.execute(
                "DELETE FROM recall_injections WHERE injected_at < ?", (now - hours * 3600,)
            )
            conn.executemany(
                "INSERT INTO recall_injections (session_id, chunk_id, content_hash, "
                "injected_at) VALUES (?, ?, ?, ?) ON CONFLICT(session_id, chunk_id) DO UPDATE "
                "SET content_hash = excluded.content_hash, injected_at = excluded.injected_at",
                [(session_id, chunk, digest, now) for chunk, digest in sections],
            )
