"""``briefd demo``: index the example knowledge that ships with briefd into an index of its own
and serve it — briefd working in one command, on any machine, with nothing configured."""

from __future__ import annotations

import shlex

import typer

from briefd.cli.installation import this_briefd
from briefd.cli.output import errors, reported_errors
from briefd.cli.serve import HOST, PORT, demo_db, serve
from briefd.settings import DEFAULT_LAYOUT, DEFAULT_SCOPES, IndexSettings
from briefd.sources.example import example_knowledge

# The example's own layout and rules, whatever a briefd.yaml in this folder says about a team's
# knowledge (its scopes would leave most of the example unindexed) and its proposals (the
# example is no repository of the team's).
EXAMPLE_SETTINGS = {
    "scopes": DEFAULT_LAYOUT,
    "default_scopes": DEFAULT_SCOPES,
    "index.include": IndexSettings().include,
    "index.exclude": IndexSettings().exclude,
    "proposals.enabled": False,
}


def register(app: typer.Typer) -> None:
    app.command("demo")(demo_command)


def demo_command(
    ctx: typer.Context,
    host: str | None = HOST,
    port: int | None = PORT,
) -> None:
    """Index the bundled example knowledge (a fictional payments company) and serve it."""
    with reported_errors():
        db = ctx.obj.db or demo_db()
        settings = ctx.obj.settings(source=example_knowledge(), db=db, **EXAMPLE_SETTINGS)
    quoted = shlex.quote(str(settings.db))  # runs as written from a home with a space in it
    briefd = this_briefd()
    errors.print(
        f"briefd demo: the example knowledge in {settings.source}, indexed into {settings.db}\n"
        "once it says `indexed …` (the first index takes ~20-60 s), try in another terminal:\n"
        f'  {briefd} --db {quoted} search "how many times do we retry a soft decline"\n'
        f'  {briefd} --db {quoted} bundle "add partial refunds to the card flow"',
        markup=False,
        soft_wrap=True,
    )
    serve(settings, host, port, no_index=False)
