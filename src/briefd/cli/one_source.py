"""The command class of the commands that take ``--source``: one source per index.

click keeps the last value of an option given twice, so ``briefd index --source A --source B``
indexed B alone and said "Indexed B", A silently left out. A repeated ``--source`` is a usage
error (exit 2) before anything is read, saying how to serve several folders.
"""

from __future__ import annotations

from typer._click.core import Context  # typer's own click (pinned)
from typer._click.exceptions import BadOptionUsage
from typer.core import TyperCommand

SEVERAL = (
    "an index has one knowledge source: put the folders in one folder and give it "
    "(`--source DIR`), or give each its own index (`briefd --db FILE …`)"
)


class OneSource(TyperCommand):
    """A command whose ``--source`` may be given once."""

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        _, _, order = self.make_parser(ctx).parse_args(args=list(args))
        given = sum(1 for param in order if "--source" in getattr(param, "opts", ()))
        if given > 1:
            raise BadOptionUsage("--source", f"--source is given {given} times; {SEVERAL}", ctx=ctx)
        return super().parse_args(ctx, args)
