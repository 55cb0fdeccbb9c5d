"""Pure-ASGI middleware for I3: Host/Origin validation against DNS rebinding, then the bearer
token on everything that hands out data. Pure functions decide; the class only answers."""

from __future__ import annotations

import hmac
import json
from urllib.parse import urlsplit

from mcp_types import INVALID_REQUEST
from starlette.types import ASGIApp, Receive, Scope, Send

from briefd.project import is_any_interface
from briefd.service.config import ServiceConfig, is_loopback

# Open without a token: the dashboard's empty page shell (its data needs the token), the setup
# page, the health probe and the git webhook (it carries its own HMAC signature). The OpenAPI
# schema, /docs and (unless serve.metrics_auth is false) /metrics need the token. A probe
# configured as /api/health/ is sent on to /api/health (the app's slash redirect, no data)
# with a token set as without one.
OPEN_EXACT = frozenset({"/", "/setup", "/setup/", "/api/health", "/api/health/", "/favicon.ico"})
OPEN_PREFIXES = ("/webhook/",)
MCP_PATH = "/mcp"


def host_allowed(config: ServiceConfig, host_header: str | None) -> bool:
    if not host_header:
        return False
    if is_any_interface(config.host) and not config.allowed_hosts:
        return True  # any interface: the token (required there) is the protection
    name = _host_name(host_header)
    return name in config.host_names


def _host_name(host_header: str) -> str:
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def origin_allowed(config: ServiceConfig, origin: str | None, host_header: str | None) -> bool:
    """No Origin (not a browser, or same-origin GET): fine. Otherwise the page must come from
    this server itself, from a loopback address, or from a configured origin."""
    if not origin:
        return True
    if origin in config.allowed_origins:
        return True
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    if host_header and parts.netloc.lower() == host_header.strip().lower():
        return host_allowed(config, host_header)
    return is_loopback(parts.hostname)


def needs_token(config: ServiceConfig, path: str) -> bool:
    if config.token is None:
        return False
    if path == "/metrics":
        return config.metrics_auth
    return path not in OPEN_EXACT and not path.startswith(OPEN_PREFIXES)


def token_ok(config: ServiceConfig, authorization: str | None) -> bool:
    if config.token is None:
        return True
    scheme, _, value = (authorization or "").partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(value.strip().encode(), config.token.encode())


class Guard:
    def __init__(self, app: ASGIApp, config: ServiceConfig) -> None:
        self.app = app
        self.config = config

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host")
        if not host_allowed(self.config, host):
            await deny(
                scope, send, 421, "misdirected", f"Host '{host}' is not served here; " + _HINT
            )
            return
        origin = headers.get("origin")
        if not origin_allowed(self.config, origin, host):
            await deny(scope, send, 403, "forbidden_origin", origin_refused(origin))
            return
        if needs_token(self.config, scope["path"]) and not token_ok(
            self.config, headers.get("authorization")
        ):
            await deny(
                scope,
                send,
                401,
                "unauthorized",
                "missing or wrong bearer token; send 'Authorization: Bearer <BRIEFD_API_TOKEN>'",
                {"www-authenticate": 'Bearer realm="briefd"'},
            )
            return
        await self.app(scope, receive, send)


_HINT = "add it to serve.allowed_hosts / serve.allowed_origins in briefd.yaml if it is yours"


def origin_refused(origin: str | None) -> str:
    """Why a page's origin is refused (here, and by :class:`~briefd.service.cors.Cors`)."""
    return f"Origin '{origin}' is not allowed; " + _HINT


def denial(path: str, error: str, detail: str) -> bytes:
    """The body of a refusal: ``{"error", "detail"}``, or on ``/mcp`` a JSON-RPC error whose
    message is the detail — what MCP clients show (the SDK's client puts any other body of a
    4xx/5xx aside and says only "Server returned an error response")."""
    if path.rstrip("/") != MCP_PATH:
        return json.dumps({"error": error, "detail": detail}).encode()
    said = {"code": INVALID_REQUEST, "message": detail, "data": {"error": error}}
    return json.dumps({"jsonrpc": "2.0", "id": None, "error": said}).encode()


async def deny(
    scope: Scope,
    send: Send,
    status: int,
    error: str,
    detail: str,
    extra: dict[str, str] | None = None,
) -> None:
    body = denial(scope["path"], error, detail)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(k.encode(), v.encode()) for k, v in (extra or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
