"""MCP over stdio (I9): the tools of ``/mcp`` for clients that spawn their servers (Claude
Desktop, Cursor, Codex and most IDE agents in their default setup), on the SDK's stdio
transport. Same :class:`ServiceState`, same tool registrations, same bookkeeping as the HTTP
app; stdout carries the protocol and nothing else (messages go to stderr)."""

from __future__ import annotations

from briefd.api import Briefd
from briefd.service.app import beside_the_server, server_instructions
from briefd.service.config import ServiceConfig
from briefd.service.metrics import Metrics
from briefd.service.state import ServiceState
from briefd.service.tools import build_mcp


async def serve_stdio(api: Briefd, metrics: Metrics | None = None) -> None:
    """Answer MCP on stdin/stdout until the client closes stdin."""
    state = ServiceState(api, ServiceConfig.from_settings(api.settings.serve), metrics or Metrics())
    mcp = build_mcp(state, server_instructions(api))
    async with beside_the_server(state, mcp):
        await mcp.run_stdio_async()
