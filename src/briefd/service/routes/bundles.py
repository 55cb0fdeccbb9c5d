"""``POST /api/bundle`` (I2): a context bundle for a task, compiled, counted and logged by
:meth:`ServiceState.compile_bundle` exactly as for the MCP tool."""

from __future__ import annotations

from fastapi import APIRouter, Request

from briefd.atlassian import caller_account
from briefd.bundles import BundleRequest
from briefd.service import schemas
from briefd.service.deps import ERRORS, State
from briefd.service.state import Caller

router = APIRouter(prefix="/api", tags=["knowledge"])


@router.post("/bundle", response_model=schemas.BundleOut, responses=ERRORS)
def bundle(state: State, body: schemas.BundleIn, http: Request) -> schemas.BundleOut:
    """A token-budgeted, deterministic context bundle for a task (B1–B5)."""
    request = BundleRequest(
        task=body.task,
        max_tokens=body.max_tokens,
        scopes=tuple(body.scopes) if body.scopes else None,
        paths=tuple(body.paths),
        format=body.format,  # type: ignore[arg-type]  # validated by the pattern
        base=body.base,
        issue=body.issue,
    )
    account = caller_account(http.headers)  # an issue key is read as the caller, if given
    return state.compile_bundle(request, Caller("rest", "compile_bundle", body.client, account))
