"""The ``proposals`` table (m004, m011)."""

from __future__ import annotations

import sqlite3

from briefd.proposals.model import Proposal

_COLUMNS = (
    "id, branch, doc_path, description, commit_hash, pr_url, status, client, created_at, "
    "pr_number, base_branch, base_commit, forge_error, status_checked_at"
)


def insert(conn: sqlite3.Connection, proposal: Proposal) -> None:
    conn.execute(
        f"INSERT INTO proposals ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            proposal.id,
            proposal.branch,
            proposal.doc_path,
            proposal.description,
            proposal.commit_hash,
            proposal.pr_url,
            proposal.status,
            proposal.client,
            proposal.created_at,
            proposal.pr_number,
            proposal.base_branch,
            proposal.base_commit,
            proposal.forge_error,
            proposal.status_checked_at,
        ),
    )


def all_proposals(conn: sqlite3.Connection, status: str | None = None) -> list[Proposal]:
    where, args = ("WHERE status = ?", (status,)) if status else ("", ())
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM proposals {where} ORDER BY created_at DESC, id", args
    )
    return [_proposal(row) for row in rows]


def open_pulls(conn: sqlite3.Connection) -> list[Proposal]:
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM proposals WHERE status = 'open' AND pr_number IS NOT NULL "
        "ORDER BY created_at, id"
    )
    return [_proposal(row) for row in rows]


def counts(conn: sqlite3.Connection) -> dict[str, int]:
    rows = conn.execute("SELECT status, count(*) FROM proposals GROUP BY status ORDER BY status")
    return {row[0]: row[1] for row in rows}


def record_check(
    conn: sqlite3.Connection, proposal_id: str, status: str | None, error: str | None, at: str
) -> None:
    """A status read: ``status`` None (the forge failed) keeps the stored status."""
    conn.execute(
        "UPDATE proposals SET status = coalesce(?, status), forge_error = ?, "
        "status_checked_at = ? WHERE id = ?",
        (status, error, at, proposal_id),
    )


def _proposal(row: sqlite3.Row) -> Proposal:
    return Proposal(
        id=row["id"],
        branch=row["branch"],
        doc_path=row["doc_path"],
        description=row["description"],
        commit_hash=row["commit_hash"],
        pr_url=row["pr_url"],
        status=row["status"],
        client=row["client"],
        created_at=row["created_at"],
        pr_number=row["pr_number"],
        base_branch=row["base_branch"],
        base_commit=row["base_commit"],
        forge_error=row["forge_error"],
        status_checked_at=row["status_checked_at"],
    )
