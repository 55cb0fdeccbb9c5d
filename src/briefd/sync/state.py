"""What a sync did (:class:`SyncReport`) and where the source stands (:class:`SyncStatus`),
kept in the ``sync_state`` row ``source = 'git'``."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

from briefd.model import IndexReport

ROW = "git"


@dataclass(frozen=True, slots=True)
class SyncReport:
    """One sync run. ``error`` set: the source could not be updated or indexed, and the
    previous index is still the one served."""

    source: str
    kind: str  # clone | checkout | directory | none
    branch: str | None
    previous_commit: str | None
    commit: str | None
    index: IndexReport | None
    error: str | None
    proposals_checked: int
    proposals_changed: tuple[str, ...]  # "id: old → new"
    forge_error: str | None
    started_at: str
    seconds: float
    coalesced: bool = False  # this caller joined a run another caller started

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True, slots=True)
class SyncStatus:
    """Where the knowledge source stands, for ``/api/stats``, ``/metrics``, the dashboard."""

    source: str | None
    kind: str
    branch: str | None
    last_commit: str | None  # the commit the served index was built from
    last_sync_at: str | None  # the last attempt
    last_success_at: str | None
    last_error: str | None  # the last attempt's error; None when it succeeded
    interval: int
    webhook: bool  # a webhook secret is configured
    running: bool  # a sync is running in this process
    syncs: int  # runs completed by this process


def load(conn: sqlite3.Connection) -> dict[str, object]:
    row = conn.execute(
        "SELECT last_commit, last_sync_at, last_error, last_report FROM sync_state "
        "WHERE source = ?",
        (ROW,),
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


def save(conn: sqlite3.Connection, report: SyncReport, last_success_at: str | None) -> None:
    """Record an attempt; a failed one keeps the commit of the index still served."""
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
        (ROW, commit, report.started_at, report.error, fingerprint, json.dumps(extra)),
    )
