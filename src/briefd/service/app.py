"""The one ASGI app (I1–I6): REST under ``/api``, MCP at ``/mcp``, ``/metrics``, the dashboard
at ``/`` and ``/setup`` — a composition of small routers over one :class:`Briefd`, behind the
Host/Origin/token guard. The MCP session manager runs inside this app's lifespan, next to the
task that flushes counters and the query log to SQLite."""

from __future__ import annotations

import logging
import math
import re
import sqlite3
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from http import HTTPStatus
from typing import Any

import anyio
import anyio.to_thread
from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from mcp.server import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Route

from briefd import errors
from briefd.__about__ import __version__
from briefd.api import Briefd
from briefd.atlassian.credentials import HEADER_PAIRS
from briefd.hook.client import ANSWER_HEADER, INDEX_HEADER
from briefd.replicas import agree
from briefd.service import agreement
from briefd.service import atlassian as live_lookups
from briefd.service.config import ServiceConfig
from briefd.service.cors import Cors
from briefd.service.deps import known_query
from briefd.service.guard import Guard
from briefd.service.head import HeadAsGet
from briefd.service.limits import Limits
from briefd.service.mcpserver import said
from briefd.service.metrics import Metrics
from briefd.service.openapi import with_security
from briefd.service.problems import body_fields, body_problems
from briefd.service.render import instructions
from briefd.service.routes import (
    activity,
    admin,
    apidocs,
    atlassian,
    bundles,
    health,
    knowledge,
    pages,
    proposals,
    recall,
    sync,
    team,
)
from briefd.service.routes import metrics as prometheus
from briefd.service.schemas import scopes_out
from briefd.service.slashes import RelativeSlashes
from briefd.service.state import ServiceState
from briefd.service.tools import build_mcp
from briefd.settings.trust import opened_to_problem
from briefd.sources import git
from briefd.store.db import RUN_AGAIN, busy
from briefd.store.scopes import default_scope_warnings
from briefd.sync.poller import Poller
from briefd.text import visible

log = logging.getLogger("briefd.service")

SHOWN_LOST = 10  # proposal records and usage reports named when lost at shutdown
LOST_AT_SHUTDOWN = (
    "the index could not take %d write(s) a client was told are stored, lost with this stop: %s"
)
BRANCH_STANDS = (
    ". A proposal's branch stands where it was made (pushed to the remote, or a local branch of "
    "the repository when proposals stay local), with its pull request if one was opened, "
    "unknown to briefd until a sync adopts it (once it is older than a push may take, 10 "
    "minutes or more: proposals.git_timeout) and lists it again: do not propose it again"
)
WAITING_TO_SAVE = (
    "another process is writing the index: waiting up to %.0f s to save the counters, the "
    "query log and what waits to be written"
)
BUSY_RETRY_S = 0.25  # between tries of the last flush while another process writes the index
SHUTDOWN_WAIT_S = 8.0  # for a running sync or rebuild: inside `docker stop`'s 10 s before SIGKILL
MCP_HEADERS = ("Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-ID")  # CORS: allowed
# CORS, for pages on serve.allowed_origins: the request headers briefd reads besides those (a
# caller's own Atlassian account, the index a recall is for), and the answer headers it sets
# that a page's code needs (an MCP session, how long to wait, a recall's mark, why a 401).
CALLER_HEADERS = (*(name for pair in HEADER_PAIRS for name in pair), INDEX_HEADER)
EXPOSED_HEADERS = ("Mcp-Session-Id", "Retry-After", ANSWER_HEADER, "WWW-Authenticate")
STATUS: tuple[tuple[type[errors.BriefdError], int], ...] = (
    (errors.ProposalsOffError, 403),
    (errors.ProposalRemoteError, 502),
    (errors.ProposalConflictError, 409),
    (errors.NotFoundError, 404),
    (errors.IndexNotFoundError, 503),
    (errors.StoreError, 503),
    (errors.EmbeddingError, 503),
    (errors.SourceError, 503),
    (errors.BusyError, 409),
    (errors.ConfigError, 500),
    (errors.IntegrationOffError, 404),
    (errors.RateLimitedError, 429),
    (errors.IntegrationError, 502),
)
HTTP_ERRORS = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    429: "rate_limited",
    413: "too_large",
    414: "uri_too_long",
    421: "misdirected",  # as the Guard names its own 421
    422: "invalid_request",
}

