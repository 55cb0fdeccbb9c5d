"""A path with a slash too many (``/api/stats/``, ``/mcp/``: an address copied from a browser,
a client configured by hand) or one too few is sent on to the route it means, as Starlette's
own ``redirect_slashes`` did, but by a *relative* ``Location`` (``../stats``): Starlette's names
the host's root (``http://host/api/stats``), which behind a reverse proxy that serves briefd
under a path (``https://tools.example.com/briefd/``, prefix stripped) lost the ``/briefd`` and
landed on another site's 404. Pure ASGI, inside the Guard: only a caller the Guard let in learns
that a route exists."""

from __future__ import annotations

from starlette.responses import RedirectResponse
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Receive, Scope, Send


def relative_location(to: str, query: bytes) -> str:
    """The reference that resolves against ``to`` with a final slash added or taken off (the
    address asked) to ``to``: ``../stats`` from ``/api/stats/``, ``docs/`` from ``/docs``."""
    name = to.rstrip("/").rpartition("/")[2]
    location = name + "/" if to.endswith("/") else "../" + name
    return location + (f"?{query.decode('latin-1')}" if query else "")


class RelativeSlashes:
    def __init__(self, app: ASGIApp, routes: list[BaseRoute]) -> None:
        self.app = app
        self.routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or path == "/" or self._matched(scope, path):
            await self.app(scope, receive, send)
            return
        to = path[:-1] if path.endswith("/") else path + "/"  # one slash only: past one, a
        if self._matched(scope, to):  # relative "../../x" resolves differently in httpx
            location = relative_location(to, scope.get("query_string", b""))
            await RedirectResponse(location, status_code=307)(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _matched(self, scope: Scope, path: str) -> bool:
        asked = {**scope, "path": path}
        return any(route.matches(asked)[0] is not Match.NONE for route in self.routes)
