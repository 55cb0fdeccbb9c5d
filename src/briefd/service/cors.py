"""CORS for the pages on ``serve.allowed_origins`` (I3): Starlette's middleware, except that a
preflight it refuses gets the service's JSON error rather than Starlette's plain-text 400
"Disallowed CORS …". One from an origin it does not allow is refused as the Guard refuses
that origin's requests — 403 ``{"error": "forbidden_origin", "detail": …}`` saying where to
allow it; one from an allowed origin asking for a method, request headers or private network
access it does not allow, with 400 ``{"error": "cors_refused", "detail": …}`` saying what was
refused and what is allowed."""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.types import Receive, Scope, Send

from briefd.service.guard import deny, origin_refused


class Cors(CORSMiddleware):
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        asked = _preflight(scope)
        if asked is None:
            await super().__call__(scope, receive, send)
            return
        origin = asked["origin"]
        if not self.is_allowed_origin(origin):
            await deny(scope, send, 403, "forbidden_origin", origin_refused(origin))
            return
        refused = refusals(self, asked)
        if not refused:
            await super().__call__(scope, receive, send)
            return
        detail = f"CORS preflight from {origin} refused: " + "; ".join(refused)
        headers = {**self.preflight_headers, "Access-Control-Allow-Origin": origin}
        await deny(scope, send, 400, "cors_refused", detail, headers)


def _preflight(scope: Scope) -> Headers | None:
    """The headers of a preflight request (OPTIONS with Origin and
    Access-Control-Request-Method); None for anything else."""
    if scope["type"] != "http" or scope["method"] != "OPTIONS":
        return None
    headers = Headers(scope=scope)
    if "origin" not in headers or "access-control-request-method" not in headers:
        return None
    return headers


def refusals(cors: CORSMiddleware, asked: Headers) -> list[str]:
    """What a preflight from an allowed origin asks for that ``cors`` does not allow, each
    with what it allows (Starlette's checks, in its order)."""
    refused: list[str] = []
    method = asked["access-control-request-method"]
    if method not in cors.allow_methods:
        allowed = ", ".join(cors.allow_methods)
        refused.append(f"the method {method} is not allowed (allowed: {allowed})")
    requested = asked.get("access-control-request-headers")
    if requested is not None and not cors.allow_all_headers:
        names = [h.strip().lower() for h in requested.split(",")]
        if extra := [name for name in names if name not in cors.allow_headers]:
            allowed = ", ".join(cors.allow_headers)
            said = "request header {} is" if len(extra) == 1 else "request headers {} are"
            refused.append(f"the {said.format(', '.join(extra))} not allowed (allowed: {allowed})")
    if "access-control-request-private-network" in asked and not cors.allow_private_network:
        refused.append(
            "private network access (Access-Control-Request-Private-Network) is not allowed"
        )
    return refused
