"""Knowledge proposals over HTTP (T1): ``POST /api/proposals`` and ``GET /api/proposals``. Thin
handlers over :class:`Briefd`; a proposal leaves in the one shape MCP returns too
(:class:`briefd.service.schemas.ProposalOut`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

from fastapi import APIRouter, Body, Depends, Query, status

from briefd.proposals.model import Proposal, ProposalRequest, ProposalStatus
from briefd.proposals.policy import require_enabled
from briefd.proposals.service import where_kept
from briefd.service import schemas
from briefd.service.cursor import cursor_of, key_of
from briefd.service.deps import ERRORS, PUSHES, State
from briefd.service.schemas import split_list

router = APIRouter(prefix="/api", tags=["proposals"])


def proposals_on(state: State) -> None:
    """Proposals off (403) is said before the body is read: a client told 422 for a body it
    then completed was only then told no proposal is taken here, as MCP does not list the
    tool at all."""
    if not state.api.settings.proposals.enabled:  # counted as the call it answers
        state.call("rest", "propose_update", lambda: require_enabled(state.api.settings), False)


@router.post(
    "/proposals",
    name="propose_update",
    status_code=status.HTTP_201_CREATED,
    response_model=schemas.ProposalOut,
    responses=PUSHES,
    dependencies=[Depends(proposals_on)],
)
def create_proposal(
    state: State, body: Annotated[schemas.ProposalIn, Body()]
) -> schemas.ProposalOut:
    """Propose a knowledge change: a branch ``briefd/proposal-<id>`` with one commit on the
    knowledge remote (and a pull request when a forge is configured); ``where`` says where the
    branch is when ``status`` and ``pr_url`` do not (a local branch, not pushed; a pushed one no
    forge opens a pull request for). The served knowledge is not changed. 502: the remote refused the push or the forge did not answer (nothing stored)."""
    request = ProposalRequest(
        body.doc_path,
        body.change_description,
        body.new_content,
        split_list(body.scopes),
        body.client or "rest",
    )

    def made() -> tuple[Proposal, str | None]:
        # an absolute path inside the knowledge folder, as GET /api/documents takes one
        known = replace(request, doc_path=state.doc_path(request.doc_path))
        proposal = state.api.propose_update(known)
        return proposal, where_kept(state.api.settings, proposal)

    proposal, where = state.call("rest", "propose_update", made, exclusive=False)
    return state.proposed(proposal, request.scopes, where)


@router.get("/proposals", name="proposals", response_model=schemas.ProposalsOut, responses=ERRORS)
def list_proposals(
    state: State,
    status: Annotated[ProposalStatus | None, Query(description="Only these.")] = None,
    limit: Annotated[
        int | None,
        Query(ge=1, le=1000, description="Most proposals in the answer (default: all)."),
    ] = None,
    cursor: Annotated[
        str | None,
        Query(max_length=4000, description="A page's next_cursor: the proposals after it."),
    ] = None,
) -> schemas.ProposalsOut:
    """Stored proposals, newest first, with counts by status (as of the last sync); with
    ``limit``, a page of them, and ``next_cursor`` to ask for the next."""
    after = key_of(cursor, 2, "GET /api/proposals") if cursor else None
    everything = state.call("rest", "proposals", state.api.proposals)
    counts: dict[str, int] = {}
    for p in everything:
        counts[p.status] = counts.get(p.status, 0) + 1
    wanted = [p for p in everything if status is None or p.status == status]
    listed = [p for p in wanted if after is None or later_in_list(p, after)]
    shown = listed[:limit]
    last = shown[-1] if len(listed) > len(shown) else None  # more follow
    return schemas.ProposalsOut(
        proposals=[schemas.proposal_out(p) for p in shown],
        counts=counts,
        total=len(wanted),
        next_cursor=cursor_of(last.created_at, last.id) if last else None,
    )


def later_in_list(proposal: Proposal, after: tuple[str, ...]) -> bool:
    """Whether ``proposal`` comes after the one whose (created_at, id) is ``after`` in the
    listing's order (newest first, then by id), whether or not that one is still stored."""
    created, pid = after
    return proposal.created_at < created or (proposal.created_at == created and proposal.id > pid)
