"""The ``sync_state`` table: one row per thing that follows the knowledge source. Row
``index`` is the last index run (its fingerprint and report); row ``git`` the last sync."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING

from briefd.errors import IndexNotFoundError
from briefd.store.db import Store

if TYPE_CHECKING:  # the hook's keyword path reads index_report without the model's dataclasses
    from briefd.sync.state import SyncReport

INDEX_ROW = "index"
SYNC_ROW = "git"


def save_index_run(conn: sqlite3.Connection, at: str, fingerprint: str, report: str) -> None:
    """Record an index run: when, the fingerprint of what it built, its report (JSON)."""
    conn.execute(
        """INSERT INTO sync_state (source, last_sync_at, index_fingerprint, last_report)
           VALUES (?, ?, ?, ?)
           ON CONFLICT(source) DO UPDATE SET last_sync_at = excluded.last_sync_at,
               index_fingerprint = excluded.index_fingerprint, last_report = excluded.last_report,
               last_error = NULL""",
        (INDEX_ROW, at, fingerprint, report),
    )


def save_index_failure(conn: sqlite3.Connection, error: str) -> None:
    """Record that the last index run failed (``error``), keeping when the index was last
    built and what it holds: ``briefd_last_sync_ok{source="index"}`` says 0 until a run
    succeeds. An index never built has no row to mark."""
    conn.execute("UPDATE sync_state SET last_error = ? WHERE source = ?", (error, INDEX_ROW))


def index_fingerprint(conn: sqlite3.Connection) -> str | None:
    """The fingerprint of the index built last (None: never built)."""
    row = conn.execute(
        "SELECT index_fingerprint FROM sync_state WHERE source = ?", (INDEX_ROW,)
    ).fetchone()
    return str(row[0]) if row is not None and row[0] else None


def index_report(conn: sqlite3.Connection) -> dict[str, object]:
    """The last index run's report ({} when there was none)."""
    row = conn.execute(
        "SELECT last_report FROM sync_state WHERE source = ?", (INDEX_ROW,)
    ).fetchone()
    return dict(json.loads(row["last_report"])) if row else {}


def rows(conn: sqlite3.Connection) -> list[sqlite3.Row]:
    """Every row, by source."""
    return conn.execute("SELECT * FROM sync_state ORDER BY source").fetchall()


def load_sync(conn: sqlite3.Connection) -> dict[str, object]:
    """The last sync's record ({} when there was none)."""
    row = conn.execute(
        "SELECT last_commit, last_sync_at, last_error, last_report FROM sync_state "
        "WHERE source = ?",
        (SYNC_ROW,),
    ).fetchone()
    if row is None:
        return {}
    extra = json.loads(row["last_report"] or "{}")
    return {
        **extra,
        "last_commit": row["last_commit"],
        "last_sync_at": row["last_sync_at"],
        "last_error": row["last_error"],
    }


def synced_commit(conn: sqlite3.Connection) -> str | None:
    """The commit a synced source serves (None when no sync recorded one): the one written
    with the served documents, in their transaction, which the sync's record follows a moment
    later; the record's where an earlier briefd's index has no such commit."""
    from briefd.store.freshness import served_commit

    row = conn.execute(
        "SELECT last_commit FROM sync_state WHERE source = ?", (SYNC_ROW,)
    ).fetchone()
    if row is None or not row[0]:
        return None
    return served_commit(conn) or str(row[0])


def save_sync(conn: sqlite3.Connection, report: SyncReport, last_success_at: str | None) -> None:
    """Record a sync attempt; a failed one keeps the commit of the index still served."""
    extra = {
        "source": report.source,
        "kind": report.kind,
        "branch": report.branch,
        "last_success_at": last_success_at,
        "seconds": report.seconds,
    }
    commit = report.commit if report.ok else report.previous_commit
    fingerprint = report.index.fingerprint if report.index is not None else ""
    conn.execute(
        """INSERT INTO sync_state (source, last_commit, last_sync_at, last_error,
               index_fingerprint, last_report)
           VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT(source) DO UPDATE SET last_commit = excluded.last_commit,
               last_sync_at = excluded.last_sync_at, last_error = excluded.last_error,
               index_fingerprint = CASE WHEN excluded.index_fingerprint = ''
                   THEN sync_state.index_fingerprint ELSE excluded.index_fingerprint END,
               last_report = excluded.last_report""",
        (SYNC_ROW, commit, report.started_at, report.error, fingerprint, json.dumps(extra)),
    )


def last_sync(open_store: Callable[[], Store]) -> dict[str, object]:
    """:func:`load_sync` on the index ``open_store`` opens ({} when there is no index yet)."""
    try:
        with open_store().read() as conn:
            return load_sync(conn)
    except IndexNotFoundError:
        return {}


def record_sync(
    open_store: Callable[[], Store], report: SyncReport, last_success_at: str | None
) -> None:
    """:func:`save_sync` on the index ``open_store`` opens; without an index (none was built:
    the report says why) nothing is recorded."""
    try:
        with open_store().write() as conn:
            save_sync(conn, report, last_success_at)
    except IndexNotFoundError:
        pass


def served(conn: sqlite3.Connection) -> dict[str, object]:
    """What an index serves, as ``briefd version`` shows it: the knowledge commit (as
    ``/api/health`` says it: a synced source's, :func:`synced_commit`, else the one checked out
    when the documents were read; None outside git), when the last index run ended, and the
    last sync's time and error."""
    from briefd.store.freshness import read_without_commits, served_commit

    synced = load_sync(conn)
    index = conn.execute(
        "SELECT last_sync_at FROM sync_state WHERE source = ?", (INDEX_ROW,)
    ).fetchone()
    found: dict[str, object] = {
        "commit": synced_commit(conn) or served_commit(conn) or None,
        "indexed_at": index[0] if index is not None else None,
    }
    if not found["commit"] and read_without_commits(conn):
        found["git_without_commits"] = True
    if synced:
        found |= {"synced_at": synced.get("last_sync_at"), "sync_error": synced.get("last_error")}
    return found
