"""What every REST router shares: the service state as a FastAPI dependency, the error
responses the routes document (bodies are ``{error, detail}``, see :mod:`briefd.service.app`)
and the parsing of list-valued query parameters."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request

from briefd.service.schemas import ErrorBody
from briefd.service.state import ServiceState

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (400, 401, 403, 404, 422, 503)
}
BUSY: dict[int | str, dict[str, Any]] = {**ERRORS, 409: {"model": ErrorBody}}  # one at a time


def get_state(request: Request) -> ServiceState:
    """The shared service state, for any router mounted on the app."""
    state: ServiceState = request.app.state.briefd
    return state


State = Annotated[ServiceState, Depends(get_state)]


def split_list(values: list[str] | None) -> tuple[str, ...] | None:
    """Repeated and/or comma-separated query values; None when none were given."""
    if not values:
        return None
    items = tuple(v.strip() for item in values for v in item.split(",") if v.strip())
    return items or None
