"""MCP over stdio (I9): the tools of ``/mcp`` for clients that spawn their servers (Claude
Desktop, Cursor, Codex and most IDE agents in their default setup), on the SDK's stdio
transport. Same :class:`ServiceState`, same tool registrations, same bookkeeping as the HTTP
app; stdout carries the protocol and nothing else (messages go to stderr)."""

from __future__ import annotations

import logging
import os
import signal

import anyio
import anyio.to_thread

from briefd.api import Briefd
from briefd.service.app import beside_the_server, server_instructions
from briefd.service.config import ServiceConfig
from briefd.service.metrics import Metrics
from briefd.service.state import ServiceState
from briefd.service.tools import build_mcp

log = logging.getLogger("briefd.service")
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)  # how clients (and Ctrl-C) stop a spawned server


async def serve_stdio(api: Briefd, metrics: Metrics | None = None) -> None:
    """Answer MCP on stdin/stdout until the client closes stdin, or stops the process with
    SIGTERM or SIGINT (see :func:`_stop_on_signal`)."""
    state = ServiceState(api, ServiceConfig.from_settings(api.settings.serve), metrics or Metrics())
    mcp = build_mcp(state, server_instructions(api))
    async with beside_the_server(state, mcp), anyio.create_task_group() as tasks:
        tasks.start_soon(_stop_on_signal, state)
        await mcp.run_stdio_async()
        tasks.cancel_scope.cancel()


async def _stop_on_signal(state: ServiceState) -> None:
    """On SIGTERM or SIGINT: save the counters and the query log, then exit. At once: the
    SDK reads stdin on a worker thread that no cancellation reaches, so waiting for the server
    to wind down would wait for the client's next line (and a signal unhandled loses the calls
    since the last periodic flush)."""
    with anyio.open_signal_receiver(*STOP_SIGNALS) as received:
        async for _ in received:
            try:
                await anyio.to_thread.run_sync(state.flush)
            except Exception as exc:  # still stop: the client asked for it
                log.warning("could not save counters and the query log at shutdown: %s", exc)
            os._exit(0)
