"""Graph expansion (R6): sections linked from the top hits join the result as related context.

Only outgoing links written in a hit's own section count (1 hop). A link with a #fragment
brings the section it names; a link to a whole document brings its first section. Related
sections come after every direct hit, are capped, and never repeat a direct hit.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from briefd.text import slugify

SOURCES = 3  # how many of the top direct hits are expanded


def related_rowids(
    conn: sqlite3.Connection,
    direct: Sequence[int],
    scopes: Sequence[str],
    cap: int,
) -> list[tuple[int, int]]:
    """(related chunk rowid, direct hit rowid it is linked from), at most ``cap``."""
    found: list[tuple[int, int]] = []
    taken = set(direct)
    for source in direct[:SOURCES]:
        for target in _linked(conn, source, scopes):
            if target not in taken and len(found) < cap:
                taken.add(target)
                found.append((target, source))
    return found


def _linked(conn: sqlite3.Connection, rowid: int, scopes: Sequence[str]) -> list[int]:
    hit = conn.execute("SELECT doc_id, heading FROM chunks WHERE rowid = ?", (rowid,)).fetchone()
    if hit is None:
        return []
    links = conn.execute(
        "SELECT target_path, fragment FROM links WHERE doc_id = ? AND section = ? "
        "AND target_path IS NOT NULL AND status != 'broken' ORDER BY line, id",
        (hit["doc_id"], hit["heading"]),
    ).fetchall()
    targets = []
    for link in links:
        target = _section(conn, link["target_path"], link["fragment"], scopes)
        if target is not None and target != rowid:
            targets.append(target)
    return targets


def _section(
    conn: sqlite3.Connection, path: str, fragment: str | None, scopes: Sequence[str]
) -> int | None:
    marks = ", ".join("?" * len(scopes))
    rows = conn.execute(
        "SELECT c.rowid, c.heading, c.anchor, c.heading_path FROM chunks c "
        f"JOIN documents d ON d.id = c.doc_id WHERE d.path = ? AND c.scope IN ({marks}) "
        "ORDER BY c.position",
        (path, *scopes),
    ).fetchall()
    if not rows:
        return None
    if fragment:
        wanted = fragment.strip().lower()
        for row in rows:
            names = {row["heading"].lower(), slugify(row["heading"]), (row["anchor"] or "").lower()}
            names.update(h.lower() for h in json.loads(row["heading_path"]))
            if wanted in names or slugify(fragment) in names:
                return int(row["rowid"])
    return int(rows[0]["rowid"])
