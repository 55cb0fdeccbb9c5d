"""``briefd`` command line (I7): builds settings from flags, calls the API, prints."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from briefd.__about__ import __version__
from briefd.api import Briefd
from briefd.cli import atlassian, bundle, demo, docs, eval_cmd, health, index, model, search, tune
from briefd.cli import init as init_cli
from briefd.cli import proposals as proposals_cli
from briefd.cli import recall as recall_cli
from briefd.cli import serve as serve_cli
from briefd.cli import sync as sync_cli
from briefd.cli.output import reported_errors
from briefd.settings import Settings, load_settings

app = typer.Typer(
    name="briefd",
    help=(
        "Context compiler for AI coding teams: index Markdown knowledge, compile token-budgeted "
        "context for agents, serve it over MCP and REST, take proposed changes back as branches."
    ),
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


class Context:
    """What the global options leave for the commands: how to build settings and the API."""

    def __init__(self, config: Path | None, db: Path | None) -> None:
        self.config = config
        self.db = db

    def settings(self, **overrides: Any) -> Settings:
        with reported_errors():
            return load_settings(self.config, overrides={"db": self.db, **overrides})

    def api(self, **overrides: Any) -> Briefd:
        return Briefd(self.settings(**overrides))


def print_version(value: bool) -> None:
    if value:
        typer.echo(f"briefd {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    ctx: typer.Context,
    config: Path | None = typer.Option(
        None, "--config", help="Settings file (default: ./briefd.yaml, or $BRIEFD_CONFIG)."
    ),
    db: Path | None = typer.Option(
        None, "--db", help="Index database file (default: .briefd/briefd.db)."
    ),
    version: bool = typer.Option(
        False, "--version", callback=print_version, is_eager=True, help="Print the version."
    ),
) -> None:
    ctx.obj = Context(config, db)


index.register(app)
search.register(app)
bundle.register(app)
docs.register(app)
eval_cmd.register(app)
model.register(app)
tune.register(app)
recall_cli.register(app)
init_cli.register(app)
serve_cli.register(app)
demo.register(app)
sync_cli.register(app)
proposals_cli.register(app)
atlassian.register(app)
health.register(app)


def run() -> None:
    app()
