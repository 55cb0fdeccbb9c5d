"""What every REST router shares: the service state as a FastAPI dependency, the error
responses the routes document (bodies are ``{error, detail}``, see :mod:`briefd.service.app`)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request

from briefd.service.head import is_head
from briefd.service.schemas import ErrorBody
from briefd.service.state import ServiceState

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (400, 401, 403, 404, 422, 503)
}
BUSY: dict[int | str, dict[str, Any]] = {**ERRORS, 409: {"model": ErrorBody}}  # one at a time
# a proposal: the document changed on the base since it was served (409), git or forge (502)
PUSHES: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    **{code: {"model": ErrorBody} for code in (409, 502)},
}
# a bundle's issue key looked up in Jira: the site failed (502) or asked to wait (429)
LOOKUP: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    **{code: {"model": ErrorBody} for code in (429, 502)},
}


def get_state(request: Request) -> ServiceState:
    """The shared service state, for any router mounted on the app."""
    state: ServiceState = request.app.state.briefd
    return state


State = Annotated[ServiceState, Depends(get_state)]


def head_request(request: Request) -> bool:
    """Whether the request is a HEAD answered as a GET (:mod:`briefd.service.head`): it
    serves nobody, so it is counted as a request only."""
    return is_head(request.scope)


Head = Annotated[bool, Depends(head_request)]


# Every HTML page of the server: never framed by another site (its buttons would be clicked
# through a page on top, as this server's own), never sniffed, no Referer sent onwards.
FRAMING = {
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "content-security-policy": "frame-ancestors 'none'",
}
