"""``POST /api/bundle`` and ``POST /api/context`` (I2, B1–B8): a context bundle for a task, or
the context around one document, compiled, counted and logged by
:meth:`ServiceState.compile_bundle` exactly as for the MCP tools."""

from __future__ import annotations

from fastapi import APIRouter, Request

from briefd.atlassian import caller_account
from briefd.service import schemas
from briefd.service.deps import ERRORS, LOOKUP, State
from briefd.service.state import Caller

router = APIRouter(prefix="/api", tags=["knowledge"])


@router.post(
    "/bundle",
    name="compile_bundle",
    response_model=schemas.BundleOut,
    response_model_exclude_none=True,
    responses=LOOKUP,
)
def bundle(state: State, body: schemas.BundleIn, http: Request) -> schemas.BundleOut:
    """A token-budgeted, deterministic context bundle for a task (B1–B8)."""
    account = caller_account(http.headers)  # an issue key is read as the caller, if given
    caller = Caller("rest", "compile_bundle", body.client, account)
    return state.compile_bundle(body.request(), caller, body.verbose)


@router.post(
    "/context",
    name="document_context",
    response_model=schemas.BundleOut,
    response_model_exclude_none=True,
    responses=ERRORS,
)
def context(state: State, body: schemas.ContextIn) -> schemas.BundleOut:
    """The context around one document (B8): the document, its front-matter relations, its
    links and backlinks, then text matches for ``task`` (default: its title)."""
    caller = Caller("rest", "document_context", body.client)
    return state.compile_bundle(body.request(), caller, body.verbose)
