"""The git team flow over HTTP (K3, T1): ``POST /webhook/git`` (GitHub-signed, no bearer token),
``POST /api/admin/sync``, ``GET /api/sync``, ``POST /api/proposals``, ``GET /api/proposals``;
and the poller the app's lifespan runs. Thin handlers over :class:`Briefd`; errors leave as
``{error, detail}`` like every other route."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Annotated, Any, Literal

import anyio.to_thread
from fastapi import APIRouter, Body, HTTPException, Query, Request, status
from pydantic import BaseModel, Field

from briefd.api import Briefd
from briefd.errors import BriefdError
from briefd.proposals.model import Proposal, ProposalRequest
from briefd.service.rest import ERRORS, State, split_list
from briefd.sources.knowledge import resolve
from briefd.sync.poller import Poller
from briefd.sync.webhook import verify_signature

router = APIRouter()

SIGNATURE_HEADER = "X-Hub-Signature-256"


class ProposalIn(BaseModel):
    doc_path: str = Field(min_length=1, max_length=1000, description="e.g. domain/retry.md")
    change_description: str = Field(
        min_length=1, max_length=10_000, description="Why; becomes the commit message."
    )
    new_content: str = Field(
        min_length=1, max_length=2_000_000, description="The complete new Markdown."
    )
    scopes: list[str] | None = Field(None, description="Scopes the caller may see ('all').")
    client: str | None = Field(None, max_length=200)


class ProposalOut(BaseModel):
    id: str
    branch: str
    doc_path: str
    description: str
    commit_hash: str | None
    pr_url: str | None
    pr_number: int | None
    status: Literal["pushed", "open", "merged", "closed"] | str
    client: str | None
    created_at: str
    base_branch: str | None
    base_commit: str | None
    forge_error: str | None
    status_checked_at: str | None


class ProposalsOut(BaseModel):
    proposals: list[ProposalOut]
    counts: dict[str, int]


def proposal_out(proposal: Proposal) -> ProposalOut:
    return ProposalOut.model_validate(asdict(proposal))


@router.post("/webhook/git", status_code=status.HTTP_202_ACCEPTED, tags=["sync"])
async def git_webhook(request: Request, state: State) -> dict[str, Any]:
    """A push notification from the forge, signed with ``sync.webhook_secret``
    (``X-Hub-Signature-256``): starts a sync in the background (coalesced). A missing or wrong
    signature is 401 and nothing happens."""
    body = await request.body()
    secret = state.api.settings.sync.webhook_secret or ""
    if not secret:
        raise HTTPException(401, "the git webhook is off: set sync.webhook_secret on the server")
    if not verify_signature(secret, body, request.headers.get(SIGNATURE_HEADER)):
        raise HTTPException(
            401, f"missing or wrong {SIGNATURE_HEADER}; sign the raw body with the webhook secret"
        )
    event = request.headers.get("X-GitHub-Event", "push")
    skip = _skip_reason(event, body, state.api)
    if skip:
        return {"accepted": True, "event": event, "sync": "skipped", "reason": skip}
    started = await anyio.to_thread.run_sync(
        lambda: state.call("rest", "webhook_git", state.api.trigger_sync)
    )
    return {"accepted": True, "event": event, "sync": "started" if started else "queued"}


def _skip_reason(event: str, body: bytes, api: Briefd) -> str | None:
    """No sync for a ping, nor for a push to a branch other than the one followed (a proposal
    branch briefd itself pushed, say)."""
    if event == "ping":
        return "ping"
    branch = api.settings.sync.branch
    if event != "push" or branch is None:
        return None
    try:
        ref = json.loads(body).get("ref")
    except (ValueError, AttributeError):
        return None
    if isinstance(ref, str) and ref.startswith("refs/heads/") and ref != f"refs/heads/{branch}":
        return f"push to {ref}, not to the followed branch {branch}"
    return None


@router.post(
    "/api/admin/sync", status_code=status.HTTP_202_ACCEPTED, responses=ERRORS, tags=["admin"]
)
def admin_sync(state: State) -> dict[str, Any]:
    """Start a sync in the background now (the dashboard's button); poll ``GET /api/sync``."""
    started = state.call("rest", "admin_sync", state.api.trigger_sync)
    current = state.call("rest", "sync_status", state.api.sync_status)
    return {"sync": "started" if started else "queued", "status": asdict(current)}


@router.get("/api/sync", responses=ERRORS, tags=["sync"])
def sync_status(state: State) -> dict[str, Any]:
    """Where the knowledge source stands: commit served, last attempt, its error."""
    return asdict(state.call("rest", "sync_status", state.api.sync_status))


@router.post(
    "/api/proposals",
    status_code=status.HTTP_201_CREATED,
    response_model=ProposalOut,
    responses=ERRORS,
    tags=["proposals"],
)
def create_proposal(state: State, body: Annotated[ProposalIn, Body()]) -> ProposalOut:
    """Propose a knowledge change: a branch ``briefd/proposal-<id>`` with one commit on the
    knowledge remote (and a pull request when a forge is configured). The served knowledge is
    not changed."""
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
    return proposal_out(made)


@router.get("/api/proposals", response_model=ProposalsOut, responses=ERRORS, tags=["proposals"])
def list_proposals(
    state: State,
    status: Annotated[
        Literal["pushed", "open", "merged", "closed"] | None, Query(description="Only these.")
    ] = None,
) -> ProposalsOut:
    """Stored proposals, newest first, with counts by status (as of the last sync)."""
    everything = state.call("rest", "proposals", state.api.proposals)
    counts: dict[str, int] = {}
    for p in everything:
        counts[p.status] = counts.get(p.status, 0) + 1
    shown = [proposal_out(p) for p in everything if status is None or p.status == status]
    return ProposalsOut(proposals=shown, counts=counts)


def start_poller(api: Briefd) -> Poller | None:
    """A running poller when ``sync.interval`` > 0 and the source is a git repository."""
    interval = api.settings.sync.interval
    if interval <= 0:
        return None
    try:
        versioned = resolve(api.settings).versioned
    except BriefdError:
        return None
    if not versioned:
        return None
    poller = Poller(api, interval)
    poller.start()
    return poller