ROUTERS = (
    health.router,
    knowledge.router,
    bundles.router,
    activity.router,
    admin.router,
    prometheus.router,
    pages.router,
    apidocs.router,
    recall.router,
    sync.router,
    proposals.router,
    atlassian.router,
    team.router,
)


def status_of(exc: errors.BriefdError) -> int:
    return next((code for kind, code in STATUS if isinstance(exc, kind)), 400)


def headers_of(exc: errors.BriefdError) -> dict[str, str] | None:
    """Headers an error answer carries: a rate limit passes on the site's ``Retry-After``."""
    if isinstance(exc, errors.RateLimitedError) and exc.retry_after is not None:
        return {"Retry-After": str(math.ceil(exc.retry_after))}
    return None


def error_name(exc: errors.BriefdError) -> str:
    name = type(exc).__name__.removesuffix("Error") or "Briefd"
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def create_app(
    api: Briefd,
    config: ServiceConfig | None = None,
    metrics: Metrics | None = None,
    building: Callable[[], bool] | None = None,
    left: Callable[[], float | None] | None = None,
) -> FastAPI:
    """The service over ``api``. ``config`` defaults to ``serve:`` settings plus
    ``BRIEFD_API_TOKEN``; pass ``metrics`` when an embedder already counts into it, and
    ``building`` when a first index still runs beside the server (see ``ServiceState``),
    with ``left``, the seconds that index says it has left."""
    config = config or ServiceConfig.from_settings(api.settings.serve)
    named = api.settings.project_named
    if problem := opened_to_problem(named, config.allowed_hosts, config.allowed_origins):
        raise errors.ConfigError(problem)
    state = ServiceState(api, config, metrics or Metrics())
    if building is not None:
        state.first_build = building
    if left is not None:
        state.first_left = left
    mcp = mcp_server(state)
    # The SDK's own Host/Origin check is off: the Guard below covers every route alike.
    mcp.streamable_http_app(
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    sessions = mcp.session_manager

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with sessions.run(), beside_the_server(state, mcp), agreement.announced(state):
            yield

    app = FastAPI(
        title="briefd",
        version=__version__,
        description="Context compiler for AI coding teams: knowledge search, bundles, documents.",
        lifespan=lifespan,
        docs_url=None,  # served by routes/apidocs.py from local assets, not from a CDN
        redoc_url=None,
        redirect_slashes=False,  # RelativeSlashes: a proxy's path prefix survives
        dependencies=[Depends(known_query)],  # a query parameter no route reads is named
    )
    app.openapi = with_security(app.openapi, config)  # type: ignore[method-assign]
    app.state.briefd = state
    app.state.mcp = mcp
    _error_handlers(app)
    for routes in ROUTERS:
        app.include_router(routes)
    app.router.routes.append(Route("/mcp", StreamableHTTPASGIApp(sessions)))
    app.add_middleware(RelativeSlashes, routes=app.router.routes)
    app.add_middleware(Limits, config=config)  # inside the Guard: bodies only of allowed callers
    app.add_middleware(Guard, config=config)
    app.add_middleware(HeadAsGet)  # outside the Guard: its refusals leave bodiless too
    if config.allowed_origins:  # pages on those origins may call the API from a browser
        app.add_middleware(
            Cors,
            allow_origins=list(config.allowed_origins),
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "Content-Type", *MCP_HEADERS, *CALLER_HEADERS],
            expose_headers=list(EXPOSED_HEADERS),
            max_age=600,
        )
    return app


