"""``briefd proposals``: knowledge change proposals and the state of their pull requests."""

from __future__ import annotations

from typing import get_args

import typer

from briefd.cli.output import completes, console, one_of, print_json, reported_errors
from briefd.proposals.model import ProposalStatus

STATUSES: tuple[str, ...] = get_args(ProposalStatus)


def register(app: typer.Typer) -> None:
    app.command("proposals")(proposals_command)


def proposals_command(
    ctx: typer.Context,
    status: str | None = typer.Option(
        None,
        "--status",
        help="Only proposals with this status: local, pushed, open, merged, closed.",
        callback=one_of(STATUSES),
        autocompletion=completes(STATUSES),
    ),
    json_output: bool = typer.Option(False, "--json", help="Print the proposals as JSON."),
) -> None:
    """Proposals made through propose_update, newest first (status as of the last sync)."""
    with reported_errors(), ctx.obj.api() as api:
        found = api.proposals(status)
    if json_output:
        print_json(found)
        return
    if not found:
        console.print("No proposals" + (f" with status {status}." if status else "."))
        return
    for p in found:
        link = p.pr_url or (f"no pull request: {p.forge_error}" if p.forge_error else "–")
        console.print(
            f"{p.id}  {p.status:<6}  {p.doc_path}  {p.branch}  {link}  {p.created_at[:16]}",
            markup=False,
        )
        console.print(f"    {p.description.splitlines()[0]}", markup=False)
        if p.pr_url and p.forge_error:  # its last status read failed: the status may be old
            console.print(f"    status not read at the last sync: {p.forge_error}", markup=False)
