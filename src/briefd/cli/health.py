"""``briefd gaps``, ``briefd drift`` and ``briefd usage``: the knowledge's health (T3, T4, T6)
as the team lead reads it — tables in a terminal, ``--json`` for scripts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.table import Column, Table
from rich.text import Text
from typer._click.exceptions import BadParameter  # typer's own click (pinned)

from briefd.cli.output import console, print_json, printable, reported_errors
from briefd.errors import QueryError
from briefd.team.activity import nothing_logged
from briefd.team.gaps import (
    GENERIC_LEFT_OUT,
    UNLOGGED_BY,
    GapsReport,
    GapsRequest,
    listed_some,
)
from briefd.team.period import shown_since, since_cutoff

if TYPE_CHECKING:  # the usage report brings the bundle code (~100 ms): imported when it runs
    from briefd.team.usage import DayActivity, SectionUsage, UsageReport

SINCE_HELP = (
    "Window: a span back from now (12h, 30d, 2w), a date (2026-01-31: from midnight UTC) or a "
    "time with its offset (2026-01-31T09:00+01:00)."
)


def checked_since(value: str) -> str:
    """``--since`` as the report will read it, refused before anything is read (exit 2)."""
    try:
        since_cutoff(value)
    except QueryError:
        raise BadParameter(
            f"'{value}'; use a span such as 30d, 12h or 2w, a date such as 2026-01-31 or a "
            "time with its offset (2026-01-31T09:00+01:00)"
        ) from None
    return value


def register(app: typer.Typer) -> None:
    app.command("gaps")(gaps_command)
    app.command("drift")(drift_command)
    app.command("usage")(usage_command)


def gaps_command(
    ctx: typer.Context,
    since: str = typer.Option("30d", "--since", help=SINCE_HELP, callback=checked_since),
    min_count: int = typer.Option(1, "--min-count", min=1, help="Only queries asked this often."),
    limit: int = typer.Option(20, "--limit", min=1, help="Most gaps shown."),
    offset: int = typer.Option(0, "--offset", min=0, help="Skip this many gaps (the next page)."),
    json_output: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """What agents ask that the knowledge does not answer: similar logged queries grouped,
    ranked by how often they were asked × how weak their results were."""
    with reported_errors(), ctx.obj.api() as api:
        report = api.gaps(GapsRequest(since, min_count, limit, offset))
    if json_output:
        print_json(report)
        return
    print_gaps(report)


def print_gaps(report: GapsReport) -> None:
    console.print(
        f"{report.gaps_count} gap(s) among {report.groups} query group(s) since "
        f"{shown_since(report.since)} ({report.answered_useful} answered and reported useful; "
        f"typical best score {_typical(report.reference_scores)})"
        + (f"; {_listed(report.offset, len(report.gaps))}" if listed_some(report) else ""),
        markup=False,
    )
    if report.generic:
        console.print(f"{report.generic} group(s) left out: {GENERIC_LEFT_OUT}", markup=False)
    if report.unlogged:
        console.print(
            f"{report.unlogged} request(s) were logged without text ({UNLOGGED_BY})",
            markup=False,
        )
    elif not report.groups:
        console.print(nothing_logged(report.since), markup=False)
    if not report.gaps:
        return
    table = Table("#", Column("query", ratio=2, overflow="fold"), "asked", "surfaces", "empty")
    table.add_column("gated")
    table.add_column("best")
    table.add_column("weak")
    table.add_column("got", ratio=1, overflow="fold")
    for rank, gap in enumerate(report.gaps, 1):
        query = gap.query or f"(hashed {gap.key[:8]})"
        if gap.variants:
            query += f" (+{len(gap.variants)} similar)"
        if gap.unhelped:  # in the query's cell: a column more leaves a piped table no room
            query += f" (no help: {gap.unhelped})"
        got = ", ".join(name for name, _ in gap.documents()) or "–"
        table.add_row(
            str(rank),
            Text(printable(query)),  # as asked: never read as markup, nor as control codes
            str(gap.asked),
            " ".join(f"{s}:{n}" for s, n in gap.surfaces.items()),
            str(gap.empty),
            str(gap.gated),
            _score(gap.best_score),
            f"{gap.weakness:.2f}",
            Text(got),
        )
    console.print(table)


def drift_command(
    ctx: typer.Context,
    no_refresh: bool = typer.Option(
        False, "--no-refresh", help="Report what the last sync found; read no code repository."
    ),
    json_output: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Documents whose refs cover code changed after the document last changed: reads the
    code repositories' new commits (fetching git URLs) first, unless --no-refresh."""
    from briefd.service.team_tools import drift_text  # the MCP types (~0.2 s): only here

    with reported_errors(), ctx.obj.api() as api:
        report = api.drift(refresh=not no_refresh)
    if json_output:
        print_json(report)
        return
    console.print(printable(drift_text(report)), markup=False)


