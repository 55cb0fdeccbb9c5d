"""``briefd doc``, ``docs``, ``scopes``, ``links`` and ``version``: looking at what is
indexed."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import typer
from rich.cells import cell_len
from rich.table import Table
from rich.text import Text

from briefd.__about__ import __version__
from briefd.api import Briefd
from briefd.cli.output import (
    console,
    errors,
    fail,
    print_json,
    printable,
    reported_errors,
    utf8_text,
)
from briefd.cli.search import knowledge_path, split_scopes
from briefd.errors import BriefdError
from briefd.model import DocumentView, LinkFindings, ResolvedLink
from briefd.settings import load_settings
from briefd.store import sync_state
from briefd.store.migrations import SCHEMA_VERSION
from briefd.store.peek import peek
from briefd.store.scopes import default_scope_warnings
from briefd.store.views import DocumentSummary
from briefd.text import whole_characters

MIN_TITLE = 16  # a title cut shorter than this says too little: it wraps instead


def register(app: typer.Typer) -> None:
    app.command("doc")(doc_command)
    app.command("docs")(docs_command)
    app.command("scopes")(scopes_command)
    app.command("links")(links_command)
    app.command("version")(version_command)


def doc_command(
    ctx: typer.Context,
    path: str = typer.Argument(
        ...,
        help="Document path relative to the knowledge root, or the file's own path.",
        callback=utf8_text,
    ),
    scopes: list[str] | None = typer.Option(
        None, "--scopes", "--scope", help="Only within these scopes."
    ),
    json_output: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """Show a document with its sections, links and backlinks."""
    with reported_errors(), ctx.obj.api() as api:
        view = api.document(knowledge_path(path, api.settings.source), split_scopes(scopes))
    if json_output:
        print_json(view)
        return
    _print_document(view)


def _print_document(view: DocumentView) -> None:
    path, title = printable(view.path), printable(" ".join(view.title.split()))  # one line
    console.print(f"{path}  ({view.scope}, updated {view.updated_at})", markup=False)
    console.print(f"title: {title}", markup=False)
    fm = view.front_matter
    declared: dict[str, list[str]] = {}
    for relation, target in fm.relations:
        declared.setdefault(relation, []).append(target)
    listed = (("tags", fm.tags), ("aliases", fm.aliases), ("refs", fm.refs), *declared.items())
    for key, values in listed:
        if values:
            console.print(f"{key}: {', '.join(values)}", markup=False)
    if fm.always:
        console.print("always: true", markup=False)
    for problem in view.problems:
        console.print(f"warning: {problem}", markup=False)
    console.print()
    console.print(view.body.rstrip(), markup=False)
    console.print()
    console.print(f"sections ({len(view.chunks)}):", markup=False)
    for chunk in view.chunks:
        crumb = " > ".join(chunk.heading_path) or chunk.heading
        console.print(
            f"  {chunk.id}  lines {chunk.start_line}-{chunk.end_line}  {chunk.tokens:>4} tok  "
            + printable(crumb),
            markup=False,
        )
    console.print(f"links ({len(view.links)}):", markup=False)
    for link in view.links:
        console.print(f"  line {link.link.line}: {printable(_describe_link(link))}", markup=False)
    console.print(f"backlinks ({len(view.backlinks)}):", markup=False)
    for line, count in _backlink_lines(view.backlinks).items():
        times = f"  ({count} links)" if count > 1 else ""
        console.print(f"  {printable(line)}{times}", markup=False)


def _backlink_lines(backlinks: tuple[ResolvedLink, ...]) -> dict[str, int]:
    """Each backlink as its source line, section and the heading it names; a line linking
    the document twice alike (``[[b]] … [[b]]``) is shown once with its count."""
    lines: dict[str, int] = {}
    for link in backlinks:
        where = link.link.section
        if link.link.kind == "relation":  # above every section: say what it declares
            where = f"front matter: {link.link.display}"
        anchor = f" → #{link.link.fragment}" if link.link.fragment else ""
        line = f"{link.link.source_path}:{link.link.line} ({where}){anchor}"
        lines[line] = lines.get(line, 0) + 1
    return lines


def _describe_link(link: ResolvedLink) -> str:
    written = link.link.target + (f"#{link.link.fragment}" if link.link.fragment else "")
    if link.link.kind == "relation":
        written = f"{link.link.display}: {written}"
    target = link.target_path or "?"
    if link.target_path == link.link.source_path:  # not another document
        # [[#Heading]], [text](#anchor) name one of its sections; [[itself]] names it whole
        target = "its own section" if link.link.fragment else "itself"
    note = f"  [{link.status}: {link.detail}]" if link.status != "ok" else ""
    return f"{written} → {target}{note}"


def docs_command(
    ctx: typer.Context,
    scopes: list[str] | None = typer.Option(None, "--scopes", "--scope", help="Only these scopes."),
    json_output: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """List the indexed documents per scope, with their sections and tokens."""
    with reported_errors(), ctx.obj.api() as api:
        found = api.documents(split_scopes(scopes))
    if json_output:
        print_json({"documents": found})
        return
    if not found:
        console.print("No documents indexed; run `briefd index` (see `briefd scopes`).")
        return
    for line in listing(found, console.width if console.is_terminal else None):
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def scopes_command(
    ctx: typer.Context, json_output: bool = typer.Option(False, "--json", help="Print as JSON.")
) -> None:
    """List the scopes with their document and chunk counts."""
    with reported_errors(), ctx.obj.api() as api:
        scopes = api.scopes()
        report = api.last_report()
        defaults = list(api.settings.default_scopes)
    warnings = default_scope_warnings(defaults, [s.name for s in scopes])
    if json_output:  # the fields of GET /api/scopes, and what the last run left unscoped
        unscoped = report.get("skipped", [])
        found = {"scopes": scopes, "default_scopes": defaults, "unscoped": unscoped}
        print_json({**found, "warnings": warnings} if warnings else found)
        return
    table = Table()
    table.add_column("scope")
    table.add_column("documents", justify="right")
    table.add_column("chunks", justify="right")
    for scope in scopes:
        table.add_row(Text(scope.name), str(scope.documents), str(scope.chunks))
    console.print(table)
    for warning in warnings:
        console.print(f"warning: {warning}", markup=False, soft_wrap=True)


def links_command(
    ctx: typer.Context,
    check: bool = typer.Option(
        False, "--check", help="Exit 1 when a link is broken or names an unknown anchor (for CI)."
    ),
    json_output: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """Report broken and ambiguous links, unknown and duplicate anchors, orphans, and links
    to superseded documents."""
    with reported_errors(), ctx.obj.api() as api:
        found = api.link_findings()
    if json_output:
        print_json(found)
    else:
        _print_findings(found)
    if check and (failing := check_failures(found)):
        fail(f"links check failed: {failing}; fix them or the documents they point to")


def check_failures(found: LinkFindings) -> str:
    """What fails ``briefd links --check`` ('' when nothing does): links that reach no
    document and links to a heading or anchor their document lacks. Ambiguous links (one
    target was chosen), duplicate anchors and orphans are reported but do not fail it."""
    counts = ((len(found.broken), "broken link"), (len(found.unknown_anchors), "unknown anchor"))
    return ", ".join(f"{n} {what}{'s' if n != 1 else ''}" for n, what in counts if n)


def _print_findings(found: LinkFindings) -> None:
    sections: list[tuple[str, list[str]]] = [
        ("broken links", [_at(r) + f"{r.link.target} ({r.detail})" for r in found.broken]),
        ("ambiguous links", [_at(r) + r.detail for r in found.ambiguous]),
        ("unknown anchors", [_at(r) + r.detail for r in found.unknown_anchors]),
        (
            "duplicate anchors",
            [
                f"{p}: #{a} on lines {', '.join(map(str, ls))}"
                for p, a, ls in found.duplicate_anchors
            ],
        ),
        ("orphans (no inbound links)", list(found.orphans)),
        ("links to superseded documents", [_at(r) + r.detail for r in found.to_superseded]),
    ]
    for title, rows in sections:
        console.print(f"{title}: {len(rows)}", markup=False)
        for row in rows:
            console.print(f"  {printable(row)}", markup=False)


def _at(resolved: ResolvedLink) -> str:
    return f"{resolved.link.source_path}:{resolved.link.line} "


def version_command(
    ctx: typer.Context,
    json_output: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """Print the briefd version, index schema version and SQLite version, and the knowledge
    commit the configured index serves, or why it cannot be read (with --json also the
    relevance gate's calibration)."""
    info: dict[str, object] = {
        "briefd": __version__,
        "schema": SCHEMA_VERSION,
        "sqlite": sqlite3.sqlite_version,
    }
    index = _served(ctx)
    if json_output:  # an earlier briefd's index is not upgraded by reading its calibration
        calibration = {} if _earlier(index) else _calibration(ctx)
        if index:  # null where an earlier schema does not say
            index |= {key: index.get(key) for key in ("commit", "indexed_at")}
        print_json({**info, **({"index": index} if index else {}), **calibration})
        return
    console.print(
        f"briefd {__version__} (index schema {SCHEMA_VERSION}, SQLite {sqlite3.sqlite_version})",
        markup=False,
    )
    if index:
        console.print(_served_line(index), markup=False, soft_wrap=True)
    else:  # no index, or one (or settings) it cannot read: why, on stderr, as --json says it
        _calibration(ctx)


def _served(ctx: typer.Context) -> dict[str, object]:
    """The configured index and what it serves, read-only and without any fetch ({}: there is
    no index, or it cannot be read; --json says why in ``index_error``)."""
    try:
        db = load_settings(ctx.obj.config, overrides={"db": ctx.obj.db}).db.absolute()
        if not db.is_file():
            return {}
        conn = peek(db)
        conn.row_factory = sqlite3.Row
        try:
            schema = int(conn.execute("PRAGMA user_version").fetchone()[0])
            return {"path": str(db), "schema": schema, **_served_by(conn, schema)}
        finally:
            conn.close()
    except (BriefdError, sqlite3.Error, ValueError):  # ValueError: a report no JSON
        return {}


def _served_by(conn: sqlite3.Connection, schema: int) -> dict[str, object]:
    """What :func:`sync_state.served` reads; of an earlier briefd's index, what its schema
    has (one before schema 15 has no ``index_meta``: the commit is not known)."""
    try:
        return sync_state.served(conn)
    except sqlite3.OperationalError:  # a table or column of a later schema
        if not 0 < schema < SCHEMA_VERSION:
            raise
        return {}


def _earlier(index: dict[str, object]) -> bool:
    """The index is of an earlier briefd's schema: the next command that opens it upgrades
    it (``briefd version`` does not)."""
    schema = index.get("schema")
    return isinstance(schema, int) and 0 < schema < SCHEMA_VERSION


def _served_line(index: dict[str, object]) -> str:
    schema = index["schema"]
    if isinstance(schema, int) and schema > SCHEMA_VERSION:
        return (
            f"index: {index['path']} is of index schema {schema}, a later briefd's: this one "
            "cannot open it; upgrade briefd, or index into another file (--db)"
        )
    line = f"index: {index['path']}"
    if "commit" in index:
        line += f" {_serves(index)}"
    if _earlier(index):
        line += (
            f"{'; it' if 'commit' in index else ''} is of index schema {schema}, an earlier "
            "briefd's: the next command that "
            f"opens it (briefd index, search, serve, …) upgrades it to schema {SCHEMA_VERSION}, "
            "which earlier releases cannot open"
        )
    if index.get("sync_error"):
        line += f"; the last sync ({index['synced_at']}) failed: {index['sync_error']}"
    return line


def _serves(index: dict[str, object]) -> str:
    commit, at = index["commit"], index["indexed_at"] or "never"
    served = f"serves commit {commit}" if commit else "serves a folder outside git"
    if not commit and index.get("git_without_commits"):
        served = "serves files of a git checkout read before its first commit"
    return f"{served} (indexed {at})"


def _calibration(ctx: typer.Context) -> dict[str, object]:
    """The configured index's gate calibration, or why it cannot be read: the versions are
    printed either way (an index of a newer schema is when they are asked for)."""
    try:
        settings = load_settings(ctx.obj.config, overrides={"db": ctx.obj.db})
        if not settings.db.exists():
            return {}
        with Briefd(settings, embedder=None) as api:
            offset = settings.search.gate_offset  # briefd.yaml's: moves each fitted threshold
            fitted = api.gate_calibration()
            return {
                "gate_calibration": {m: {**k, "gate_offset": offset} for m, k in fitted.items()}
            }
    except (BriefdError, sqlite3.DatabaseError) as exc:
        errors.print(f"warning: {exc}", markup=False, soft_wrap=True)
        return {"index_error": str(exc)}


def listing(found: Sequence[DocumentSummary], width: int | None) -> list[str]:
    """The documents under their scopes, one line each: path (never shortened), sections,
    tokens, last change, then the title, cut to ``width`` (None: whole) with an ellipsis.
    Widths are terminal cells: a CJK character or an emoji takes two."""
    path_width = max(cell_len(printable(d.path)) for d in found)
    head = f"  {'path'.ljust(path_width)}  sections   tokens  updated     title"
    lines: list[str] = []
    by_scope: dict[str, list[DocumentSummary]] = {}
    for doc in found:
        by_scope.setdefault(doc.scope, []).append(doc)
    for scope, docs in by_scope.items():
        count = f"{len(docs)} document{'s' if len(docs) != 1 else ''}"
        lines += ([""] if lines else []) + [f"{scope} ({count})", head]
        for doc in docs:
            path = printable(doc.path)  # 'a\u200bb.md' is not 'ab.md'
            line = (
                f"  {path}{' ' * (path_width - cell_len(path))}  {doc.sections:>8}  "
                f"{doc.tokens:>7,}  {doc.updated_at[:10]:<10}  "
            )
            title = printable(" ".join(doc.title.split()))  # one line, also when written so
            title_cells = cell_len(title)
            room = width - cell_len(line) if width is not None else title_cells
            cut = MIN_TITLE <= room < title_cells  # too narrow even for that: let it wrap
            lines.append(line + (_head_cells(title, room - 1) + "…" if cut else title))
    return lines


def _head_cells(text: str, cells: int) -> str:
    """The longest head of ``text`` that takes at most ``cells`` terminal cells."""
    used = 0
    for at, char in enumerate(text):
        used += cell_len(char)
        if used > cells:
            return text[: whole_characters(text, at)]
    return text
