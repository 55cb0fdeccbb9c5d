"""Indexes made by the builds between the first and the last form of migration 16 (X0, T3,
T4): they record schema 16, yet their query log keeps the sections served space-separated and
has no ``documents`` column, and their drift tables store JSON paths without the commit's
time. Migration 19 brings them to the final form in place, keeping what cannot be rebuilt from
git (the query log, its sections and the documents they belong to); an index already in the
final form is left as it is. The callers own the transaction."""

from __future__ import annotations

import json
import sqlite3

SEP = "\0"  # as code.SEP: paths NUL-separated, as git -z prints them


def bring_up(conn: sqlite3.Connection) -> None:
    if "documents" not in _columns(conn, "query_log"):
        conn.execute("ALTER TABLE query_log ADD COLUMN documents TEXT NOT NULL DEFAULT '[]'")
        _sections_as_json(conn)
    if "at" not in _columns(conn, "document_drift"):
        _drift_with_times(conn)


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def _sections_as_json(conn: sqlite3.Connection) -> None:
    """Space-separated chunk ids become the JSON list they are now, with the documents those
    sections belong to as indexed now (as an entry logged today records them)."""
    paths = dict(
        conn.execute("SELECT c.id, d.path FROM chunks c JOIN documents d ON d.id = c.doc_id")
    )
    rows = conn.execute("SELECT id, sections FROM query_log WHERE sections NOT LIKE '[%'")
    updates = []
    for entry, sections in rows.fetchall():
        ids = str(sections).split()
        documents = sorted({paths[c] for c in ids if c in paths})
        updates.append((json.dumps(ids), json.dumps(documents), entry))
    conn.executemany("UPDATE query_log SET sections = ?, documents = ? WHERE id = ?", updates)


def _drift_with_times(conn: sqlite3.Connection) -> None:
    """Commit paths as JSON lists become NUL-separated; the drift found so far gets its
    commits' times (a drift row whose commit is not stored is left for the next refresh)."""
    commits = conn.execute("SELECT repo, hash, paths FROM code_commits").fetchall()
    conn.executemany(
        "UPDATE code_commits SET paths = ? WHERE repo = ? AND hash = ?",
        [(_joined(paths), repo, commit) for repo, commit, paths in commits],
    )
    drift = conn.execute(
        "SELECT d.doc_path, d.repo, d.hash, c.at, d.paths FROM document_drift d "
        "JOIN code_commits c ON c.repo = d.repo AND c.hash = d.hash"
    ).fetchall()
    conn.execute("DROP TABLE document_drift")
    conn.execute(
        "CREATE TABLE document_drift (doc_path TEXT NOT NULL, repo TEXT NOT NULL, "
        "hash TEXT NOT NULL, at TEXT NOT NULL, paths TEXT NOT NULL, "
        "PRIMARY KEY (doc_path, repo, hash)) WITHOUT ROWID"
    )
    conn.execute("CREATE INDEX document_drift_at ON document_drift(doc_path, at)")
    conn.executemany(
        "INSERT INTO document_drift (doc_path, repo, hash, at, paths) VALUES (?, ?, ?, ?, ?)",
        [(doc, repo, commit, at, _joined(paths)) for doc, repo, commit, at, paths in drift],
    )


def _joined(paths: str) -> str:
    try:
        listed = json.loads(paths)
    except ValueError:
        return paths  # already NUL-separated
    return SEP.join(str(p) for p in listed) if isinstance(listed, list) else paths
