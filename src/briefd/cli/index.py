"""``briefd index``: build or update the index, with a progress bar in a terminal."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from briefd.cli.output import console, errors, print_json, reported_errors
from briefd.errors import SourceError
from briefd.model import IndexReport
from briefd.sources.layout import nothing_indexed


def register(app: typer.Typer) -> None:
    app.command("index")(index_command)


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
        if errors.is_terminal and not json_output:
            with Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                console=errors,
                transient=True,
            ) as bar:
                task = bar.add_task("indexing", total=None)

                def progress(stage: str, done: int, total: int) -> None:
                    bar.update(task, description=stage, completed=done, total=total)

                report = api.index(rebuild=rebuild, progress=progress)
        else:
            report = api.index(rebuild=rebuild)
    if json_output:
        print_json(report)
    else:
        print_report(report)
    if report.documents == 0:
        with reported_errors():
            raise SourceError(nothing_indexed(report, api.settings))


def print_report(report: IndexReport) -> None:
    verb = "Rebuilt" if report.rebuilt else "Indexed"
    console.print(
        f"{verb} {report.source}: {report.documents} documents, {report.chunks} chunks "
        f"in {report.seconds:.2f}s",
        markup=False,
    )
    changed = len(report.added) + len(report.changed)
    console.print(
        f"  {changed} changed ({len(report.added)} new), {len(report.deleted)} deleted, "
        f"{report.unchanged} unchanged, {len(report.skipped)} skipped",
        markup=False,
    )
    if report.rechunked:
        console.print(
            "  every document was chunked again: this briefd chunks differently than the one "
            "that built the index (or chunking settings changed)",
            markup=False,
        )
    if report.embedding_model:
        console.print(
            f"  vectors: {report.embedded} embedded with {report.embedding_model}, "
            f"{report.vectors_missing} missing",
            markup=False,
        )
    if report.embedding_error:
        console.print(
            f"  warning: embeddings incomplete ({report.embedding_error}); lexical search works, "
            "run `briefd index` again to embed what is missing",
            markup=False,
        )
    for item in report.skipped:
        console.print(f"  skipped {item.path}: {item.reason}", markup=False)
    for problem in report.problems:
        console.print(f"  warning {problem.path}: {problem.problem}", markup=False)
