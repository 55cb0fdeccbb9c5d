"""Following the knowledge source over HTTP (K3): ``POST /webhook/git`` (GitHub-signed, no bearer
token), ``POST /api/admin/sync`` and ``GET /api/sync``. Thin handlers over :class:`Briefd`;
errors leave as ``{error, detail}`` like every other route. (The poller runs in the app's
lifespan, see :mod:`briefd.service.app`.)"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import anyio.to_thread
from fastapi import APIRouter, HTTPException, Request, status

from briefd.api import Briefd
from briefd.errors import BriefdError
from briefd.replicas.agree import announce_sync
from briefd.service.deps import ERRORS, State
from briefd.service.opsout import SyncOut, SyncStartedOut, answers
from briefd.service.schemas import ErrorBody
from briefd.service.state import Job
from briefd.store.activity import now_iso
from briefd.sync.runner import Told
from briefd.sync.state import SyncReport
from briefd.sync.webhook import (
    UnreadableEvent,
    event_payload,
    skipped_event,
    skipped_push,
    verify_signature,
)

router = APIRouter()

SIGNATURE_HEADER = "X-Hub-Signature-256"
DELIVERY_HEADER = "X-GitHub-Delivery"
GITLAB_TOKEN_HEADER = "X-Gitlab-Token"
GITLAB_REFUSED = (
    f"a GitLab webhook's {GITLAB_TOKEN_HEADER} is not a signature: this webhook takes "
    f"GitHub's {SIGNATURE_HEADER} (an HMAC-SHA256 of the raw body with sync.webhook_secret); "
    "a GitLab repository is followed by polling (sync.interval)"
)
IN_PLACE = (
    "the source is a folder read in place (a git checkout or a plain directory), which briefd "
    "never pulls: this sync re-reads it as it is now, and a pushed commit reaches it only once "
    "the folder is updated there (git pull); set source to the repository's URL for briefd to "
    "fetch pushes itself"
)
# Every 401 carries a challenge (RFC 9110 §15.5.2): this one names what is asked for, an
# HMAC-SHA256 signature in X-Hub-Signature-256, in a realm apart from the bearer token's.
CHALLENGE = f'HMAC-SHA256 realm="briefd-webhook", header="{SIGNATURE_HEADER}"'


@router.post(
    "/webhook/git",
    name="webhook_git",
    status_code=status.HTTP_202_ACCEPTED,
    tags=["sync"],
    responses={code: {"model": ErrorBody} for code in (400, 401, 409)},
)
async def git_webhook(request: Request, state: State) -> dict[str, Any]:
    """A push notification from the forge, signed with ``sync.webhook_secret``
    (``X-Hub-Signature-256``): starts a sync in the background (coalesced). A missing or wrong
    signature is 401, a replayed delivery 409, JSON too deeply nested to read 400, and nothing
    happens. (The body was read and
    bounded by :mod:`briefd.service.limits` before the signature is checked.)"""
    body = await request.body()
    secret = state.api.settings.sync.webhook_secret or ""
    if not secret:
        raise unsigned("the git webhook is off: set sync.webhook_secret on the server")
    header = request.headers.get(SIGNATURE_HEADER)
    if header is None and GITLAB_TOKEN_HEADER in request.headers:
        raise unsigned(GITLAB_REFUSED)
    if not verify_signature(secret, body, header):
        raise unsigned(
            f"missing or wrong {SIGNATURE_HEADER}; sign the raw body with the webhook secret"
        )
    event = request.headers.get("X-GitHub-Event", "push")
    try:
        replayed = state.deliveries.refusal(request.headers.get(DELIVERY_HEADER), body)
        if replayed:
            raise HTTPException(409, replayed)
        skip = _skip_reason(event, body, state.api)
    except UnreadableEvent as exc:
        raise HTTPException(400, str(exc)) from None
    if skip:
        return {"accepted": True, "event": event, "sync": "skipped", "reason": skip}
    started = await anyio.to_thread.run_sync(
        lambda: state.call("rest", "webhook_git", state.api.trigger_sync)
    )
    await anyio.to_thread.run_sync(announce_sync, state.api.state)  # every other replica too
    answer = {"accepted": True, "event": event, "sync": "started" if started else "queued"}
    if not state.api.settings.sync.remote:  # a checkout or a folder: read in place
        answer["note"] = IN_PLACE
    return answer


def unsigned(detail: str) -> HTTPException:
    """The webhook's 401, with its challenge."""
    return HTTPException(401, detail, headers={"WWW-Authenticate": CHALLENGE})


def _skip_reason(event: str, body: bytes, api: Briefd) -> str | None:
    """No sync for a ping, nor for a push the followed source does not see, nor for any other
    event of another repository (see :func:`~briefd.sync.webhook.skipped_push` and
    :func:`~briefd.sync.webhook.skipped_event`)."""
    if event == "ping":
        return "ping"
    payload = event_payload(body)
    if payload is None:
        return None
    if event != "push":
        return skipped_event(event, payload, api.settings.sync.remote)
    return skipped_push(payload, api.settings.sync.branch, api.settings.sync.remote)


@router.post(
    "/api/admin/sync",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=None,
    responses=answers(202, SyncStartedOut, ERRORS),
    tags=["admin"],
)
def admin_sync(state: State) -> dict[str, Any]:
    """Start a sync in the background now (the dashboard's button); poll ``GET /api/stats``
    (jobs: how the run that covers this request ended) or ``GET /api/sync``."""
    job = Job("sync", now_iso())
    started = state.call("rest", "admin_sync", lambda: state.api.trigger_sync(ended(job)))
    state.jobs["sync"] = job
    announce_sync(state.api.state)
    current = state.locked(state.api.sync_status)  # part of this request: not a GET /api/sync
    return {"sync": "started" if started else "queued", "status": asdict(current), "job": vars(job)}


def ended(job: Job) -> Told:
    """What ``job`` says once its sync ended: the error, or the commit and index it served."""

    def tell(outcome: SyncReport | Exception) -> None:
        if isinstance(outcome, Exception):
            job.error = f"sync failed unexpectedly ({outcome!r}); see the log"
        elif outcome.error is not None:
            job.error = outcome.error
        else:
            index = outcome.index
            job.summary = {
                "commit": outcome.commit,
                "documents": index.documents if index else None,
                "chunks": index.chunks if index else None,
                "proposals_changed": list(outcome.proposals_changed),
                "forge_error": outcome.forge_error,  # statuses not refreshed: why
            }
        job.finished_at = now_iso()

    return tell


@router.get(
    "/api/sync", response_model=None, responses=answers(200, SyncOut, ERRORS), tags=["sync"]
)
def sync_status(state: State) -> dict[str, Any]:
    """Where the knowledge source stands: commit served, last attempt, its error; replicas
    (a shared state): every replica's commit and last sync, as each last reported it."""
    out = asdict(state.call("rest", "sync_status", state.api.sync_status))
    shared = state.api.state
    if shared.shared:
        try:
            out["replicas"] = [asdict(r) for r in shared.replicas()]
        except BriefdError as exc:
            out["replicas_error"] = str(exc)
    return out
