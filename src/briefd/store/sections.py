"""Sections found through a document's structure rather than through search: a document's
sections in order, the section a link points at or is written in, and the documents marked
``always: true`` (B8, R6)."""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Callable, Sequence

from briefd.markdown.blocks import block_ids
from briefd.text import (
    caseless,
    html_heading_names,
    nested_heading_position,
    numbered_slug_position,
    slugify,
)

SECTION_COLUMNS = (
    "c.rowid AS rowid, c.id, d.path, d.scope, d.title, c.heading, c.heading_path, c.content, "
    "c.start_line, c.end_line, c.position, coalesce(d.updated_at, d.indexed_at) AS age"
)


def _in(values: Sequence[object]) -> str:
    return ", ".join("?" * len(values))


def sections(conn: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, sqlite3.Row]:
    """Sections by rowid, with their document's path, scope, title and age."""
    if not rowids:
        return {}
    rows = conn.execute(
        f"SELECT {SECTION_COLUMNS} FROM chunks c JOIN documents d ON d.id = c.doc_id "
        f"WHERE c.rowid IN ({_in(rowids)})",
        tuple(rowids),
    )
    return {row["rowid"]: row for row in rows}


def document_sections(conn: sqlite3.Connection, path: str) -> list[sqlite3.Row]:
    """Every section of the document at ``path``, in document order."""
    return conn.execute(
        f"SELECT {SECTION_COLUMNS} FROM chunks c JOIN documents d ON d.id = c.doc_id "
        "WHERE d.path = ? ORDER BY c.position",
        (path,),
    ).fetchall()


def linked_section(
    conn: sqlite3.Connection, path: str, fragment: str | None, scopes: Sequence[str]
) -> int | None:
    """The section a link to ``path`` brings (its ``#fragment`` by anchor, heading, slug or
    GitHub's numbered slug of a repeated heading, else the first section), if the document is
    in ``scopes``."""
    rows = conn.execute(
        "SELECT c.rowid, c.heading, c.anchor, c.heading_path, c.start_line, d.headings "
        f"FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE d.path = ? "
        f"AND c.scope IN ({_in(scopes)}) "
        "ORDER BY c.position",
        (path, *scopes),
    ).fetchall()
    if not rows:
        return None
    if fragment:
        wanted = caseless(fragment.strip())
        for row in rows:
            heading, anchor = row["heading"], row["anchor"] or ""
            names = {caseless(heading), slugify(heading), caseless(anchor)}
            names.update(caseless(h) for h in json.loads(row["heading_path"]))
            names.update(html_heading_names(heading))
            if wanted in names or slugify(fragment) in names:
                return int(row["rowid"])
        line = _heading_line(json.loads(rows[0]["headings"]), fragment)
        if line is None and fragment.strip().startswith("^"):  # an Obsidian block id
            line = block_reader(conn)(path).get(fragment.strip()[1:])
        at = [r for r in rows if line is not None and r["start_line"] <= line]
        if at:  # the section that holds the heading (an H4 is inside one)
            return int(at[-1]["rowid"])
    return int(rows[0]["rowid"])


def _heading_line(headings: Sequence[Sequence[object]], fragment: str) -> int | None:
    """The file line of the heading of any level that ``fragment`` names (its text, anchor,
    slug or GitHub's numbered slug of a repeated heading); ``headings`` as stored: [level,
    text, anchor, line] (no model import)."""
    wanted, slug = caseless(fragment.strip()), slugify(fragment)
    for _, text, anchor, line in headings:
        names = {caseless(str(text)), slugify(str(text)), caseless(str(anchor or ""))}
        names.update(html_heading_names(str(text)))
        if wanted in names or slug in names:
            return int(str(line))
    nested = nested_heading_position([(int(str(h[0])), str(h[1])) for h in headings], fragment)
    index = (
        nested
        if nested is not None
        else numbered_slug_position([str(h[1]) for h in headings], fragment)
    )
    return None if index is None else int(str(headings[index][3]))


def section_at(conn: sqlite3.Connection, path: str, line: int) -> int | None:
    """The section of ``path`` that holds file line ``line`` (a link's provenance), else its
    first section (a front-matter relation sits above every section)."""
    row = conn.execute(
        "SELECT c.rowid FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE d.path = ? "
        "ORDER BY (c.start_line <= ? AND c.end_line >= ?) DESC, c.position LIMIT 1",
        (path, line, line),
    ).fetchone()
    return None if row is None else int(row[0])


def document_scope(conn: sqlite3.Connection, path: str) -> str | None:
    """The scope of the indexed document at ``path`` (None: not indexed)."""
    row = conn.execute("SELECT scope FROM documents WHERE path = ?", (path,)).fetchone()
    return str(row[0]) if row is not None else None


def always_documents(conn: sqlite3.Connection, scopes: Sequence[str]) -> list[str]:
    """Paths of the documents in ``scopes`` whose front matter says ``always: true``."""
    if not scopes:
        return []
    rows = conn.execute(
        f"SELECT path FROM documents WHERE scope IN ({_in(scopes)}) "
        "AND json_extract(front_matter, '$.always') = 1 ORDER BY path",
        tuple(scopes),
    )
    return [r[0] for r in rows]


def documents_with_refs(
    conn: sqlite3.Connection, scopes: Sequence[str]
) -> list[tuple[int, str, tuple[str, ...]]]:
    """(id, path, refs) of the documents in ``scopes`` that govern code paths, by path."""
    if not scopes:
        return []
    rows = conn.execute(
        f"SELECT id, path, refs FROM documents WHERE scope IN ({_in(scopes)}) "
        "AND refs != '[]' ORDER BY path",
        tuple(scopes),
    )
    return [(r["id"], r["path"], tuple(json.loads(r["refs"]))) for r in rows]


def links_within(
    conn: sqlite3.Connection, path: str, start_line: int, end_line: int
) -> list[tuple[str, str | None, int]]:
    """(target path, fragment, line) of the resolved links (not relations) written in lines
    ``start_line``–``end_line`` of ``path``, in line order."""
    rows = conn.execute(
        "SELECT target_path, fragment, line FROM links WHERE source_path = ? AND line BETWEEN ? "
        "AND ? AND kind != 'relation' AND target_path IS NOT NULL AND status != 'broken' "
        "ORDER BY line, id",
        (path, start_line, end_line),
    )
    return [(r[0], r[1], r[2]) for r in rows]


def block_reader(conn: sqlite3.Connection) -> Callable[[str], dict[str, int]]:
    """A document's Obsidian block ids with their file lines, read from its stored body the
    first time a link asks for one of them."""

    @functools.cache
    def read(path: str) -> dict[str, int]:
        row = conn.execute(
            "SELECT body, body_start_line FROM documents WHERE path = ?", (path,)
        ).fetchone()
        return block_ids(row[0], row[1]) if row is not None else {}

    return read