def usage_command(
    ctx: typer.Context,
    since: str = typer.Option("30d", "--since", help=SINCE_HELP, callback=checked_since),
    limit: int = typer.Option(20, "--limit", min=1, help="Most documents and sections shown."),
    offset: int = typer.Option(
        0, "--offset", min=0, help="Skip this many of each list (the next page)."
    ),
    json_output: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Which documents and sections are served, how often, by which surface, how often they
    were reported useful, and which documents are never served."""
    with reported_errors(), ctx.obj.api() as api:
        report = api.usage(since, limit, offset)
    if json_output:
        print_json(report)
        return
    print_usage(report)


def print_usage(report: UsageReport) -> None:
    from briefd.team.usage import gone_note

    surfaces = ", ".join(f"{n} {s}" for s, n in report.surfaces.items()) or "none"
    console.print(
        f"{report.requests} request(s) since {shown_since(report.since)} ({surfaces}); "
        f"{report.feedback_reports} usage report(s), {report.nothing_helped} said nothing helped",
        markup=False,
    )
    if not report.requests:
        console.print(nothing_logged(report.since), markup=False)
    if days := days_table(report.days):
        console.print(days)
        if report.days_count > len(report.days):
            shown = f"the last {len(report.days)} of {report.days_count} days of the window"
            console.print(f"requests per day: {shown} (JSON: days, days_count)", markup=False)
    if report.documents:
        print_whole(documents_rows(report))
    if report.sections:
        console.print(sections_table(report.sections))
    if gone := gone_note(report):
        console.print(gone, markup=False)
    if report.never_served:
        console.print(f"never served ({report.never_served_count}):", markup=False)
        for path in report.never_served:
            console.print(f"  {printable(path)}", markup=False)
        left = report.never_served_count - report.offset - len(report.never_served)
        if left > 0:
            console.print(f"  … and {left} more (--limit)", markup=False)


DOCUMENT_COLUMNS = ("document", "served", "surfaces", "sections", "useful", "last served")


def documents_rows(report: UsageReport) -> list[tuple[str, ...]]:
    return [
        (
            printable(d.doc_path),
            str(d.served),
            " ".join(f"{s}:{n}" for s, n in d.surfaces.items()),
            str(d.sections_served),
            str(d.useful),
            (d.last_served_at or "–")[:16],
        )
        for d in report.documents
    ]


def print_whole(rows: Sequence[tuple[str, ...]]) -> None:
    """The documents served, every count whole: rich cut them to "ser…", "mcp…", "2026…"
    beside a path of 40 characters in 80 columns (a pipe's width to rich). Piped, the table is
    as wide as its cells, paths on one line; in a terminal too narrow, a path folds."""
    first, *others = DOCUMENT_COLUMNS
    table = Table(Column(first, overflow="fold"), *(Column(c, no_wrap=True) for c in others))
    for path, *counts in rows:
        table.add_row(Text(path), *counts)
    cells = zip(DOCUMENT_COLUMNS, *rows, strict=False)
    natural = sum(max(len(c) for c in column) for column in cells) + 3 * len(DOCUMENT_COLUMNS) + 1
    if console.is_terminal or natural <= console.width:
        console.print(table)
    else:
        Console(width=natural, highlight=False, emoji=False, file=console.file).print(table)


def sections_table(sections: Sequence[SectionUsage]) -> Table:
    """The most served sections (``--limit``), as the JSON's ``sections``."""
    table = Table(Column("section", ratio=1, overflow="fold"), "served", "surfaces", "useful")
    for s in sections:
        table.add_row(
            Text(printable(f"{s.doc_path} › {s.heading}")),
            str(s.served),
            " ".join(f"{surface}:{n}" for surface, n in s.surfaces.items()),
            str(s.useful),
        )
    return table


def days_table(days: Sequence[DayActivity]) -> Table | None:
    """Requests per UTC day from the first day with one (the days between without any listed
    as 0: a trend with its gaps), by kind, with those that came back empty and the latency;
    None when no day had one."""
    first = next((i for i, d in enumerate(days) if d.requests), None)
    if first is None:
        return None
    table = Table("day (UTC)", "requests", "search", "bundle", "hook", "empty", "p50 ms", "p95 ms")
    for d in days[first:]:
        table.add_row(
            d.day,
            str(d.requests),
            *(str(d.kinds.get(k, 0)) for k in ("search", "bundle", "recall")),
            str(d.empty),
            _ms(d.p50_ms),
            _ms(d.p95_ms),
        )
    return table


def _listed(offset: int, listed: int) -> str:
    """Which rows a page lists: "the first 20 listed (--limit)", "21-40 listed (--offset)"."""
    if not offset:
        return f"the first {listed} listed (--limit)"
    if not listed:
        return f"none listed from --offset {offset}"
    return f"{offset + 1}-{offset + listed} listed (--limit, --offset)"


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:g}"


def _typical(references: dict[str, float]) -> str:
    """The typical best score of each kind (searches and hook prompts score on scales of
    their own): ``search 0.020, recall 11.573``."""
    return ", ".join(f"{k} {_score(v)}" for k, v in references.items()) or "–"


def _score(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"
