"""Resolving the stored links against the indexed documents (K5): every one, or after an
index run only those its changes can resolve otherwise (O4): the links of the documents it
wrote, the links to documents it wrote or deleted (their headings, anchors and block ids
may have changed), and, when documents were added or deleted (renamed), the links that may
be looked up by their names (:mod:`briefd.graph.reach`). The rest resolve as stored."""

from __future__ import annotations

import json
import posixpath
import sqlite3
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from briefd.graph.reach import name_key, target_keys, top_key
from briefd.graph.resolve import Catalog, resolve
from briefd.settings import DEFAULT_SCOPES
from briefd.sources.layout import in_scopes
from briefd.store import documents as docs_table
from briefd.store.sections import anchor_reader, block_reader

PREFIX = "link-prefix"  # index_meta: the knowledge folder's path in its git work tree


@dataclass(frozen=True, slots=True)
class LinkContext:
    """What links are resolved with besides the documents: the files ``outside`` every scope
    (found, not indexed) and the ``shared`` scopes (``default_scopes``: names or folder globs),
    which an ambiguous name prefers to another project's document."""

    outside: Sequence[str] = ()
    shared: Sequence[str] = DEFAULT_SCOPES
    prefix: str = ""  # the knowledge folder's path in its git work tree ("docs/"; '' at the top)
    skipped: Mapping[str, str] = field(default_factory=dict)  # files of a scope not indexed: why


@dataclass(frozen=True, slots=True)
class PathChanges:
    """What an index run changed: the documents it wrote (``added`` the ones new to the
    index among them) and the paths it deleted."""

    written: Collection[str]
    added: Collection[str]
    deleted: Collection[str]


def resolve_all_links(conn: sqlite3.Connection, links: LinkContext | None = None) -> None:
    """Resolve every stored link against the documents, naming the files outside every scope
    that a link reaches (it is then no typo, but still reaches no document)."""
    catalog = _catalog(conn, links or LinkContext())
    stored = docs_table.stored_links(conn)
    docs_table.save_resolutions(conn, [(i, resolve(r.link, catalog)) for i, r in stored])


def resolve_changed_links(
    conn: sqlite3.Connection, links: LinkContext, changes: PathChanges
) -> int:
    """Resolve the stored links ``changes`` can resolve otherwise, as
    :func:`resolve_all_links` would (the documents written and deleted already are); how
    many."""
    ids = _affected(conn, changes)
    if not ids:
        return 0
    where = "WHERE id IN (SELECT value FROM json_each(?))"
    stored = docs_table.stored_links(conn, where, [json.dumps(sorted(ids))])
    catalog = _catalog(conn, links)
    docs_table.save_resolutions(conn, [(i, resolve(r.link, catalog)) for i, r in stored])
    return len(stored)


def _catalog(conn: sqlite3.Connection, links: LinkContext) -> Catalog:
    rows = conn.execute("SELECT path, scope, headings FROM documents").fetchall()
    docs = [(r["path"], docs_table.headings_from_json(r["headings"])) for r in rows]
    scopes = {r["path"]: r["scope"] for r in rows}
    shared = {s for s in scopes.values() if in_scopes(s, links.shared)}
    return Catalog.build(
        docs,
        [*links.outside, *links.skipped],
        scopes,
        shared,
        block_reader(conn),
        links.prefix,
        links.skipped,
        anchor_reader(conn),
    )


def _affected(conn: sqlite3.Connection, changes: PathChanges) -> set[int]:
    """The ids of the links ``changes`` can resolve otherwise."""
    written = json.dumps(sorted(changes.written), ensure_ascii=False)
    touched = json.dumps(sorted({*changes.written, *changes.deleted}), ensure_ascii=False)
    ids = {
        row[0]
        for row in conn.execute(
            "SELECT l.id FROM links l JOIN documents d ON d.id = l.doc_id "
            "WHERE d.path IN (SELECT value FROM json_each(?))",
            (written,),
        )
    }
    ids.update(
        row[0]
        for row in conn.execute(
            "SELECT id FROM links WHERE target_path IN (SELECT value FROM json_each(?))",
            (touched,),
        )
    )
    moved = {*changes.added, *changes.deleted}
    if moved:
        keys = {name_key(posixpath.basename(p)) for p in moved}
        keys.update(top_key(p) for p in _tops_changed(conn, changes))
        ids.update(_named(conn, frozenset(keys)))
    return ids


def _tops_changed(conn: sqlite3.Connection, changes: PathChanges) -> set[str]:
    """The top folders (and top-level files) that documents were added to where there were
    none, or deleted from until none is left: a link from the top of the work tree
    (``/domain/x.md``) says whether it leads out of the knowledge folder by them."""
    added = set(changes.added)
    now, before = set(), {p.split("/", 1)[0] for p in changes.deleted}
    for (path,) in conn.execute("SELECT path FROM documents"):
        now.add(top := path.split("/", 1)[0])
        if path not in added:
            before.add(top)
    return now ^ before


def _named(conn: sqlite3.Connection, keys: frozenset[str]) -> list[int]:
    """The ids of the links that may be looked up by a path with one of ``keys``."""
    seen: dict[tuple[str, str], bool] = {}
    found = []
    rows = conn.cursor()
    rows.row_factory = None  # plain tuples: a tenth of a second at 100,000 links
    for link_id, kind, target in rows.execute("SELECT id, kind, target FROM links"):
        hit = seen.get((kind, target))
        if hit is None:
            reached = target_keys(kind, target)
            hit = seen[kind, target] = reached is None or not reached.isdisjoint(keys)
        if hit:
            found.append(link_id)
    return found
