"""Read views the API serves: a document with its sections and links (K5), documents per
scope (K1), the link catalogue for findings, and why a path is not served."""

from __future__ import annotations

import dataclasses
import difflib
import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from briefd.errors import NotFoundError
from briefd.graph.resolve import (
    ADD_SCOPE,
    Catalog,
    ambiguous_detail,
    not_indexed,
    path_key,
    same_name,
)
from briefd.model import OUTSIDE_SCOPES, DocumentView, Link, ResolvedLink, ScopeInfo
from briefd.store import documents as docs_table
from briefd.store.scopes import add_to_scopes, resolve_scopes
from briefd.store.sections import anchor_reader, block_reader


@dataclass(frozen=True, slots=True)
class DocumentSummary:
    """One line of ``briefd docs``: an indexed document of a scope."""

    scope: str
    path: str
    title: str
    sections: int
    tokens: int
    updated_at: str


def scope_counts(conn: sqlite3.Connection) -> list[ScopeInfo]:
    """Documents and chunks per scope."""
    rows = conn.execute(
        "SELECT d.scope, count(DISTINCT d.id) AS docs, count(c.rowid) AS chunks "
        "FROM documents d LEFT JOIN chunks c ON c.doc_id = d.id "
        "GROUP BY d.scope ORDER BY d.scope"
    )
    return [ScopeInfo(r["scope"], r["docs"], r["chunks"]) for r in rows]


@dataclass(frozen=True, slots=True)
class DocumentPage:
    """Documents of a listing from a point (``after``: the scope and path of the last one
    read), and how many the listing holds in all."""

    documents: list[DocumentSummary]
    total: int


def document_list(conn: sqlite3.Connection, scopes: Sequence[str] | None) -> list[DocumentSummary]:
    """Documents of ``scopes`` (None: every scope) by scope, then path, with their section
    and token counts."""
    return document_page(conn, scopes).documents


def document_page(
    conn: sqlite3.Connection,
    scopes: Sequence[str] | None,
    after: tuple[str, str] | None = None,
    limit: int | None = None,
) -> DocumentPage:
    """At most ``limit`` (None: all) of :func:`document_list` past ``after`` (a scope and a
    path: the order's key, so a page stays right while documents come and go between reads),
    with the count of the whole listing, read in one transaction by the caller."""
    allowed = resolve_scopes(conn, scopes, ()) if scopes else None
    where, args = "", tuple(allowed or ())
    if allowed is not None:
        where = f"WHERE d.scope IN ({', '.join('?' * len(allowed))})"
    total = conn.execute(f"SELECT count(*) FROM documents d {where}", args).fetchone()[0]
    if after is not None:
        where += f" {'AND' if where else 'WHERE'} (d.scope, d.path) > (?, ?)"
        args += after
    rows = conn.execute(
        "SELECT d.scope, d.path, d.title, count(c.rowid) AS sections, "
        "coalesce(sum(c.tokens), 0) AS tokens, coalesce(d.updated_at, d.indexed_at) AS updated "
        f"FROM documents d LEFT JOIN chunks c ON c.doc_id = d.id {where} "
        "GROUP BY d.id ORDER BY d.scope, d.path LIMIT ?",
        (*args, -1 if limit is None else limit),
    )
    return DocumentPage([DocumentSummary(*r) for r in rows], total)


def document_view(
    conn: sqlite3.Connection, path: str, allowed: Sequence[str] | None, sections: bool = True
) -> DocumentView | None:
    """The document at ``path`` if it is in ``allowed`` (None: any scope), with backlinks
    from the documents in ``allowed`` only and its links into other scopes without their
    target (:func:`_within`); without its sections (``chunks``) unless ``sections`` (a
    context reads them itself, and 40,000 of them took a second)."""
    row = _document_row(conn, path)
    if row is None or (allowed is not None and row["scope"] not in allowed):
        return None
    path = row["path"]
    chunks = (
        conn.execute("SELECT * FROM chunks WHERE doc_id = ? ORDER BY position", (row["id"],))
        if sections
        else ()
    )
    links = docs_table.stored_links(conn, "WHERE doc_id = ?", (row["id"],))
    where, args = _from_scopes(allowed)
    backlinks = docs_table.stored_links(
        conn, f"WHERE target_path = ? AND source_path != ?{where}", (path, path, *args)
    )
    return DocumentView(
        path=row["path"],
        scope=row["scope"],
        title=row["title"],
        front_matter=docs_table.front_matter_from_row(row),
        body=row["body"],
        updated_at=row["updated_at"] or row["indexed_at"],
        chunks=tuple(docs_table.chunk_from_row(c, path) for c in chunks),
        links=_ambiguity_within(conn, _within(conn, [r for _, r in links], allowed), allowed),
        backlinks=_ambiguity_within(conn, [r for _, r in backlinks], allowed),
        problems=tuple(json.loads(row["problems"])),
        body_start_line=row["body_start_line"],
    )


