"""Knowledge proposals over HTTP (T1): ``POST /api/proposals`` and ``GET /api/proposals``. Thin
handlers over :class:`Briefd`; a proposal leaves in the one shape MCP returns too
(:class:`briefd.service.schemas.ProposalOut`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Query, status

from briefd.proposals.model import ProposalRequest, ProposalStatus
from briefd.service import schemas
from briefd.service.deps import ERRORS, PUSHES, State
from briefd.service.schemas import split_list

router = APIRouter(prefix="/api", tags=["proposals"])


@router.post(
    "/proposals",
    name="propose_update",
    status_code=status.HTTP_201_CREATED,
    response_model=schemas.ProposalOut,
    responses=PUSHES,
)
def create_proposal(
    state: State, body: Annotated[schemas.ProposalIn, Body()]
) -> schemas.ProposalOut:
    """Propose a knowledge change: a branch ``briefd/proposal-<id>`` with one commit on the
    knowledge remote (and a pull request when a forge is configured). The served knowledge is
    not changed. 502: the remote refused the push or the forge did not answer (nothing stored)."""
    request = ProposalRequest(
        body.doc_path,
        body.change_description,
        body.new_content,
        split_list(body.scopes),
        body.client or "rest",
    )
    made = state.call(
        "rest", "propose_update", lambda: state.api.propose_update(request), exclusive=False
    )
    return state.proposed(made, request.scopes)


@router.get("/proposals", name="proposals", response_model=schemas.ProposalsOut, responses=ERRORS)
def list_proposals(
    state: State,
    status: Annotated[ProposalStatus | None, Query(description="Only these.")] = None,
) -> schemas.ProposalsOut:
    """Stored proposals, newest first, with counts by status (as of the last sync)."""
    everything = state.call("rest", "proposals", state.api.proposals)
    counts: dict[str, int] = {}
    for p in everything:
        counts[p.status] = counts.get(p.status, 0) + 1
    shown = [schemas.proposal_out(p) for p in everything if status is None or p.status == status]
    return schemas.ProposalsOut(proposals=shown, counts=counts)
