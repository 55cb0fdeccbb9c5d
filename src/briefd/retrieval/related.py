"""Graph expansion (R6): sections linked from the top hits join the result as related context.

Only outgoing links written in a hit's own section count (1 hop; front-matter relations are
bundle tiers of their own, not links here). A link with a #fragment
brings the section it names; a link to a whole document brings its first section. Related
sections come after every direct hit, are capped, and never repeat a direct hit.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Collection, Sequence

from briefd.store.sections import SectionFinder, section_finder

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
    find = section_finder(conn, scopes)
    for source in direct[:SOURCES]:
        for target in _linked(conn, source, find):
            if target not in taken:
                taken.add(target)
                found.append((target, source))
    if keep is not None:
        kept = keep([target for target, _ in found])
        found = [pair for pair in found if pair[0] in kept]
    return found[:cap]


def _linked(conn: sqlite3.Connection, rowid: int, find: SectionFinder) -> list[int]:
    hit = conn.execute(
        "SELECT c.doc_id, c.heading, c.start_line, d.headings FROM chunks c "
        "JOIN documents d ON d.id = c.doc_id WHERE c.rowid = ?",
        (rowid,),
    ).fetchone()
    if hit is None:
        return []
    first, last = _section_lines(json.loads(hit["headings"]), hit["start_line"])
    links = conn.execute(
        "SELECT target_path, fragment FROM links WHERE doc_id = ? AND section = ? "
        "AND line BETWEEN ? AND ? "
        "AND kind != 'relation' AND target_path IS NOT NULL AND status != 'broken' "
        "ORDER BY line, id",
        (hit["doc_id"], hit["heading"], first, last),
    ).fetchall()
    targets = []
    for link in links:
        target = find(link["target_path"], link["fragment"])
        if target is not None and target != rowid:
            targets.append(target)
    return targets


def _section_lines(headings: Sequence[Sequence[object]], line: int) -> tuple[int, int]:
    """The file lines of the H1–H3 section that holds ``line`` (every part of a long section
    has the same), so a heading the document repeats ("Notes" under two topics) does not lend
    one section the links of the other; ``headings`` as stored: [level, text, anchor, line]."""
    starts = [int(str(h[3])) for h in headings if int(str(h[0])) <= 3]
    before = [start for start in starts if start <= line]
    after = [start for start in starts if start > line]
    return (before[-1] if before else 0, after[0] - 1 if after else 1 << 30)
