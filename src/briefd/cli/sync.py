"""``briefd sync``: bring the knowledge source up to date now, and say what happened."""

from __future__ import annotations

import typer

from briefd.api import Briefd
from briefd.cli import interrupt
from briefd.cli.index_fast import notice_lines
from briefd.cli.output import console, errors, fail, print_json, printable, reported_errors
from briefd.errors import ConfigError
from briefd.sources.layout import nothing_indexed
from briefd.sync.state import SyncReport
from briefd.text import counted


def register(app: typer.Typer) -> None:
    app.command("sync")(sync_command)


def sync_command(
    ctx: typer.Context,
    json_output: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Fetch the source (a git URL source is reset to its remote branch), reindex what
    changed and refresh the status of open pull requests."""
    with reported_errors():
        settings = ctx.obj.settings()
        if settings.source is None and not settings.sync.remote:
            raise ConfigError(
                "no knowledge source to sync: set 'source:' in briefd.yaml (a folder or a git "
                "URL) or BRIEFD_SOURCE"
            )
        served = settings.db.is_file()
        with Briefd(settings) as api:
            report = api.sync()
    if json_output:
        print_json(report)
    else:
        print_sync(report)
    if report.error:  # with --json too: a script's log says why it exited 1
        kept = "the previous index is still served" if served else "there is no index yet"
        fail(f"sync failed, {kept}: {report.error}")
    if report.index is not None and report.index.documents == 0:  # as `briefd index` does
        fail(nothing_indexed(report.index, settings))


def print_sync(report: SyncReport) -> None:
    where = f"{report.source} ({report.kind}" + (f", {report.branch})" if report.branch else ")")
    if report.kind == "none":  # the source could not be resolved: what was configured
        where = report.source or "the configured source"
    verb = "Sync failed for" if report.error else "Synced"
    console.print(f"{verb} {where} in {report.seconds:.2f}s", markup=False)
    if report.commit or report.previous_commit:
        before = (report.previous_commit or "none")[:12]
        after = (report.commit or "none")[:12]
        moved = "unchanged" if before == after else f"{before} → {after}"
        console.print(f"  commit: {after} ({moved})", markup=False)
    index = report.index
    if index is not None:
        console.print(
            f"  index: {counted(index.documents, 'document')}, {counted(index.chunks, 'chunk')}; "
            f"{len(index.added)} new, "
            f"{len(index.changed)} changed, {len(index.deleted)} deleted, "
            f"{index.unchanged} unchanged",
            markup=False,
        )
        for path in index.added:
            console.print(f"    new {printable(path)}", markup=False)
        for path in index.changed:
            console.print(f"    updated {printable(path)}", markup=False)
        for path in index.deleted:
            console.print(f"    deleted {printable(path)}", markup=False)
        for line in notice_lines(index):
            console.print(line, markup=False)
    if report.proposals_checked:
        console.print(
            f"  proposals: {report.proposals_checked} open pull requests checked", markup=False
        )
    elif report.proposals_changed:  # found by the list of pull requests alone (opened, reopened)
        console.print("  proposals: status changes", markup=False)
    for change in report.proposals_changed:
        console.print(f"    {change}", markup=False)
    if report.forge_error:
        console.print(
            f"  warning: pull request statuses not refreshed: {report.forge_error}", markup=False
        )


def startup_sync(api: Briefd) -> None:
    """``briefd serve`` with a git URL source: clone (first start) or fetch, then reindex. A
    failing remote is a warning — the index from the last good sync is served, if any."""
    served = api.settings.db.is_file()
    report = api.sync()
    if report.error and interrupt.interrupted():  # Ctrl-C, SIGTERM ended it: that is said
        return
    if report.error:
        warning = f"warning: sync of {report.source} failed, serving the previous index: "
        warning += report.error
        if not served:
            interval = api.settings.sync.interval
            again = f"the server tries again every {interval} s, or " if interval > 0 else ""
            warning = (
                f"warning: sync of {report.source} failed: {report.error}; there is no index to "
                f"serve yet: {again}run `briefd sync` once the remote answers"
            )
        errors.print(warning, markup=False, soft_wrap=True)
        return
    index = report.index
    summary = (
        f"{counted(index.documents, 'document')}, {counted(index.chunks, 'section')}"
        if index
        else ""
    )
    errors.print(
        f"synced {report.source} ({report.branch}) at {(report.commit or '')[:12]}: {summary} "
        f"in {report.seconds:.1f}s",
        markup=False,
        soft_wrap=True,
    )
    if index is not None and index.documents == 0:  # as a folder source's start-up says
        warning = f"warning: {nothing_indexed(index, api.settings)}"
        errors.print(warning, markup=False, soft_wrap=True)
