"""``briefd index``: build or update the index, with a progress bar in a terminal."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
)

from briefd.cli.index_fast import refresh_stamp, report_lines, with_unread_settings
from briefd.cli.one_source import OneSource
from briefd.cli.output import console, errors, print_json, reported_errors
from briefd.errors import BriefdError, SourceError
from briefd.model import IndexReport
from briefd.settings import Settings
from briefd.sources.git import redact
from briefd.sources.knowledge import checkout_dir
from briefd.sources.layout import nothing_indexed
from briefd.store.runlock import WAITING


def register(app: typer.Typer) -> None:
    app.command("index", cls=OneSource)(index_command)


def index_command(
    ctx: typer.Context,
    source: Path | None = typer.Option(None, "--source", help="Knowledge directory to index."),
    rebuild: bool = typer.Option(
        False, "--rebuild", help="Recreate the index from the source alone."
    ),
    json_output: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Index a knowledge directory: only changed and deleted files are processed."""
    with reported_errors(), ctx.obj.api(source=source) as api:
        unfetched = unfetched_clone(api.settings, source)
        if errors.is_terminal and not json_output:
            with Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=errors,
                transient=True,
            ) as bar:
                task = bar.add_task("indexing", total=None)

                def progress(stage: str, done: int, total: int) -> None:
                    bar.update(task, description=stage, completed=done, total=total)

                report = api.index(rebuild=rebuild, progress=progress)
        else:
            log = ProgressLog(lambda line: errors.print(line, markup=False, soft_wrap=True))
            report = api.index(rebuild=rebuild, progress=log)
    if not rebuild:
        leave_stamp(ctx, source)
    forget_daemon_failure(api.settings.db)
    report = with_unread_settings(report, api.settings, ctx.obj.config)
    if json_output:
        print_json(report)
    else:
        print_report(report)
    if unfetched is not None:
        errors.print(f"note: {unfetched}", markup=False, soft_wrap=True)
    if report.documents == 0:
        with reported_errors():
            raise SourceError(nothing_indexed(report, api.settings))


UNFETCHED = (
    "source is the git URL {url}: briefd index read briefd's clone of it as the last sync left "
    "it, and fetched nothing; `briefd sync` fetches what was pushed since (a merged pull "
    "request), indexes it and refreshes the proposals' statuses"
)


def unfetched_clone(settings: Settings, source: Path | None) -> str | None:
    """What a run on a git URL source's existing clone does not do (None: another source, or
    no clone yet, which the run clones): a merged pull request then `briefd index` printed
    "0 changed", the proposal still open, and never why."""
    if source is not None or not settings.sync.remote:
        return None
    if not (checkout_dir(settings) / ".git").is_dir():
        return None
    return UNFETCHED.format(url=redact(settings.sync.remote))


def forget_daemon_failure(db: Path) -> None:
    """A recall daemon of this index that failed (a model whose vectors the index lacked,
    say) is started again by the next prompt, not five minutes later: this run may be the
    fix. (A run that finds nothing changed answers before this, and is no fix.)"""
    from briefd.hook.place import daemon_files
    from briefd.hook.starter import forget_failure

    forget_failure(daemon_files(os.path.realpath(db), os.environ))


def leave_stamp(ctx: typer.Context, source: Path | None) -> None:
    """The stamp the next ``briefd index`` with these options checks before anything loads
    (O4); it is only ever a shortcut, so a failure here costs the next run its hashing."""
    options = {"config": ctx.obj.config, "db": ctx.obj.db, "source": source}
    args: dict[str, str | bool] = {k: str(v) for k, v in options.items() if v is not None}
    try:
        refresh_stamp(ctx.obj.settings(source=source), {"json": False, **args})
    except (BriefdError, OSError, ValueError, sqlite3.Error):
        return


class ProgressLog:
    """Progress where no bar can be drawn (a pipe, a CI log, cron): one line per stage every
    ``every`` seconds while it lasts, with its rate and the time left; a short stage prints
    nothing. Waiting for another run of the index is said as it starts."""

    def __init__(
        self,
        write: Callable[[str], object],
        every: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        waiting: str = "",
    ) -> None:
        """``waiting``: said after the line saying another run holds the index."""
        self.write = write
        self.every = every
        self.clock = clock
        self.waiting = waiting
        self._stage = ""
        self._base = 0
        self._logged = False
        self._started = self._printed = 0.0
        self._left: float | None = None

    def left(self) -> float | None:
        """The seconds the current stage said it has left at its last step, at its rate so
        far (None before a stage has a rate, or once it is done)."""
        return self._left

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = self.clock()
        if stage != self._stage:
            self._stage, self._base, self._logged = stage, done, False
            self._started = self._printed = now
            self._left = None
            if stage.startswith(
                WAITING
            ):  # said once, when it starts: it may last as long as that run
                self.write(stage + self.waiting)
            return
        finished = done >= total and self._logged
        rate = (done - self._base) / (now - self._started) if now > self._started else 0.0
        self._left = (total - done) / rate if rate > 0 and done < total else None
        if now - self._printed < self.every and not finished:
            return
        self._printed, self._logged = now, True
        left = f", ~{self._left:.0f} s left" if self._left is not None else ""
        self.write(f"{stage}: {done}/{total} ({rate:.1f}/s{left})")


def print_report(report: IndexReport) -> None:
    for line in report_lines(report):
        console.print(line, markup=False)
