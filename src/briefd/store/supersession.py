"""Which documents are superseded (K2, R1, B1): a document whose front matter says
``supersedes: old.md`` replaces that one, and readers of the old one should know."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping, Sequence

# (the superseding document's path, its scope)
Superseders = dict[str, tuple[tuple[str, str], ...]]


def superseders(conn: sqlite3.Connection, paths: Iterable[str]) -> Superseders:
    """Each of ``paths`` that another document supersedes → those documents with their scopes,
    by path (an ambiguous ``supersedes`` counts for the document it resolved to)."""
    wanted = sorted(set(paths))
    if not wanted:
        return {}
    marks = ",".join("?" * len(wanted))
    rows = conn.execute(
        "SELECT l.target_path, l.source_path, d.scope FROM links l "
        "JOIN documents d ON d.id = l.doc_id WHERE l.kind = 'relation' "
        "AND l.display = 'supersedes' AND l.status IN ('ok', 'ambiguous') "
        f"AND l.target_path IN ({marks}) AND l.source_path != l.target_path "
        "ORDER BY l.target_path, l.source_path",
        wanted,
    ).fetchall()
    found: dict[str, list[tuple[str, str]]] = {}
    for target, source, scope in rows:
        if (source, scope) not in found.setdefault(target, []):
            found[target].append((source, scope))
    return {path: tuple(by) for path, by in found.items()}


# named instead of a superseding document the caller may not read (its scope not requested)
NOT_REQUESTED = "a document in a scope not requested"


def superseded_by(
    found: Mapping[str, Sequence[tuple[str, str]]], path: str, scopes: Sequence[str]
) -> tuple[str, ...]:
    """The documents superseding ``path`` that a reader of ``scopes`` may open, then
    :data:`NOT_REQUESTED` when others exist (never their paths)."""
    by = found.get(path, ())
    seen = tuple(source for source, scope in by if scope in scopes)
    return seen + ((NOT_REQUESTED,) if len(seen) < len(by) else ())
