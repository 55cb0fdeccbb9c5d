"""What a session was already given (migration 13): rows expire after
``recall.session_hours``, so the table stays small however many sessions come and go."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence


def seen(conn: sqlite3.Connection, session_id: str, now: float, hours: float) -> dict[str, str]:
    """chunk id → content hash of every section injected in ``session_id`` and not expired."""
    rows = conn.execute(
        "SELECT chunk_id, content_hash FROM recall_injections "
        "WHERE session_id = ? AND injected_at >= ?",
        (session_id, now - hours * 3600),
    )
    return {row[0]: row[1] for row in rows}


def record(
    conn: sqlite3.Connection,
    session_id: str,
    sections: Sequence[tuple[str, str]],
    now: float,
    hours: float,
) -> None:
    """Remember (chunk id, content hash) pairs as injected now; forget expired rows."""
    conn.execute("DELETE FROM recall_injections WHERE injected_at < ?", (now - hours * 3600,))
    conn.executemany(
        "INSERT INTO recall_injections (session_id, chunk_id, content_hash, injected_at) "
        "VALUES (?, ?, ?, ?) ON CONFLICT(session_id, chunk_id) DO UPDATE SET "
        "content_hash = excluded.content_hash, injected_at = excluded.injected_at",
        [(session_id, chunk, digest, now) for chunk, digest in sections],
    )