@asynccontextmanager
async def beside_the_server(state: ServiceState, mcp: MCPServer[Any]) -> AsyncIterator[None]:
    """What runs while MCP (HTTP or stdio) and REST serve: the persisted counters loaded, the
    git poller, the warm-up, and the periodic flush of counters and the query log (once more
    at the end)."""
    api = state.api
    await anyio.to_thread.run_sync(state.load_counters)
    await anyio.to_thread.run_sync(_warn_about_scopes, api)
    await anyio.to_thread.run_sync(_join_replicas, api)
    poller = await anyio.to_thread.run_sync(_start_poller, api)
    try:  # git is refused from the shutdown to its end, and again allowed however it ends
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(anyio.to_thread.run_sync, state.warm_up)
            tasks.start_soon(_flush_forever, state, lambda: _refresh_instructions(mcp, api))
            try:
                yield
            finally:
                tasks.cancel_scope.cancel()  # from here on, an await in this block is cancelled
                if poller is not None:
                    poller.stop(timeout=0)  # no sync starts from now on
                git.refuse_new()  # running git ends now, helpers too, none starts until the end
        stopping = time.monotonic()
        await anyio.to_thread.run_sync(_let_work_finish, state)
        await last_flush(state, stopping + SHUTDOWN_WAIT_S)
    finally:
        git.refuse_new(False)


async def last_flush(state: ServiceState, until: float) -> None:
    """Save the counters, the query log and the writes kept for later, once more before the
    process ends. An index another process is writing (``briefd index`` from a git hook or
    cron, another replica's sync) refuses the write after 200 ms: tried again until ``until``
    (``time.monotonic``), said once, rather than lose what this run served. What could not be
    saved is said (:func:`say_unsaved_at_shutdown`)."""
    waited = False
    while True:
        try:
            await anyio.to_thread.run_sync(state.flush)
        except errors.BriefdError as exc:
            if busy(exc) and time.monotonic() < until:
                if not waited:
                    log.warning(WAITING_TO_SAVE, until - time.monotonic())
                    waited = True
                await anyio.sleep(BUSY_RETRY_S)
                continue
            say_unsaved_at_shutdown(state, exc)
        else:
            say_unsaved_at_shutdown(state, None)
        return


def say_unsaved_at_shutdown(state: ServiceState, failed: BaseException | None) -> None:
    """What the last flush could not save, lost with this stop: the counters and the query
    log since the last flush (``failed``), and, by name, each proposal record and usage report
    a client was told is stored (a proposal's branch stands, unknown to briefd)."""
    if failed is not None:
        said = str(failed).replace(f"; {RUN_AGAIN}", "")
        log.warning(
            "could not save %s at shutdown: %s (lost with this stop)", _unsaved(failed), said
        )
    lost = state.unsaved_writes()
    if not lost:
        return
    shown = "; ".join(lost[:SHOWN_LOST]) + (
        f"; and {len(lost) - SHOWN_LOST} more" if len(lost) > SHOWN_LOST else ""
    )
    advice = BRANCH_STANDS if any(said.startswith("proposal ") for said in lost) else ""
    log.error(LOST_AT_SHUTDOWN + "%s", len(lost), shown, advice)


def _unsaved(exc: BaseException) -> str:
    """What a failed flush left unsaved: only the query log when the shared state is away
    (the counters went to the local index)."""
    if isinstance(exc, errors.StateUnavailableError):
        return "the query log"
    return "counters and the query log"


def _retried(exc: BaseException, state: ServiceState) -> str:
    """A failed flush's error as the server says it: a full disk's "run the command again"
    is for a command; the server tries again at its next flush by itself."""
    every = f"free disk space: the server tries again every {state.config.flush_seconds:g} s"
    return str(exc).replace(RUN_AGAIN, every)


