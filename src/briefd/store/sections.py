"""Sections found through a document's structure rather than through search: a document's
sections in order, the section a link points at or is written in, and the documents marked
``always: true`` (B8, R6)."""

from __future__ import annotations

import bisect
import functools
import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from briefd.markdown.blocks import block_ids
from briefd.text import (
    caseless,
    html_anchor_line,
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


SectionFinder = Callable[[str, str | None], int | None]
NAMES_CACHE = 64  # documents whose names (:func:`document_names`) a process keeps


def linked_section(
    conn: sqlite3.Connection, path: str, fragment: str | None, scopes: Sequence[str]
) -> int | None:
    """The section a link to ``path`` brings (its ``#fragment`` by anchor, heading, slug or
    GitHub's numbered slug of a repeated heading, else the first section), if the document is
    in ``scopes``."""
    return section_finder(conn, scopes)(path, fragment)


def section_finder(conn: sqlite3.Connection, scopes: Sequence[str]) -> SectionFinder:
    """:func:`linked_section` for many links at once (a search's related links, a bundle's
    hops): each linked document is read once, and its names worked out once, however many
    links name it."""
    blocks, anchors = block_reader(conn), anchor_reader(conn)

    @functools.cache
    def sections_of(path: str) -> _Sections | None:
        return _Sections.read(conn, path, scopes)

    @functools.cache
    def names_of(path: str) -> _Names:
        found = sections_of(path)
        assert found is not None  # asked only of a document with sections
        row = conn.execute("SELECT headings FROM documents WHERE id = ?", (found.doc_id,))
        return document_names(found.named(), row.fetchone()[0])

    def find(path: str, fragment: str | None) -> int | None:
        found = sections_of(path)
        if found is None:
            return None
        if not fragment:
            return found.rowids[0]
        names = names_of(path)
        named = names.section(fragment)
        if named is not None:
            return found.rowids[named]
        line = names.heading_line(fragment)
        if line is None and fragment.strip().startswith("^"):  # an Obsidian block id
            line = blocks(path).get(fragment.strip()[1:])
        if line is None:  # an HTML anchor: <a name="old-heading"></a>
            line = html_anchor_line(anchors(path), fragment)
        return found.rowids[0] if line is None else found.holding(line)

    return find


@dataclass(frozen=True, slots=True)
class _Sections:
    """One document's sections in some scopes, in order: rowids, first and last lines, and
    the rows their names come from."""

    doc_id: int
    rowids: tuple[int, ...]
    starts: tuple[int, ...]
    rows: tuple[sqlite3.Row, ...]
    ends: tuple[int, ...] = ()

    @classmethod
    def read(cls, conn: sqlite3.Connection, path: str, scopes: Sequence[str]) -> _Sections | None:
        rows = conn.execute(
            "SELECT c.rowid, c.heading, c.anchor, c.heading_path, c.start_line, c.end_line, "
            "c.doc_id "
            "FROM documents d JOIN chunks c ON c.doc_id = d.id WHERE d.path = ? "
            f"AND c.scope IN ({_in(scopes)}) ORDER BY c.position",
            (path, *scopes),
        ).fetchall()
        if not rows:
            return None
        return cls(
            doc_id=int(rows[0]["doc_id"]),
            rowids=tuple(int(r["rowid"]) for r in rows),
            starts=tuple(int(r["start_line"]) for r in rows),
            rows=tuple(rows),
            ends=tuple(int(r["end_line"]) for r in rows),
        )

    def named(self) -> tuple[tuple[str, str, str], ...]:
        """(heading, anchor, heading_path as stored) of each section: what its names are."""
        return tuple((r["heading"], r["anchor"] or "", r["heading_path"]) for r in self.rows)

    def holding(self, line: int) -> int:
        """The section that holds file ``line`` (an H4 is inside one); a line between two
        sections (the heading of an H2 whose text is all under the H3 after it) the one after
        it, not the one before; a line above every section the first."""
        at = max(bisect.bisect_right(self.starts, line) - 1, 0)
        if self.ends and line > self.ends[at] and at + 1 < len(self.rowids):
            at += 1
        return self.rowids[at]


@dataclass(frozen=True, slots=True)
class _Names:
    """What a ``#fragment`` names in one document: a section by its heading, anchor or a
    heading above it (``by_section``: name → section index), a heading of any level by its
    text, slug or anchor (``by_heading``: name → heading index); each name is the first
    section's or heading's that has it."""

    by_section: dict[str, int]
    headings: tuple[tuple[int, str, int], ...]  # (level, text, file line)
    by_heading: dict[str, int]

    @classmethod
    def of(
        cls, sections: Sequence[tuple[str, str, str]], stored: Sequence[Sequence[object]]
    ) -> _Names:
        """``sections``: as :meth:`_Sections.named` gives them; ``stored``: the document's
        headings as stored, [level, text, anchor, line]."""
        by_section: dict[str, int] = {}
        for index, (heading, held, heading_path) in enumerate(sections):
            for name in _section_names(heading, held, heading_path):
                by_section.setdefault(name, index)
        headings: list[tuple[int, str, int]] = []
        by_heading: dict[str, int] = {}
        for index, (level, text, anchor, line) in enumerate(stored):
            text, anchor = str(text), str(anchor or "")
            headings.append((int(str(level)), text, int(str(line))))
            for name in (caseless(text), slugify(text), caseless(anchor)):
                by_heading.setdefault(name, index)
            for name in html_heading_names(text):
                by_heading.setdefault(name, index)
        return cls(by_section, tuple(headings), by_heading)

    def section(self, fragment: str) -> int | None:
        """The index of the first section ``fragment`` names."""
        return _first(self.by_section, fragment)

    def heading_line(self, fragment: str) -> int | None:
        """The file line of the heading of any level that ``fragment`` names (its text,
        anchor or slug, an Obsidian chain of headings, GitHub's numbered slug of a repeated
        heading)."""
        index = _first(self.by_heading, fragment)
        if index is None:
            index = nested_heading_position([(h[0], h[1]) for h in self.headings], fragment)
        if index is None:
            index = numbered_slug_position([h[1] for h in self.headings], fragment)
        return None if index is None else self.headings[index][2]


@functools.lru_cache(maxsize=NAMES_CACHE)
def document_names(sections: tuple[tuple[str, str, str], ...], headings: str) -> _Names:
    """A document's names (:class:`_Names`), worked out once for the same sections and stored
    headings (JSON) and kept for the next search that follows a link into it: slugging every
    heading of node's http2.md (90 sections) again in every search whose hits linked there
    made a search's related links p95 8-10 ms on a busy machine (4.7-5.4 kept). Keyed by what
    the names are made of, so an edited document is never answered from its old names."""
    return _Names.of(sections, json.loads(headings))


def _first(names: dict[str, int], fragment: str) -> int | None:
    """The first index a ``#fragment`` names, as written (case-folded) or as a slug."""
    found = [names[n] for n in (caseless(fragment.strip()), slugify(fragment)) if n in names]
    return min(found) if found else None


def _section_names(heading: str, anchor: str, heading_path: str) -> set[str]:
    """What a ``#fragment`` names a section by: its heading's text, slug and HTML names, its
    anchor, and the text of each heading above it (``heading_path`` as stored, JSON)."""
    names = {caseless(heading), slugify(heading), caseless(anchor)}
    names.update(caseless(h) for h in json.loads(heading_path))
    names.update(html_heading_names(heading))
    return names


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


def anchor_reader(conn: sqlite3.Connection) -> Callable[[str], dict[str, int]]:
    """A document's HTML anchors outside its headings (``<a name="old-heading">``) with their
    file lines, read from its stored body the first time a link asks for one of them."""

    @functools.cache
    def read(path: str) -> dict[str, int]:
        # imported here: the Markdown readers load briefd.model, which the prompt hook's
        # in-process answer never needs (tests/hook/test_units.py)
        from briefd.markdown.anchors import html_ids

        row = conn.execute(
            "SELECT body, body_start_line FROM documents WHERE path = ?", (path,)
        ).fetchone()
        return html_ids(row[0], row[1]) if row is not None else {}

    return read


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
