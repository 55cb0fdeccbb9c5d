"""What every REST router shares: the service state as a FastAPI dependency, the error
responses the routes document (bodies are ``{error, detail}``, see :mod:`briefd.service.app`),
and the check that a query string names only the route's parameters."""

from __future__ import annotations

import difflib
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute

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


async def known_query(request: Request) -> None:
    """Refuse (422, as a body's unknown field is) a query parameter the route does not take:
    ``GET /api/search?q=refunds&scope=projects/ledger`` searched the default scopes, and
    ``top-k=3`` or ``limit=3`` answered the default count, each without a word. A route that
    takes no query parameter (health probes, the webhook, the pages) is left as it was. (Async:
    run in the event loop, not a worker thread per request.)"""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    taken = query_names(route)
    unknown = [name for name in dict.fromkeys(request.query_params) if name not in taken]
    if taken and unknown:
        raise RequestValidationError([_not_taken(name, taken) for name in unknown])


def query_names(route: APIRoute) -> tuple[str, ...]:
    """The query parameters ``route`` reads, its dependencies' too, as a URL names them."""
    names: list[str] = []
    pending = [route.dependant]
    while pending:
        dependant = pending.pop()
        names += [field.alias for field in dependant.query_params]
        pending += dependant.dependencies
    return tuple(dict.fromkeys(names))


def _not_taken(name: str, taken: tuple[str, ...]) -> dict[str, Any]:
    close = difflib.get_close_matches(name.replace("-", "_").lower(), taken, n=1, cutoff=0.6)
    meant = f" (did you mean {close[0]}?)" if close else ""
    said = f"not a parameter of this route{meant}; it takes {', '.join(taken)}"
    return {"type": "extra_forbidden", "loc": ("query", name), "msg": said, "input": None}
