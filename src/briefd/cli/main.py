"""``briefd`` command line (I7): builds settings from flags, calls the API, prints."""

from __future__ import annotations

import logging
import shlex
import sys
from pathlib import Path
from typing import Any

import typer
import typer.main
from typer._click import exceptions as click  # typer's own click (pinned)
from typer._click.core import Context as ClickContext

from briefd.__about__ import __version__
from briefd.api import Briefd
from briefd.cli import (
    atlassian,
    bundle,
    demo,
    docs,
    eval_cmd,
    health,
    index,
    interrupt,
    model,
    output,
    search,
    tune,
)
from briefd.cli import init as init_cli
from briefd.cli import proposals as proposals_cli
from briefd.cli import recall as recall_cli
from briefd.cli import serve as serve_cli
from briefd.cli import sync as sync_cli
from briefd.cli.output import reported_errors
from briefd.settings import Settings, load_settings
from briefd.text import shown

HINTED = 80  # characters of a query a command line in a hint repeats

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

    def __init__(self, config: Path | None, db: Path | None, command: str | None = None) -> None:
        self.config = config
        self.db = db
        self.command = command  # named in a settings error's hint

    def settings(self, **overrides: Any) -> Settings:
        with reported_errors():
            return load_settings(
                self.config, overrides={"db": self.db, **overrides}, command=self.command
            )

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
        None,
        "--config",
        help="Settings file (default: $BRIEFD_CONFIG, else the first of ./briefd.yaml, ./.briefd/briefd.yaml, ~/.config/briefd/briefd.yaml; in a subfolder of a git work tree, . is the nearest folder above with the project's briefd files). Naming one does not change where the project is: the default index stays at its top.",
    ),
    db: Path | None = typer.Option(
        None,
        "--db",
        help="Index database file (default: .briefd/briefd.db in the project's folder).",
    ),
    version: bool = typer.Option(
        False, "--version", callback=print_version, is_eager=True, help="Print the version."
    ),
) -> None:
    ctx.obj = Context(config, db, ctx.invoked_subcommand)
    output.named_db[:] = [db] if db is not None else []
    output.named_config[:] = [config] if config is not None else []
    _quiet_state_log(serving=ctx.invoked_subcommand in ("serve", "mcp", "demo"))


def _quiet_state_log(serving: bool) -> None:
    """The connection pool's retries stay off the terminal from the start (a server's first
    sync already reports to the shared state): briefd says why the state cannot be used. A
    one-shot command says it once, in its error or warning, not in the servers' log line too."""
    logging.getLogger("psycopg.pool").setLevel(logging.ERROR)
    if not serving:
        logging.getLogger("briefd.state").setLevel(logging.CRITICAL)


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
    """The command line, with a mistyped command, option or value said in one line (click
    prints the usage, a hint and the error over four)."""
    command = typer.main.get_command(app)
    try:
        code = command.main(prog_name="briefd", standalone_mode=False)
    except click.NoArgsIsHelpError as exc:  # `briefd` or a group alone: its help
        exc.show()
        sys.exit(exc.exit_code)
    except click.UsageError as exc:
        sys.stderr.write(f"error: {usage_message(exc)}\n")
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except typer.Abort as exc:
        if exc.__cause__ is None:  # a prompt's answer cut short: it left its line open
            sys.stderr.write("\n")
        if isinstance(exc.__cause__ or exc.__context__, KeyboardInterrupt):  # Ctrl-C
            interrupt.say()
            sys.exit(130)
        sys.stderr.write("aborted\n")
        sys.exit(1)
    if code == 130:  # Ctrl-C outside a command's error handling (printing): typer said nothing
        interrupt.say()
    sys.exit(code if isinstance(code, int) else 0)


def usage_message(exc: click.UsageError) -> str:
    """The error and where to read the usage; for a command that takes text: for an unknown
    short option (text such as "-3DS failures" read as options), how to pass text that starts
    with a dash, and for words past its text (``briefd search retry policy``), to quote them."""
    path = exc.ctx.command_path if exc.ctx is not None else "briefd"
    text = exc.format_message().rstrip(".")
    hint = f"see `{path} -h`"
    if isinstance(exc, click.NoSuchOption) and exc.option_name in ("--db", "--config"):
        name, command = exc.option_name, path.removeprefix("briefd ")  # after the command
        return (
            f"{name} is a global option: it goes before the command (`briefd {name} FILE "
            f"{command} …`); see `briefd -h`"
        )
    taken = _text_arguments(exc.ctx)
    if not taken or exc.ctx is None:  # `briefd -v`, `briefd docs -x`: no text to pass
        return f"{text}; {hint}"
    if isinstance(exc, click.NoSuchOption) and not exc.option_name.startswith("--"):
        hint = f"text that starts with '-' goes after `--` (`{path} -- '-3DS …'`); {hint}"
    elif text.startswith("Got unexpected extra argument"):
        first = exc.ctx.params.get(taken[0])
        if isinstance(first, str) and first:
            hint = f"{_extra_words_hint(path, first, text)}; {hint}"
    return f"{text}; {hint}"


def _extra_words_hint(path: str, first: str, text: str) -> str:
    """The command line with the words past the text quoted as one with it; options written
    after `--` (which ends them: `briefd search -- '-3DS …' -k 1`) moved before it, and `--`
    kept before text that starts with a dash."""
    extra = text.partition(" (")[2].rpartition(")")[0].split(" ")
    cut = next((i for i, w in enumerate(extra) if w.startswith("-") and w != "-"), len(extra))
    words = shlex.quote(shown(" ".join([first, *extra[:cut]]), HINTED))  # a pasted page: its head
    if cut < len(extra):
        options = " ".join(extra[cut:])
        return f"options go before `--` (`{path} {options} -- {words}`)"
    dash = "-- " if first.startswith("-") else ""
    return f"text of several words goes in quotes (`{path} {dash}{words}`)"


def _text_arguments(ctx: ClickContext | None) -> list[str]:
    """The names of the command's arguments (a query, a task, a path): none for a group."""
    if ctx is None:
        return []
    return [p.name for p in ctx.command.params if p.param_type_name == "argument" and p.name]
