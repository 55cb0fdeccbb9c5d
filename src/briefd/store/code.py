"""SQL of drift (T4): the code repositories read so far, their commits, and which documents
drift because of which commits. The rules are in :mod:`briefd.team.drift`; the callers own
the transaction."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RepoState:
    """What the last refresh of a code repository left: where and which branch it read, the
    commit it got to, commits stored, how many the last refresh read, and its error."""

    name: str
    location: str
    branch: str | None
    head: str | None
    commits: int
    last_read: int
    refreshed_at: str | None
    error: str | None


@dataclass(frozen=True, slots=True)
class StoredCommit:
    repo: str
    hash: str
    at: str
    author: str
    subject: str
    paths: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class GovernedDocument:
    """A document with ``refs`` and the time of its own last change."""

    path: str
    title: str
    refs: tuple[str, ...]
    updated_at: str


@dataclass(frozen=True, slots=True)
class DriftRow:
    """A commit that makes a document drift, with the governed paths it touched."""

    doc_path: str
    repo: str
    hash: str
    paths: tuple[str, ...]


def repo_states(conn: sqlite3.Connection) -> list[RepoState]:
    rows = conn.execute("SELECT * FROM code_repos ORDER BY name")
    return [
        RepoState(
            r["name"],
            r["location"],
            r["branch"],
            r["head"],
            r["commits"],
            r["last_read"],
            r["refreshed_at"],
            r["error"],
        )
        for r in rows
    ]


def save_repo_state(conn: sqlite3.Connection, state: RepoState) -> None:
    conn.execute(
        "INSERT INTO code_repos (name, location, branch, head, commits, last_read, "
        "refreshed_at, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET "
        "location = excluded.location, branch = excluded.branch, head = excluded.head, "
        "commits = excluded.commits, last_read = excluded.last_read, "
        "refreshed_at = excluded.refreshed_at, error = excluded.error",
        (
            state.name,
            state.location,
            state.branch,
            state.head,
            state.commits,
            state.last_read,
            state.refreshed_at,
            state.error,
        ),
    )


def forget_repo(conn: sqlite3.Connection, name: str, keep_state: bool = False) -> None:
    """Drop a repository's stored commits (and, unless ``keep_state``, its record)."""
    conn.execute("DELETE FROM code_commits WHERE repo = ?", (name,))
    if not keep_state:
        conn.execute("DELETE FROM code_repos WHERE name = ?", (name,))


def save_commits(conn: sqlite3.Connection, repo: str, commits: Iterable[StoredCommit]) -> int:
    """Store commits (already stored ones are kept); how many rows the repository now has."""
    conn.executemany(
        "INSERT OR IGNORE INTO code_commits (repo, hash, at, author, subject, paths) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [
            (repo, c.hash, c.at, c.author, c.subject, json.dumps(c.paths, ensure_ascii=False))
            for c in commits
        ],
    )
    sql = "SELECT count(*) FROM code_commits WHERE repo = ?"
    return int(conn.execute(sql, (repo,)).fetchone()[0])


def commits_after(conn: sqlite3.Connection, at: str) -> list[StoredCommit]:
    """Stored commits later than ``at`` (ISO 8601 UTC), oldest first."""
    rows = conn.execute(
        "SELECT repo, hash, at, author, subject, paths FROM code_commits WHERE at > ? "
        "ORDER BY at, repo, hash",
        (at,),
    )
    return [StoredCommit(r[0], r[1], r[2], r[3], r[4], tuple(json.loads(r[5]))) for r in rows]


def commits_by_hash(
    conn: sqlite3.Connection, keys: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], StoredCommit]:
    """The stored commits with these (repo, hash) keys."""
    found: dict[tuple[str, str], StoredCommit] = {}
    for repo in {r for r, _ in keys}:
        hashes = [h for r, h in keys if r == repo]
        for start in range(0, len(hashes), 500):
            part = hashes[start : start + 500]
            rows = conn.execute(
                "SELECT repo, hash, at, author, subject, paths FROM code_commits "
                f"WHERE repo = ? AND hash IN ({','.join('?' * len(part))})",
                (repo, *part),
            )
            for r in rows:
                found[(r[0], r[1])] = StoredCommit(
                    r[0], r[1], r[2], r[3], r[4], tuple(json.loads(r[5]))
                )
    return found


def governed_documents(conn: sqlite3.Connection) -> list[GovernedDocument]:
    """Documents with ``refs``, by path."""
    rows = conn.execute(
        "SELECT path, title, refs, coalesce(updated_at, indexed_at) FROM documents "
        "WHERE refs != '[]' ORDER BY path"
    )
    return [GovernedDocument(r[0], r[1], tuple(json.loads(r[2])), r[3]) for r in rows]


def replace_drift(conn: sqlite3.Connection, rows: Iterable[DriftRow]) -> None:
    conn.execute("DELETE FROM document_drift")
    conn.executemany(
        "INSERT INTO document_drift (doc_path, repo, hash, paths) VALUES (?, ?, ?, ?)",
        [(r.doc_path, r.repo, r.hash, json.dumps(r.paths, ensure_ascii=False)) for r in rows],
    )


def drift_rows(conn: sqlite3.Connection) -> list[DriftRow]:
    rows = conn.execute("SELECT doc_path, repo, hash, paths FROM document_drift")
    return [DriftRow(r[0], r[1], r[2], tuple(json.loads(r[3]))) for r in rows]


def drift_marks(conn: sqlite3.Connection, paths: Sequence[str]) -> Mapping[str, tuple[int, str]]:
    """Per drifting document among ``paths``: (commits since its last change, the oldest of
    them's time)."""
    if not paths:
        return {}
    marks = ",".join("?" * len(paths))
    rows = conn.execute(
        "SELECT d.doc_path, count(*), min(c.at) FROM document_drift d "
        "JOIN code_commits c ON c.repo = d.repo AND c.hash = d.hash "
        f"WHERE d.doc_path IN ({marks}) GROUP BY d.doc_path",
        tuple(paths),
    )
    return {r[0]: (int(r[1]), str(r[2])) for r in rows}
