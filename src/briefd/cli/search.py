"""``briefd search``: the same ranking as the API, for people and scripts."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import typer
from rich.table import Table
from rich.text import Text
from typer._click.exceptions import BadParameter  # typer's own click (pinned)

from briefd.api import Briefd
from briefd.cli.output import (
    completes,
    console,
    errors,
    one_of,
    print_json,
    printable,
    reported_errors,
    to_jsonable,
    utf8_text,
)
from briefd.cli.tuned import tuned_settings
from briefd.model import Hit, SearchResult
from briefd.retrieval.search import SearchRequest
from briefd.service.searchnotes import empty_index_note
from briefd.store.runlock import index_run_held
from briefd.store.scopes import SERVED_NONE
from briefd.text import counted, whole_characters

MODES = ("bm25", "vector", "hybrid")
# a terminal narrower than this prints each hit as lines, not a table: the table's rank, score
# and tokens columns and its borders take 28 columns, and at 30 rich cut the score to "0.02…"
NARROW = 50


def register(app: typer.Typer) -> None:
    app.command("search")(search_command)


def split_scopes(scopes: list[str] | None) -> tuple[str, ...] | None:
    """Repeated and/or comma-separated values; None when none is left (``--scopes ""``: the
    default scopes, as REST reads ``?scopes=``, never a search of no scope at all)."""
    items = tuple(s.strip() for item in scopes or () for s in item.split(",") if s.strip())
    return items or None


def code_paths(paths: list[str] | None) -> tuple[str, ...]:
    """``--paths`` as ``refs`` name them, from the code repository's root: an absolute path
    inside the repository this command runs in (an editor's "copy path") is made relative to
    that root, where it was read as a path from the root and matched no anchored ``refs``.
    Any other path is passed as written."""
    items = split_scopes(paths) or ()
    if not any(Path(p).is_absolute() for p in items):
        return items
    roots = _repository_roots(Path.cwd())
    return tuple(_from_root(p, roots) if Path(p).is_absolute() else p for p in items)


def _repository_roots(cwd: Path) -> tuple[Path, ...]:
    """The folder holding ``.git`` at or above ``cwd`` (else ``cwd``), as written and with
    its links resolved (an editor may show either)."""
    root = next((f for f in (cwd, *cwd.parents) if (f / ".git").exists()), cwd)
    return tuple(dict.fromkeys((root, root.resolve())))


def _from_root(path: str, roots: tuple[Path, ...]) -> str:
    normal = Path(os.path.normpath(path))
    for root in roots:
        if normal != root and normal.is_relative_to(root):
            inside = normal.relative_to(root).as_posix()
            return inside + "/" if path.endswith(("/", os.sep)) else inside
    return path


def knowledge_path(path: str, source: Path | None) -> str:
    """A document as the index names it (from the knowledge source's root): a path to the file
    itself, absolute or from the current folder (tab-completed ``knowledge/domain/refunds.md``
    at the repository's root, ``refunds.md`` in its folder), is made relative to the source
    folder it is in. Any other path is passed as written."""
    file = Path(path.strip()).expanduser()
    if source is None or not (Path.cwd() / file).is_file():
        return path
    normal = Path(os.path.normpath(Path.cwd() / file))
    for root, inside in ((source, normal), (source.resolve(), normal.resolve())):
        if inside.is_relative_to(root):
            return inside.relative_to(root).as_posix()
    return path


def search_command(
    ctx: typer.Context,
    query: str = typer.Argument(
        ..., help="What you are looking for, in your own words.", callback=utf8_text
    ),
    scopes: list[str] | None = typer.Option(
        None, "--scopes", "--scope", help="Scopes to search (repeat or comma-separate; 'all')."
    ),
    top_k: int | None = typer.Option(
        None, "--top-k", "-k", min=1, help="Number of hits (default: search.top_k, 8 unless set)."
    ),
    paths: list[str] | None = typer.Option(
        None,
        "--paths",
        help="Code paths the task touches, from the repository's root (an absolute path in "
        "this repository is made relative): documents whose refs cover them lead.",
    ),
    tags: list[str] | None = typer.Option(
        None, "--tags", "--tag", help="Only documents with any of these tags (comma or repeat)."
    ),
    mode: str | None = typer.Option(
        None,
        "--mode",
        help="bm25, vector or hybrid (default: search.mode, hybrid unless set; bm25 without "
        "embeddings).",
        autocompletion=completes(MODES),
    ),
    query_mode: str | None = typer.Option(
        None,
        "--query-mode",
        help="text (punctuation escaped) or advanced (raw FTS5) (default: search.query_mode, text "
        "unless set).",
        callback=one_of(("text", "advanced")),
        autocompletion=completes(("text", "advanced")),
    ),
    related: int | None = typer.Option(
        None,
        "--related",
        min=0,
        help="Linked sections to append after the hits (default: search.related, 3 unless "
        "set; 0: none).",
    ),
    explain: bool = typer.Option(False, "--explain", help="Show the SQL and per-hit scores."),
    tuned: Path | None = typer.Option(
        None, "--config", help="Tuned recall settings from `briefd tune` laid over the settings."
    ),
    json_output: bool = typer.Option(False, "--json", help="Print hits as JSON."),
) -> None:
    """Search the index and print ranked sections."""
    with reported_errors():
        if mode is not None and mode not in MODES:
            raise BadParameter(f"'{mode}'; use bm25, vector or hybrid", param_hint="'--mode'")
        settings = tuned_settings(
            ctx.obj.settings(**{"search.query_mode": query_mode}), tuned, ctx.info_name
        )
        request = SearchRequest(
            query=query,
            scopes=split_scopes(scopes),
            top_k=top_k,
            mode=mode,  # type: ignore[arg-type]
            explain=explain,
            related=related,
            paths=code_paths(paths),
            tags=split_scopes(tags) or (),
        )
        with Briefd(settings) as api:
            result = api.search(request)
        building = not result.scopes and index_run_held(settings.db)
    if json_output:
        print_json(result_json(result))
    else:
        print_result(result, explain, building)
        for warning in result.warnings:
            errors.print(f"warning: {printable(warning)}", markup=False, soft_wrap=True)


BUILDING = (
    "no document is indexed yet: an index run (`briefd index`, `serve` or `demo`) is building "
    "it now; try again once it says `indexed …`"
)


def result_json(result: SearchResult) -> dict[str, object]:
    """The result as JSON, the gate as ``{decision, reasons}``, with REST's ``note`` when the
    index holds no document (else ``hits: []`` reads as knowledge with nothing on the topic)."""
    data: dict[str, object] = to_jsonable(result)
    del data["gate_reasons"]
    data["gate"] = {"decision": result.gate, "reasons": list(result.gate_reasons)}
    data["note"] = empty_index_note(result)
    return data


def print_result(result: SearchResult, explain: bool, building: bool) -> None:
    """``building``: an index run is building the (empty) index now."""
    if explain:
        for sql in result.sql:
            console.print(sql, markup=False)
            console.print()
        for reason in result.gate_reasons:
            console.print(f"gate {result.gate}: {reason}", markup=False)
    if not result.hits:
        console.print(f"Nothing found: {_why_nothing(result, building)}.", markup=False)
        return
    rows = []
    rank = 0
    copies = _copies(result)
    for hit in result.hits:
        if hit.chunk_id in copies.shown_with:
            continue
        label = "rel" if hit.related_to else str(rank := rank + 1)
        cell = _cell(hit, explain)
        if hit.chunk_id in copies.also:
            cell.append(f"\nalso in {', '.join(copies.also[hit.chunk_id])} (the same text)")
        rows.append((label, f"{hit.score:.4f}", cell, str(hit.tokens)))
    _print_rows(rows)
    model = f" · {result.embedding_model}" if result.embedding_model else ""
    merged = len(copies.shown_with)
    also = f" + {counted(merged, 'copy', 'copies')} named under the hit they copy" if merged else ""
    console.print(
        f"{_counted(result.hits, merged)}{also} in {result.took_ms:.1f} ms · {result.mode} · scopes "
        f"{', '.join(result.scopes)} · ranking {result.ranking_version}{model}",
        markup=False,
    )


def _print_rows(rows: list[tuple[str, str, Text, str]]) -> None:
    """The hits as a table, or in a terminal under :data:`NARROW` columns each as a line of
    its rank, score and tokens over its cell, so no figure is ever cut."""
    if console.width < NARROW:
        for label, score, cell, tokens in rows:
            console.print(f"{label} · score {score} · {tokens} tokens", markup=False)
            console.print(cell)
            console.print()
        return
    table = Table(show_lines=True)
    table.add_column("#", justify="right")
    table.add_column("score", justify="right")
    table.add_column("section", overflow="fold")
    table.add_column("tokens", justify="right")
    for row in rows:
        table.add_row(*row)
    console.print(table)


def _why_nothing(result: SearchResult, building: bool) -> str:
    if result.gate == "empty":
        scopes = ", ".join(result.scopes)
        return f"the query looks unrelated to the knowledge in scopes {scopes} (relevance gate)"
    if not result.scopes and building:  # `briefd demo` prints this command before it is done
        return BUILDING
    if not result.scopes and any(w.startswith(SERVED_NONE) for w in result.warnings):
        return "the index holds no document (the warning below says why)"
    if not result.scopes:  # an index without documents has no scope to search
        return "no document is indexed yet; run `briefd index`"
    return f"no matches in scopes {', '.join(result.scopes)}"


def _counted(hits: tuple[Hit, ...], merged: int = 0) -> str:
    """ "3 hits + 2 related": the linked sections appended after the hits are no more hits;
    ``merged``: copies shown with the hit they copy, not counted again."""
    related = sum(1 for hit in hits if hit.related_to)
    shown = len(hits) - related - merged
    return counted(shown, "hit") + (f" + {related} related" if related else "")


@dataclass(frozen=True)
class _Copies:
    """The hits shown with another (chunk id → the hit's) and where each shown hit's copies
    are (chunk id → their locations)."""

    shown_with: dict[str, str] = field(default_factory=dict)
    also: dict[str, list[str]] = field(default_factory=dict)


def _copies(result: SearchResult) -> _Copies:
    """Over several scopes, a section copied into each of them (a domain rule pasted into
    every project's folder) was listed once per copy, taking the places of other hits; the
    table shows it once, at its best rank, naming where the other copies are, as a bundle
    keeps one. The same title, heading and text in another scope make a copy. Only the table: the ranking, --json,
    REST and MCP keep every hit (an evaluation set's duplicate passages have their own
    judgements)."""
    copies = _Copies()
    if len(result.scopes) < 2:
        return copies
    first: dict[tuple[str, tuple[str, ...], str], Hit] = {}
    for hit in result.hits:
        if hit.related_to:
            continue
        text = " ".join(hit.content.split())
        kept = first.setdefault((hit.title, hit.heading_path, text), hit)
        if kept.scope != hit.scope:
            copies.shown_with[hit.chunk_id] = kept.chunk_id
            where = f"{printable(hit.doc_path)}:{hit.start_line}-{hit.end_line}"
            copies.also.setdefault(kept.chunk_id, []).append(where)
    return copies


def _cell(hit: Hit, explain: bool) -> Text:
    """Plain text: document content is never read as rich markup ("[[link]]", "[/data]")."""
    location = f"{printable(hit.doc_path)}:{hit.start_line}-{hit.end_line}"  # never 'ab.md'
    crumb = " > ".join(" ".join(part.split()) for part in (hit.title, *hit.heading_path))
    flat = " ".join(hit.content.split())
    preview = flat[: whole_characters(flat, 220)]  # never 👍 without its 🏽
    cell = f"{location}\n{crumb}\n{preview}"
    if hit.related_to:
        cell += f"\nrelated: linked from {hit.related_to}"
    if hit.superseded_by:
        cell += f"\nsuperseded by {printable(', '.join(hit.superseded_by))}"
    if explain and hit.explain:
        e = hit.explain
        cell += (
            f"\nall-terms rank {_rank(e.and_rank)} bm25 {_num(e.and_bm25)} · "
            f"any-term rank {_rank(e.any_rank)} bm25 {_num(e.any_bm25)} · "
            f"vector rank {_rank(e.vector_rank)} cosine {_num(e.cosine)}"
            + ("" if e.window_cosine is None else f" (closest window {e.window_cosine:.3f})")
            + "\n"
            + " + ".join(f"{name} {value:.5f}" for name, value in e.contributions)
        )
    return Text(cell)


def _rank(value: int | None) -> str:
    return "-" if value is None else str(value)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"