def _let_work_finish(state: ServiceState, wait: float = SHUTDOWN_WAIT_S) -> None:
    """A sync or rebuild still running at shutdown kept writing while the index closed (its
    work lost, the last flush refused as busy, at worst a crash on the way out): wait for it,
    bounded, and say so. Git gets no wait: none runs during the shutdown (``git.refuse_new``),
    so a sync stuck on a remote ends at once. Nor does a first index that says it has more
    than twice the wait left (Ctrl-C during one on 1,370 sections, ~69 s left, waited its 8 s
    and stopped it all the same)."""
    deadline = time.monotonic() + wait
    left = state.first_left() if state.first_build() else None
    if left is not None and left > 2 * wait:
        deadline = time.monotonic()
        log.warning("not waiting for the first index to finish: it says ~%.0f s left", left)
    elif _busy(state):
        log.warning("waiting up to %.0f s for the running sync or rebuild to finish", wait)
    while _busy(state) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _busy(state):
        log.warning(
            "stopping before the sync or rebuild finished: the index keeps its last "
            "committed state, and the next sync or rebuild starts over"
        )


def _busy(state: ServiceState) -> bool:
    return _rebuilding(state) or not state.api.syncs.idle or state.building()


def _rebuilding(state: ServiceState) -> bool:
    job = state.jobs.get("rebuild")
    return job is not None and job.running


async def _flush_forever(state: ServiceState, refresh: Callable[[], None]) -> None:
    """Every ``flush_seconds``: save the counters and the query log, refresh the MCP
    instructions, and load the index again if another process changed it. A failure is
    said once while it lasts (PostgreSQL away: every flush, a line every 5 s)."""
    said = ""
    while True:
        await anyio.sleep(state.config.flush_seconds)
        if state.first_build():  # the first index holds the file: counters and log wait for it
            continue
        try:
            await anyio.to_thread.run_sync(state.flush)
            await anyio.to_thread.run_sync(lambda: state.locked(refresh))
            said = ""
        except Exception as exc:  # keep serving (a full disk, a busy index): try again later
            if str(exc) != said:
                log.warning("could not save %s: %s", _unsaved(exc), _retried(exc, state))
            said = str(exc)
        try:
            await anyio.to_thread.run_sync(state.keep_warm)
        except (errors.BriefdError, sqlite3.Error) as exc:  # the next query says it
            log.warning("could not load the changed index: %s", exc)
        except Exception:  # a fault of briefd's own: said whole, and the server keeps serving
            log.exception("could not load the changed index (a briefd bug: please report it)")


def _warn_about_scopes(api: Briefd) -> None:
    """Log at start-up a default scope the index lacks: searches without scopes skip it."""
    try:
        names = [s.name for s in api.scopes()]
    except errors.BriefdError:  # no index yet: nothing to compare
        return
    for warning in default_scope_warnings(api.settings.default_scopes, names):
        log.warning("%s", warning)


def _join_replicas(api: Briefd) -> None:
    """Replicas (a shared state): sync when another replica is told to, and say which commit
    this one serves."""
    shared = api.state
    if shared.shared:
        agree.follow_syncs(shared, api.trigger_sync)
        agree.report_replica(api.settings, lambda: api.store, shared)


def _start_poller(api: Briefd) -> Poller | None:
    """A running poller when ``sync.interval`` > 0 and there is a source: a git URL's poll
    fetches, a checkout's or a plain folder's indexes what changed in it (an edit, a ``git
    pull``, files copied in), and each reads the new commits of ``code.repos`` (T4). A folder
    missing at the start (a mount not up yet) is polled too: each poll records why it failed,
    and the first one after it appears indexes it."""
    interval = api.settings.sync.interval
    if interval <= 0 or (api.settings.source is None and not api.settings.sync.remote):
        return None
    poller = Poller(api, interval)
    poller.start()
    return poller


