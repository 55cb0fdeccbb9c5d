"""What every REST router shares: the service state as a FastAPI dependency, the error
responses the routes document (bodies are ``{error, detail}``, see :mod:`briefd.service.app`),
and the check that a query string names only the route's parameters."""

from __future__ import annotations

from collections import Counter
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from fastapi import Depends, Request
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute

from briefd.service.head import is_head
from briefd.service.problems import did_you_mean
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
    takes no query parameter (health probes, the webhook, the pages) is left as it was. A
    parameter of one value given twice (``?q=refunds&q=chargebacks``) is refused too: the
    last one was read, the others dropped. (Async: run in the event loop, not a worker thread
    per request.)"""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    taken = query_fields(route)
    if not taken:
        return
    given = Counter(name for name, _ in request.query_params.multi_items())
    problems = [_not_taken(name, tuple(taken)) for name in given if name not in taken]
    several = [name for name, many in taken.items() if many]
    problems += [
        _twice(name, n, several) for name, n in given.items() if n > 1 and taken.get(name) is False
    ]
    if problems:
        raise RequestValidationError(problems)


def query_fields(route: APIRoute) -> dict[str, bool]:
    """The query parameters ``route`` reads, its dependencies' too, as a URL names them, each
    with whether it takes several values (a list: repeated, or a comma list)."""
    fields: dict[str, bool] = {}
    pending = [route.dependant]
    while pending:
        dependant = pending.pop()
        for field in dependant.query_params:
            fields.setdefault(field.alias, _several(field.field_info.annotation))
        pending += dependant.dependencies
    return fields


def _several(annotation: Any) -> bool:
    """Whether a parameter of this type takes several values: ``list[str]``, also optional."""
    options = get_args(annotation) if get_origin(annotation) in (Union, UnionType) else ()
    return any(get_origin(t) in (list, tuple, set) for t in (annotation, *options))


def _not_taken(name: str, taken: tuple[str, ...]) -> dict[str, Any]:
    said = f"not a parameter of this route{did_you_mean(name, taken)}; it takes {', '.join(taken)}"
    return {"type": "extra_forbidden", "loc": ("query", name), "msg": said, "input": None}


def _twice(name: str, count: int, several: list[str]) -> dict[str, Any]:
    lists = f" ({', '.join(several)} take several)" if several else ""
    said = f"given {count} times, and it takes one value; send it once{lists}"
    return {"type": "extra_forbidden", "loc": ("query", name), "msg": said, "input": None}
