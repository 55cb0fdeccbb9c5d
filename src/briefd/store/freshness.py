"""What a no-change ``briefd index`` reads before it decides there is nothing to do (O4).

An index run that leaves a complete index stores its source key (:mod:`briefd.sources.state`)
under :data:`SOURCE_KEY`; an incomplete one (vectors missing, an embedding error) stores ''.
Besides the key, an index run also does the team's upkeep (query-log retention, bundle cache
pruning): :func:`upkeep_due` says whether any of that would delete something now.
"""

from __future__ import annotations

import sqlite3

SOURCE_KEY = "source-key"
SOURCE_HEAD = "source-head"  # the git commit that key was taken at ('' outside git)
SERVED_COMMIT = "served-commit"  # the commit checked out when the served documents were read
NO_COMMIT_YET = "served-without-commits"  # '1': they were read in a git work tree without any
TEXT_MODES = "query_log_text"  # the prompt modes the query log's text was last brought to (T6)


def modes_key(log_prompts: str, hook: str) -> str:
    """What :data:`TEXT_MODES` holds once the query log keeps only what ``log_prompts`` (searches
    and bundles) and ``hook`` (hook prompts) let it."""
    return f"{log_prompts},{hook}"


def text_modes(conn: sqlite3.Connection) -> str | None:
    """The modes the query log's text was last brought to (None: never)."""
    row = conn.execute("SELECT value FROM index_meta WHERE key = ?", (TEXT_MODES,)).fetchone()
    return None if row is None else str(row[0])


def stored_key(conn: sqlite3.Connection) -> str:
    """The source key of the last complete index run ('' when there is none)."""
    row = conn.execute("SELECT value FROM index_meta WHERE key = ?", (SOURCE_KEY,)).fetchone()
    return str(row[0]) if row is not None and row[0] else ""


def stored_head(conn: sqlite3.Connection) -> str:
    """The git commit the last complete index run saw checked out ('' when unknown)."""
    row = conn.execute("SELECT value FROM index_meta WHERE key = ?", (SOURCE_HEAD,)).fetchone()
    return str(row[0]) if row is not None and row[0] else ""


def served_commit(conn: sqlite3.Connection) -> str:
    """The git commit checked out when the last index run that wrote the served documents
    read them ('' outside git, or for an index no run has written it to yet)."""
    row = conn.execute("SELECT value FROM index_meta WHERE key = ?", (SERVED_COMMIT,)).fetchone()
    return str(row[0]) if row is not None and row[0] else ""


def served_hash(conn: sqlite3.Connection, path: str) -> str:
    """The SHA-256 of the file ``path`` as the index read it ('' when it serves no such
    document)."""
    row = conn.execute("SELECT content_hash FROM documents WHERE path = ?", (path,)).fetchone()
    return str(row[0]) if row is not None and row[0] else ""


def read_without_commits(conn: sqlite3.Connection) -> bool:
    """The served documents were read in a git work tree with no commit yet (no
    :func:`served_commit`, though not outside git)."""
    row = conn.execute("SELECT value FROM index_meta WHERE key = ?", (NO_COMMIT_YET,)).fetchone()
    return row is not None and row[0] == "1"


def upkeep_due(
    conn: sqlite3.Connection, fingerprint: str, log_cutoff: str | None, manifest_cutoff: str
) -> bool:
    """Whether an index run would prune something now: query log or usage entries before
    ``log_cutoff`` (None: kept forever), cached bundles of another knowledge state, bundle
    manifests before ``manifest_cutoff`` (ISO 8601 UTC)."""
    if stale_bundles(conn, fingerprint):
        return True
    checks: list[tuple[str, tuple[str, ...]]] = [
        ("SELECT 1 FROM bundle_manifests WHERE created_at < ? LIMIT 1", (manifest_cutoff,)),
    ]
    if log_cutoff is not None:
        checks.append(("SELECT 1 FROM query_log WHERE created_at < ? LIMIT 1", (log_cutoff,)))
        checks.append(("SELECT 1 FROM usage_events WHERE created_at < ? LIMIT 1", (log_cutoff,)))
    return any(conn.execute(sql, args).fetchone() is not None for sql, args in checks)


def stale_bundles(conn: sqlite3.Connection, fingerprint: str) -> bool:
    """Whether cached bundles of another knowledge state than ``fingerprint`` wait to be pruned."""
    sql = "SELECT 1 FROM bundles WHERE index_fingerprint != ? LIMIT 1"
    return conn.execute(sql, (fingerprint,)).fetchone() is not None


def oldest_entries(conn: sqlite3.Connection) -> tuple[str | None, str | None]:
    """(the oldest query log or usage entry, the oldest bundle manifest): ISO 8601 UTC times,
    None for an empty table. Upkeep is next due when the older of them ages out."""
    logs = [
        conn.execute("SELECT min(created_at) FROM query_log").fetchone()[0],
        conn.execute("SELECT min(created_at) FROM usage_events").fetchone()[0],
    ]
    manifest = conn.execute("SELECT min(created_at) FROM bundle_manifests").fetchone()[0]
    found = [str(v) for v in logs if v is not None]
    return (min(found) if found else None), (str(manifest) if manifest is not None else None)