def _refresh_instructions(mcp: MCPServer[Any], api: Briefd) -> None:
    """Scopes and document counts change with every sync; clients that connect later are
    told the current ones. (The SDK reads ``instructions`` from its low-level server at each
    initialize; MCPServer exposes it read-only.)"""
    mcp._lowlevel_server.instructions = server_instructions(api)


def mcp_server(state: ServiceState, setup_page: bool = True) -> MCPServer[Any]:
    """The MCP tools, over HTTP and stdio alike (I1, I9): briefd's own, and the live Confluence
    and Jira lookups of each product that is configured (A1, A2). ``setup_page``: errors may
    point at the server's ``/setup`` (not over stdio)."""
    mcp = build_mcp(state, server_instructions(state.api, state.building()), setup_page)
    live_lookups.register(mcp, state)
    return mcp


def server_instructions(api: Briefd, building: bool = False) -> str:
    """The MCP instructions for the index as it is; ``building``: a first index still runs
    (what it has written so far is not read: it is not the index to come)."""
    try:
        scopes = [] if building else api.scopes()
    except errors.BriefdError:
        scopes = []
    return instructions(scopes_out(scopes, api.settings.default_scopes), building)


def _error_handlers(app: FastAPI) -> None:
    @app.exception_handler(errors.BriefdError)
    async def briefd_error(_: Request, exc: errors.BriefdError) -> JSONResponse:
        # a file's name in it as the MCP error says it: 'a\u200bb.md', never 'ab.md' (mcpserver.py)
        body = {"error": error_name(exc), "detail": visible(said(exc, True))}
        return JSONResponse(body, status_of(exc), headers=headers_of(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        route = request.scope.get("route")
        fields: tuple[str, ...] = ()
        if isinstance(route, APIRoute):  # counted under the route's name, never its raw path
            state: ServiceState = request.app.state.briefd
            state.rejected("rest", route.name)
            body = route.body_field
            fields = body_fields(body.field_info.annotation) if body is not None else ()
        detail = body_problems(exc.errors(), request.headers.get("content-type"), fields)
        return JSONResponse({"error": "invalid_request", "detail": detail}, 422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        name = HTTP_ERRORS.get(exc.status_code, "error")
        detail = {"error": name, "detail": http_detail(request, exc)}
        return JSONResponse(detail, exc.status_code, headers=exc.headers)


def http_detail(request: Request, exc: StarletteHTTPException) -> str:
    """The error's own words; for a body too deeply nested to parse or not UTF-8, and for the
    router's bare "Not Found" / "Method Not Allowed" (no such route, or not with this method),
    what to send instead."""
    if isinstance(exc.__cause__, RecursionError):  # FastAPI: "There was an error parsing…"
        return (
            "the JSON body nests deeper than the server reads; send one JSON object of the "
            "route's fields (see /docs)"
        )
    if isinstance(exc.__cause__, UnicodeDecodeError):  # FastAPI: "There was an error parsing…"
        return not_utf8(exc.__cause__)
    if exc.detail != HTTPStatus(exc.status_code).phrase:
        return str(exc.detail)
    method, path = request.method, request.url.path
    if exc.status_code == 404:
        return f"no route {method} {path}; the API's routes are listed at /docs (OpenAPI: /openapi.json)"
    allowed = (exc.headers or {}).get("Allow")
    if exc.status_code == 405 and allowed:
        return f"{method} is not allowed on {path}; it takes {allowed}"
    return str(exc.detail)


def not_utf8(exc: UnicodeDecodeError) -> str:
    """Why a JSON body could not be read as text: where its first byte that is not UTF-8 is (a
    client that encodes text as Latin-1 or Windows-1252, as Windows PowerShell 5.1's
    ``Invoke-RestMethod`` does, sends é as the one byte 0xe9)."""
    byte = exc.object[exc.start]
    return (
        f"the body is not UTF-8 text: byte 0x{byte:02x} at offset {exc.start} ({exc.reason}); "
        "send the JSON encoded as UTF-8 (é, for one, is two bytes there, 0xc3 0xa9)"
    )
