"""``GET /api/health`` (I2): liveness and index presence, open without a token."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from briefd.__about__ import __version__
from briefd.api import Briefd
from briefd.errors import BriefdError, EmbeddingError, IndexNotFoundError, StoreError
from briefd.replicas.agree import knowledge_commit
from briefd.retrieval.search import vectors_missing
from briefd.service import agreement, schemas
from briefd.service.deps import State
from briefd.service.guard import token_ok
from briefd.state import replica_name

router = APIRouter(prefix="/api")
# what a caller without the token is told of the shared state: not its host, user or database
# (the reason is in the log, and here for a caller with the token)
OPENLY = (
    "the shared state {what}; search and bundles go on from the local index (the reason is in "
    "the server's log, and in /api/health asked with the API token)"
)

# searches falling back to keywords, as a caller without the token is told (not the models)
KEYWORDS_OPENLY = (
    "searched by keywords only (bm25): this index has no vectors, or not all, of the "
    "configured embedding model (which models, in /api/health asked with the API token); run "
    "`briefd index` to embed it with this model"
)


READ_ONLY_OPENLY = (
    "the index is opened read-only: the query log, usage reports and proposals are not kept; "
    "search and bundles go on from it (where, in /api/health asked with the API token)"
)

FULL_OPENLY = (
    "the index is opened read-only: its disk is full (free disk space, and briefd writes it "
    "again); the query log and usage reports wait in memory meanwhile, proposals are refused; "
    "search and bundles go on from it (where, in /api/health asked with the API token)"
)


# what else it answers: the index busy past the wait (another process writing it) or failing
# to read (503), a page from an origin not allowed (403); a damaged index is a 200 "damaged"
UNHEALTHY: dict[int | str, dict[str, Any]] = {
    403: {"model": schemas.ErrorBody, "description": "A page from an origin not allowed."},
    503: {"model": schemas.ErrorBody, "description": "The index could not be read (busy)."},
}


@router.get("/health", response_model=schemas.HealthOut, responses=UNHEALTHY, tags=["service"])
def health(state: State, request: Request) -> schemas.HealthOut:
    """Liveness and index presence; open (no token). ``no_index``: nothing indexed yet;
    ``degraded``: the shared state (PostgreSQL) is unreachable or refuses writes, or the index
    is opened read-only (a read-only mount: nothing of the team's is kept), search and
    bundles still serve (``state_error`` says why; to a caller without the token, only that it
    is unreachable or refuses); ``damaged``: a request found the index file damaged
    inside, so requests fail until it is rebuilt (``notice`` says so); ``notice``: the index
    file was deleted or replaced under the server (and reopened), or searches answer by
    keywords only where the settings ask for vectors (the index holds none, or not yet all,
    of the configured model's: embedded with another model); ``building``: the first
    index runs beside the server, or a new index file is filled from the source where the
    served one was deleted (alive: a container is healthy meanwhile). ``commit``: the
    knowledge commit this replica serves."""
    if state.building():
        shared = state.api.state
        return schemas.HealthOut(
            status="building",
            version=__version__,
            documents=0,
            uptime_seconds=state.uptime_seconds(),
            notice=state.being_built(),
            state=shared.engine,
            replica=replica_name(state.api.settings) if shared.shared else None,
        )

    def documents() -> tuple[int | None, str | None, str | None]:
        try:
            count = sum(s.documents for s in state.api.scopes())
            return count, knowledge_commit(state.api.store), keywords_only(state.api)
        except IndexNotFoundError:
            return None, None, None
        except StoreError:
            if state.index_damage() is None:  # busy, a full disk: said as for any request
                raise
            return None, None, None  # damaged inside: the status says so

    count, commit, fallback = state.call("rest", "health", documents)
    shared = state.api.state
    try:
        problem = shared.problem()  # outside the lock: PostgreSQL's answer holds up nobody
    except IndexNotFoundError:
        problem = None
    except BriefdError as exc:
        problem = str(exc)
    agreed = agreement.agreement_of(state)
    unlike = agreed.problem() if agreed is not None and problem is None else None
    if not token_ok(state.config, request.headers.get("authorization")):
        problem = said_openly(problem) if problem is not None else None
        fallback = KEYWORDS_OPENLY if fallback is not None else None
        unlike = agreement.OPENLY if unlike is not None else None
    damaged = state.index_damage()
    status = (
        "damaged" if damaged else "no_index" if count is None else "degraded" if problem else "ok"
    )
    return schemas.HealthOut(
        status=status,
        version=__version__,
        documents=count or 0,
        uptime_seconds=state.uptime_seconds(),
        notice=damaged or state.index_notice() or unlike or fallback,
        state=shared.engine,
        state_error=problem,
        replica=replica_name(state.api.settings) if shared.shared else None,
        commit=commit,
    )


def keywords_only(api: Briefd) -> str | None:
    """Why a search naming no mode answers by keywords only now (the warning each such
    search carries): the settings ask for vectors and the index holds none, or not yet all,
    of the configured model's (embedded with another model, served with ``--no-index``).
    None when searches get what the settings ask for. Reads the vectors a search would load
    (kept for it); loads no model."""
    if api.settings.search.mode == "bm25":
        return None
    try:
        semantic = api.semantic
    except EmbeddingError:  # the model cannot be created: every search says why
        return None
    if semantic is None:
        return None
    with api.store.read() as conn:
        return vectors_missing(conn, semantic)


def said_openly(problem: str) -> str:
    """``problem`` as a caller without the token may read it: unreachable or refusing, no more
    (the full line names PostgreSQL's host, port, user and database, and what it said; or the
    index's path)."""
    if problem.startswith("the index ") and " is opened read-only: its disk is full" in problem:
        return FULL_OPENLY
    if problem.startswith("the index ") and " is opened read-only " in problem:
        return READ_ONLY_OPENLY
    if " is unreachable" in problem:
        return OPENLY.format(what="is unreachable")
    if " did not answer within " in problem:
        return OPENLY.format(what="does not answer in time")
    if " refuses writes" in problem:
        return OPENLY.format(what="refuses writes")
    return OPENLY.format(what="refuses this replica's requests")