def _within(
    conn: sqlite3.Connection, links: Sequence[ResolvedLink], allowed: Sequence[str] | None
) -> tuple[ResolvedLink, ...]:
    """``links`` as a reader of ``allowed`` (None: every scope) sees them: one into a document
    of another scope keeps what was written, not where it leads (the path a read in these
    scopes would refuse), as backlinks from other scopes are left out."""
    targets = sorted({r.target_path for r in links if r.target_path})
    if allowed is None or not targets:
        return tuple(links)
    marks = ", ".join("?" * len(targets))
    scope_of = dict(
        conn.execute(f"SELECT path, scope FROM documents WHERE path IN ({marks})", targets)
    )
    return tuple(
        _outside(r, scope_of[r.target_path])
        if r.target_path in scope_of and scope_of[r.target_path] not in allowed
        else r
        for r in links
    )


def _ambiguity_within(
    conn: sqlite3.Connection, links: Sequence[ResolvedLink], allowed: Sequence[str] | None
) -> tuple[ResolvedLink, ...]:
    """``links`` with the detail of each ambiguous one as a reader of ``allowed`` (None: every
    scope) may see it: the other documents its name matches that are in ``allowed`` are named,
    those in other scopes only counted (their paths are ones such a read would refuse)."""
    if allowed is None or not any(r.status == "ambiguous" for r in links):
        return tuple(links)
    scope_of: dict[str, str] = dict(conn.execute("SELECT path, scope FROM documents"))
    catalog = Catalog.build((path, ()) for path in scope_of)
    narrowed = []
    for r in links:
        if r.status == "ambiguous" and r.target_path is not None:
            others = [p for p in same_name(r.link, catalog) if p != r.target_path]
            shown = [p for p in others if scope_of[p] in allowed]
            detail = ambiguous_detail(r.target_path, shown, len(others) - len(shown))
            r = dataclasses.replace(r, detail=detail)
        narrowed.append(r)
    return tuple(narrowed)


def _outside(link: ResolvedLink, scope: str) -> ResolvedLink:
    why = (
        f"links into scope '{scope}', which this request did not ask for; {add_to_scopes()} "
        "to follow it"
    )
    return ResolvedLink(link.link, None, OUTSIDE_SCOPES, why)


def _document_row(conn: sqlite3.Connection, path: str) -> sqlite3.Row | None:
    """The document at ``path``, or at the path it spells with its accents composed otherwise
    (``café.md`` typed composed, named decomposed as macOS writes file names)."""
    query = "SELECT * FROM documents WHERE path = ?"
    row: sqlite3.Row | None = conn.execute(query, (path,)).fetchone()
    if row is None:
        wanted = path_key(path)
        spelled = [
            p for (p,) in conn.execute("SELECT path FROM documents") if path_key(p) == wanted
        ]
        row = conn.execute(query, (min(spelled),)).fetchone() if spelled else None
    return row


def visible(
    conn: sqlite3.Connection,
    path: str,
    scopes: Sequence[str] | None,
    scoped: bool,
    default_scopes: Sequence[str],
) -> DocumentView:
    """The document at ``path`` if the caller may read it: only documents in ``scopes``
    (``all``: every scope) are visible; without ``scopes`` a ``scoped`` call (REST and MCP,
    serving agents) sees the default scopes, as search does, and an unscoped one (``briefd
    doc`` on the user's own machine) every document. Backlinks from documents that are not
    visible are left out; :class:`NotFoundError` says why a path is not served."""
    path = path.strip().removeprefix("./")
    allowed = resolve_scopes(conn, scopes or None, default_scopes) if scopes or scoped else None
    view = document_view(conn, path, allowed) or document_view(conn, document_key(path), allowed)
    if view is None:
        raise NotFoundError(not_found(conn, path, allowed))
    return view


def document_key(path: str) -> str:
    """``path`` as the index spells documents, for one not found as given: without the spaces
    around it, a ``./`` ahead, doubled slashes or ``/./``, and with Windows' backslashes as
    slashes (an agent on Windows joins ``domain\\refunds.md``), so every tool finds a
    document by the same spellings; a ``..`` stays (no document's path holds one)."""
    key = path.strip().replace("\\", "/")
    lead = "/" if key.startswith("/") else ""
    return lead + "/".join(part for part in key.split("/") if part not in ("", "."))


def link_catalog(conn: sqlite3.Connection) -> tuple[list[ResolvedLink], Catalog]:
    """Every stored link, and the catalogue of documents and headings they point into."""
    rows = conn.execute("SELECT path, headings FROM documents").fetchall()
    docs = ((r["path"], docs_table.headings_from_json(r["headings"])) for r in rows)
    catalog = Catalog.build(docs, blocks=block_reader(conn), anchors=anchor_reader(conn))
    return [r for _, r in docs_table.stored_links(conn)], catalog


