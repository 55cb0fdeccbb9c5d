"""HEAD wherever GET is allowed (RFC 9110 §9.3.2): FastAPI's routes take only the methods they
declare, so a HEAD (a monitor's probe, ``curl -I``) got 405. Pure-ASGI middleware: the request
goes on as a GET, and its answer leaves with the same status and headers and no body. The Guard
and every route see the GET, so the token is asked for exactly as there; a route that keeps
books of what it serves asks :func:`is_head` (a HEAD serves nobody: no tokens served, nothing in
the query log). ``/mcp`` is left alone: its GET opens an event stream, which a HEAD has no use
for."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

MCP_PATH = "/mcp"
HEAD = "briefd.head"  # set in the request's state (``scope["state"]``) of a HEAD run as a GET


def is_head(scope: Scope) -> bool:
    """Whether this GET is a HEAD: its answer leaves without a body."""
    return bool(scope.get("state", {}).get(HEAD))


class HeadAsGet:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return
        if scope["path"].rstrip("/") == MCP_PATH:
            await self.app(scope, receive, send)
            return

        async def without_body(message: Message) -> None:
            if message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        state = {**scope.get("state", {}), HEAD: True}
        await self.app({**scope, "method": "GET", "state": state}, receive, without_body)
