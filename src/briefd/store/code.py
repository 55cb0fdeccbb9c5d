"""SQL of drift (T4): the code repositories read so far, their commits, which documents drift
because of which commits, and the documents' state drift was last computed for. The rules are
in :mod:`briefd.team.drift`; the callers own the transaction. Paths are stored NUL-separated,
as ``git -z`` prints them (no path contains a NUL)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from briefd.sources.code import CodeCommit
from briefd.store.documents import meta, set_meta

SEP = "\0"
DRIFT_STATE = "drift-state"  # index_meta key: the digest of the stored drift
# index_meta key prefix: a repository's commits are read from (":2": dated by their arrival
# on the branch; a repository stored under the first key is read again, once)
READ_FROM = "code-read-from:2:"


def read_from(conn: sqlite3.Connection, repo: str) -> str | None:
    """Since when (ISO 8601 UTC) the stored commits of ``repo`` go back (None: not known)."""
    return meta(conn, READ_FROM + repo)


def save_read_from(conn: sqlite3.Connection, repo: str, since: str) -> None:
    set_meta(conn, READ_FROM + repo, since)


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
class GovernedDocument:
    """A document with ``refs`` and the time of its own last change."""

    path: str
    title: str
    refs: tuple[str, ...]
    updated_at: str


@dataclass(frozen=True, slots=True)
class DriftRow:
    """A commit that makes a document drift, its time, and the governed paths it touched."""

    doc_path: str
    repo: str
    hash: str
    at: str
    paths: tuple[str, ...]


def repo_states(conn: sqlite3.Connection) -> list[RepoState]:
    rows = conn.execute(
        "SELECT name, location, branch, head, commits, last_read, refreshed_at, error "
        "FROM code_repos ORDER BY name"
    )
    return [RepoState(*r) for r in rows]


def save_repo_state(conn: sqlite3.Connection, state: RepoState) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO code_repos (name, location, branch, head, commits, last_read, "
        "refreshed_at, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
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
    """Drop a repository's commits and the drift they caused (and, unless ``keep_state``,
    its record)."""
    conn.execute("DELETE FROM code_commits WHERE repo = ?", (name,))
    conn.execute("DELETE FROM document_drift WHERE repo = ?", (name,))
    if not keep_state:
        conn.execute("DELETE FROM code_repos WHERE name = ?", (name,))


def save_commits(conn: sqlite3.Connection, commits: Iterable[CodeCommit]) -> None:
    """Store commits (already stored ones are kept), in key order (B-tree friendly)."""
    conn.executemany(
        "INSERT OR IGNORE INTO code_commits (repo, hash, at, author, subject, paths) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        sorted((c.repo, c.hash, c.at, c.author, c.subject, SEP.join(c.paths)) for c in commits),
    )


def commit_count(conn: sqlite3.Connection, repo: str) -> int:
    sql = "SELECT count(*) FROM code_commits WHERE repo = ?"
    return int(conn.execute(sql, (repo,)).fetchone()[0])


def _commit(r: Sequence[str]) -> CodeCommit:
    return CodeCommit(r[0], r[1], r[2], r[3], r[4], tuple(r[5].split(SEP)) if r[5] else ())


def commits_after(conn: sqlite3.Connection, at: str) -> list[CodeCommit]:
    """Stored commits later than ``at`` (ISO 8601 UTC), oldest first."""
    rows = conn.execute(
        "SELECT repo, hash, at, author, subject, paths FROM code_commits WHERE at > ? "
        "ORDER BY at, repo, hash",
        (at,),
    )
    return [_commit(r) for r in rows]


def commits_by_hash(
    conn: sqlite3.Connection, keys: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], CodeCommit]:
    """The stored commits with these (repo, hash) keys."""
    sql = "SELECT repo, hash, at, author, subject, paths FROM code_commits WHERE repo = ? AND hash = ?"
    found = {}
    for key in set(keys):
        row = conn.execute(sql, key).fetchone()
        if row is not None:
            found[key] = _commit(row)
    return found


def governed_documents(conn: sqlite3.Connection) -> list[GovernedDocument]:
    """Documents with ``refs``, by path."""
    rows = conn.execute(
        "SELECT path, title, refs, coalesce(updated_at, indexed_at) FROM documents "
        "WHERE refs != '[]' ORDER BY path"
    )
    return [GovernedDocument(r[0], r[1], tuple(json.loads(r[2])), r[3]) for r in rows]


def governed_dated_by(conn: sqlite3.Connection, commits: Iterable[str]) -> list[str]:
    """Paths of the documents with ``refs`` whose last change is one of ``commits``."""
    wanted = set(commits)
    rows = conn.execute("SELECT path, updated_commit FROM documents WHERE refs != '[]'")
    return sorted(r[0] for r in rows if r[1] in wanted)


def drift_basis(conn: sqlite3.Connection) -> dict[str, tuple[tuple[str, ...], str]]:
    """Per document: the refs and last change its stored drift was computed for."""
    rows = conn.execute("SELECT doc_path, refs, updated_at FROM drift_basis")
    return {r[0]: (tuple(json.loads(r[1])), r[2]) for r in rows}


def save_drift_basis(conn: sqlite3.Connection, docs: Sequence[GovernedDocument]) -> None:
    conn.execute("DELETE FROM drift_basis")
    conn.executemany(
        "INSERT INTO drift_basis (doc_path, refs, updated_at) VALUES (?, ?, ?)",
        [(d.path, json.dumps(d.refs), d.updated_at) for d in docs],
    )


def forget_drift(conn: sqlite3.Connection, paths: Sequence[str]) -> None:
    conn.executemany("DELETE FROM document_drift WHERE doc_path = ?", [(p,) for p in paths])


def add_drift(conn: sqlite3.Connection, rows: Iterable[DriftRow]) -> None:
    conn.executemany(
        "INSERT OR IGNORE INTO document_drift (doc_path, repo, hash, at, paths) "
        "VALUES (?, ?, ?, ?, ?)",
        sorted((r.doc_path, r.repo, r.hash, r.at, SEP.join(r.paths)) for r in rows),
    )


def drift_marks(
    conn: sqlite3.Connection, paths: Sequence[str] | None = None
) -> dict[str, tuple[int, str]]:
    """Per drifting document (among ``paths``; None: all): (commits since its last change,
    the time of the first of them)."""
    where, args = "", tuple(paths or ())
    if paths is not None:
        if not paths:
            return {}
        where = f"WHERE doc_path IN ({','.join('?' * len(paths))}) "
    rows = conn.execute(
        f"SELECT doc_path, count(*), min(at) FROM document_drift {where}GROUP BY doc_path", args
    )
    return {r[0]: (int(r[1]), str(r[2])) for r in rows}


def drift_state(conn: sqlite3.Connection) -> str:
    """A digest of every document's drift as :func:`save_drift_state` last recorded it ('' before
    the first): part of a bundle's cache key, since its items are packed with their drift."""
    return meta(conn, DRIFT_STATE) or ""


def save_drift_state(conn: sqlite3.Connection) -> None:
    """Record the digest of the drift now stored (after every change of it); an unchanged
    digest writes nothing."""
    marks = sorted((path, count, since) for path, (count, since) in drift_marks(conn).items())
    canonical = json.dumps(marks, separators=(",", ":")).encode("utf-8")
    set_meta(conn, DRIFT_STATE, hashlib.sha256(canonical).hexdigest()[:16])


def newest_drift(conn: sqlite3.Connection, per_document: int) -> list[DriftRow]:
    """The ``per_document`` newest drift rows of every drifting document."""
    rows = conn.execute(
        "SELECT doc_path, repo, hash, at, paths FROM ("
        "SELECT *, row_number() OVER (PARTITION BY doc_path ORDER BY at DESC, repo, hash) AS n "
        "FROM document_drift) WHERE n <= ?",
        (per_document,),
    )
    return [DriftRow(r[0], r[1], r[2], r[3], tuple(r[4].split(SEP))) for r in rows]
