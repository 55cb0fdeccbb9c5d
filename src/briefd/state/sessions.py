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


class Unsent:
    """A :class:`SessionMemory` over ``memory`` that keeps what an answer would remember until
    :meth:`delivered`: what the asker never received (a hook that gave up waiting for the recall
    daemon, a long prompt's embedding past its second) is not remembered as given, or the
    session would never get those sections, however it asked again."""

    def __init__(self, memory: SessionMemory) -> None:
        self._memory = memory
        self._kept: list[tuple[str, tuple[tuple[str, str], ...], float, float]] = []

    def seen(self, session_id: str, now: float, hours: float) -> dict[str, str]:
        return self._memory.seen(session_id, now, hours)

    def remember(
        self, session_id: str, sections: Sequence[tuple[str, str]], now: float, hours: float
    ) -> None:
        self._kept.append((session_id, tuple(sections), now, hours))

    def delivered(self) -> None:
        """The answer reached its asker: remember what it gave (each once)."""
        kept, self._kept = self._kept, []
        for session_id, sections, now, hours in kept:
            self._memory.remember(session_id, sections, now, hours)