def paths_in(conn: sqlite3.Connection, allowed: Sequence[str] | None) -> list[str]:
    """Paths of the documents in ``allowed`` (None: every document)."""
    if allowed is None:
        return [r[0] for r in conn.execute("SELECT path FROM documents ORDER BY path")]
    marks = ", ".join("?" * len(allowed))
    rows = conn.execute(
        f"SELECT path FROM documents WHERE scope IN ({marks}) ORDER BY path", tuple(allowed)
    )
    return [r[0] for r in rows]


def closest_path(path: str, paths: Sequence[str]) -> str | None:
    """The indexed path nearest ``path``, letter case aside ("domain/REFUNDS.md" is nearest
    domain/refunds.md, not the path spelled like its capitals, domain/fees.md), among those
    whose file name is near its own (difflib's 0.6): a folder and an extension shared are no
    likeness ("domain/nonexist.md" is not "domain/fees.md")."""
    folded = {p.casefold(): p for p in paths}
    name = _name(path.casefold())
    alike = difflib.SequenceMatcher(b=name)
    near = []
    for candidate in folded:
        alike.set_seq1(_name(candidate))
        if alike.real_quick_ratio() >= 0.6 and alike.quick_ratio() >= 0.6 and alike.ratio() >= 0.6:
            near.append(candidate)
    close = difflib.get_close_matches(path.casefold(), near, n=1, cutoff=0.0)
    return folded[close[0]] if close else None


def _name(path: str) -> str:
    """A path's file name without its extension ("domain/retry-policy.md": retry-policy)."""
    name = path.rpartition("/")[2]
    stem = name.rpartition(".")[0]
    return stem or name


_NAMED = 3  # paths a "did you mean" names at most


def ending_with(path: str, paths: Sequence[str]) -> list[str]:
    """The indexed paths ``path`` ends (letter case aside) after a folder: "builder.md" or
    "reference/builder.md", as the relative links in a served text name documents; else
    those it names as a wikilink does: "retry-policy", "Retry Policy", "[[retry-policy#Backoff]]"
    (a served text's wikilinks name documents by file name alone)."""
    tail = "/" + path.partition("#")[0].strip("/").casefold()  # a link's #section aside
    ending = [p for p in paths if tail != "/" and p.casefold().endswith(tail)]
    name = path.strip().removeprefix("[[").removesuffix("]]").partition("|")[0]
    name = name.partition("#")[0].strip()
    if ending or not name or name.endswith("/"):
        return ending
    link = Link("", "", 0, name, None, None, "wiki")
    catalog = Catalog.build((p, ()) for p in paths)
    return sorted(same_name(link, catalog))


def not_found(conn: sqlite3.Connection, path: str, allowed: Sequence[str] | None) -> str:
    """Why ``path`` is not served, naming only documents in ``allowed`` (None: every scope):
    the documents its file name is (or the path it ends), else the nearest spelling; a file
    of the knowledge folder outside every scope is named as such, with the setting to change."""
    outside = Catalog.build([], docs_table.unscoped_files(conn)).outside
    found = outside.path(path) if outside else None
    if found is not None:
        return f"{not_indexed(found)}; {ADD_SCOPE} to read it"
    skipped = docs_table.skipped_files(conn)
    if path in skipped:
        return f"{path} exists but is not indexed: {skipped[path]}"
    paths = paths_in(conn, allowed)
    named = ending_with(path, paths)
    if named:
        more = f" (and {len(named) - _NAMED} more)" if len(named) > _NAMED else ""
        close: str | None = " or ".join(named[:_NAMED]) + more
    else:
        close = closest_path(path, paths)
    guess = f"; did you mean {close}?" if close else ""
    if allowed is None:
        hint = guess or "; list documents with `briefd docs`"
        return f"no document '{path}' in the index (or outside the requested scopes){hint}"
    row = conn.execute("SELECT scope FROM documents WHERE path = ?", (path,)).fetchone()
    scope = row[0] if row is not None else None
    if scope is not None and scope not in allowed:
        guess = f"; scope '{scope}' is not requested: {add_to_scopes()} to read it"
    example = f", e.g. {paths[0]}" if paths else ""
    hint = guess or f"; paths are relative to the repository root{example}"
    return f"no document '{path}' in scopes {', '.join(allowed) or '(none indexed)'}{hint}"


def _from_scopes(allowed: Sequence[str] | None) -> tuple[str, tuple[str, ...]]:
    """A condition on a row's ``doc_id`` (and its arguments): its document is in ``allowed``
    (None: no condition)."""
    if allowed is None:
        return "", ()
    marks = ", ".join("?" * len(allowed))
    return f" AND doc_id IN (SELECT id FROM documents WHERE scope IN ({marks}))", tuple(allowed)
