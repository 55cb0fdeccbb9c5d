"""Graph expansion (R6): sections linked from the top hits join the result as related context.

Only outgoing links written in a hit's own section count (1 hop; front-matter relations are
bundle tiers of their own, not links here). A link with a #fragment
brings the section it names; a link to a whole document brings its first section. Related
sections come after every direct hit, are capped, and never repeat a direct hit.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Sequence

from briefd.store.sections import linked_section

SOURCES = 3  # how many of the top direct hits are expanded


def related_rowids(
    conn: sqlite3.Connection,
    direct: Sequence[int],
    scopes: Sequence[str],
    cap: int,
    keep: Callable[[Sequence[int]], Collection[int]] | None = None,
) -> list[tuple[int, int]]:
    """(related chunk rowid, direct hit rowid it is linked from), at most ``cap``; with
    ``keep`` (those of some rowids a filter such as tags lets through) only the sections it
    keeps, so a filter leaves the cap to the sections it lets through."""
    found: list[tuple[int, int]] = []
    taken = set(direct)
    for source in direct[:SOURCES]:
        for target in _linked(conn, source, scopes):
            if target not in taken:
                taken.add(target)
                found.append((target, source))
    if keep is not None:
        kept = keep([target for target, _ in found])
        found = [pair for pair in found if pair[0] in kept]
    return found[:cap]


def _linked(conn: sqlite3.Connection, rowid: int, scopes: Sequence[str]) -> list[int]:
    hit = conn.execute("SELECT doc_id, heading FROM chunks WHERE rowid = ?", (rowid,)).fetchone()
    if hit is None:
        return []
    links = conn.execute(
        "SELECT target_path, fragment FROM links WHERE doc_id = ? AND section = ? "
        "AND kind != 'relation' AND target_path IS NOT NULL AND status != 'broken' "
        "ORDER BY line, id",
        (hit["doc_id"], hit["heading"]),
    ).fetchall()
    targets = []
    for link in links:
        target = linked_section(conn, link["target_path"], link["fragment"], scopes)
        if target is not None and target != rowid:
            targets.append(target)
    return targets
