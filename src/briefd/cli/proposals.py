"""``briefd proposals``: knowledge change proposals and the state of their pull requests."""

from __future__ import annotations

from typing import get_args

import typer

from briefd.cli.output import completes, console, one_of, print_json, reported_errors
from briefd.proposals.model import Proposal, ProposalStatus
from briefd.state.model import ADOPTED_AS, UNFOLLOWED_AS

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
        forge = api.settings.forge.type
    if json_output:
        print_json(found)
        return
    if not found:
        console.print("No proposals" + (f" with status {status}." if status else "."))
        return
    for p in found:
        link = _pull(p, forge)
        console.print(
            f"{p.id}  {p.status:<6}  {p.doc_path}  {p.branch}  {link}  {p.created_at[:16]}",
            markup=False,
        )
        console.print(f"    {p.description.splitlines()[0]}", markup=False)
        if p.pr_url and p.forge_error:  # its last status read failed: the status may be old
            console.print(f"    status not read at the last sync: {p.forge_error}", markup=False)


def _pull(proposal: Proposal, forge: str) -> str:
    """The pull request column: its URL, or why there is none (a forge's refusal), or what a
    sync said of the branch (closed or adopted: no pull request was ever to be opened for it
    under ``forge.type: none``, and "no pull request: …" read like a failure); "–" else."""
    said = proposal.forge_error
    if proposal.pr_url:
        return proposal.pr_url
    if said and proposal.status == "pushed" and not said.startswith((ADOPTED_AS, UNFOLLOWED_AS)):
        return f"no pull request: {said}"
    if said:
        return said
    if proposal.status == "pushed" and forge == "none":
        return "no pull request (forge.type: none): open one from the branch, or merge it"
    return "–"
