"""CORS for the pages on ``serve.allowed_origins`` (I3): Starlette's middleware, except that a
preflight from an origin it does not allow is refused as the Guard refuses that origin's
requests — 403 ``{"error": "forbidden_origin", "detail": …}`` saying where to allow it —
rather than with Starlette's plain-text 400 "Disallowed CORS origin"."""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.types import Receive, Scope, Send

from briefd.service.guard import deny, origin_refused


class Cors(CORSMiddleware):
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        origin = _refused_preflight(self, scope)
        if origin is None:
            await super().__call__(scope, receive, send)
            return
        await deny(scope, send, 403, "forbidden_origin", origin_refused(origin))


def _refused_preflight(cors: CORSMiddleware, scope: Scope) -> str | None:
    """The origin of a preflight request (OPTIONS with Access-Control-Request-Method) that
    ``cors`` does not allow; None for anything else."""
    if scope["type"] != "http" or scope["method"] != "OPTIONS":
        return None
    headers = Headers(scope=scope)
    origin = headers.get("origin")
    if origin is None or "access-control-request-method" not in headers:
        return None
    return None if cors.is_allowed_origin(origin) else origin
