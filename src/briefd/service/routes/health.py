"""``GET /api/health`` (I2): liveness and index presence, open without a token."""

from __future__ import annotations

from fastapi import APIRouter

from briefd.__about__ import __version__
from briefd.errors import IndexNotFoundError
from briefd.service import schemas
from briefd.service.deps import State

router = APIRouter(prefix="/api")


@router.get("/health", response_model=schemas.HealthOut, tags=["service"])
def health(state: State) -> schemas.HealthOut:
    """Liveness and index presence; open (no token). ``no_index``: nothing indexed yet;
    ``notice``: the index file was deleted or replaced under the server (and reopened)."""

    def documents() -> int | None:
        try:
            return sum(s.documents for s in state.api.scopes())
        except IndexNotFoundError:
            return None

    count = state.call("rest", "health", documents)
    return schemas.HealthOut(
        status="ok" if count is not None else "no_index",
        version=__version__,
        documents=count or 0,
        uptime_seconds=state.uptime_seconds(),
        notice=state.index_notice(),
    )
