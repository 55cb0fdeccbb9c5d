"""Pure-ASGI middleware that bounds every request before a route sees it (issue 16).

- A URL (path and query) over :data:`MAX_URL_BYTES` is 414, and headers over
  :data:`MAX_HEADER_BYTES` are 431 however the head arrived (the listener answers a head h11
  gave up on while it came in pieces; one sent whole reaches the app).
- A body over ``serve.max_body_bytes`` is 413: refused from ``Content-Length`` before anything
  is read, and counted while it streams in (a missing or false length changes nothing). The
  body is read here, bounded, and handed on; the git webhook checks its signature only after.
- A body not all there :data:`BODY_TIMEOUT_S` after its head is 408: one sent slowly or left
  unfinished (slow-loris style, on the webhook that needs no token) held the request for good.
- A query parameter that is not UTF-8 text once percent-decoded is 400, naming it.
- A JSON body with a string that is not valid Unicode (a lone surrogate, which JSON can spell
  ``"\\ud800"``) is 400, naming the field, before any route runs or anything is queued.
- Open MCP event streams (``GET /mcp``) are capped at ``serve.max_streams``; more get 503.

Pure functions decide; the class only reads, counts and answers.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import unquote_plus, unquote_to_bytes

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from briefd.service.config import ServiceConfig
from briefd.service.guard import deny
from briefd.service.schemas import MAX_PATHS, split_list

MAX_URL_BYTES = 8 * 1024
MAX_HEADER_BYTES = 16 * 1024  # the listener's limit for a request head (HEAD_LIMIT)
BODY_TIMEOUT_S = 60.0  # for the whole body: max_body_bytes' 4 MiB at 70 KB/s
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def url_bytes(scope: Scope) -> int:
    path = scope.get("raw_path") or scope["path"].encode("utf-8", "surrogateescape")
    return len(path) + 1 + len(scope.get("query_string", b""))


def header_bytes(scope: Scope) -> int:
    """The headers' size as sent: ``name: value`` and a line end each."""
    return sum(len(name) + len(value) + 4 for name, value in scope["headers"])


def declared_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    """The ``Content-Length`` a client declared (None: none, or not a number)."""
    for name, value in headers:
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def invalid_text(body: bytes, content_type: str, root: str = "body") -> str | None:
    """Where a JSON body holds a string that is not valid Unicode, said for the caller (the
    place named from ``root``); None when it holds none (or is not JSON: the route answers
    that itself)."""
    if "json" not in content_type and content_type:
        return None
    if not _SURROGATE_ESCAPE.search(body):  # the only way JSON text can carry one
        return None
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):  # nested deeper than Python parses: the route says so
        return None
    found = _first_surrogate(data, root)
    if found is None:
        return None
    where, text, at = found
    return (
        f"{where} is not valid Unicode: a lone surrogate (U+{ord(text[at]):04X}) at character "
        f"{at}; send the text as UTF-8 (in JSON, \\ud800–\\udfff escapes only as pairs)"
    )


def invalid_query(query: bytes) -> str | None:
    """Which query parameter, percent-decoded, is not UTF-8 text, said for the caller (None:
    all are). Starlette reads such bytes as U+FFFD: ``?q=caf%E9`` (café percent-encoded from
    Latin-1) was searched as "caf\ufffd", answered with no hits and logged as a gap."""
    for pair in query.split(b"&"):
        name, _, value = pair.partition(b"=")
        for part in (name, value):
            raw = unquote_to_bytes(part.replace(b"+", b" "))
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                named = unquote_plus(name.decode("latin-1"))
                return (
                    f"query parameter '{named}' is not UTF-8 text: byte 0x{raw[exc.start]:02x} "
                    f"at offset {exc.start} ({exc.reason}); percent-encode the text's UTF-8 "
                    "bytes (é is %C3%A9)"
                )
    return None


def _first_surrogate(value: Any, where: str) -> tuple[str, str, int] | None:
    """The first string (or key), depth first, that is not valid Unicode: where it is, the
    string and the offset. A loop, not recursion: JSON may nest deeper than Python recurses."""
    stack: list[tuple[str, Any]] = [(where, value)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            at = _surrogate_at(value)
            if at is not None:
                return where, value, at
        elif isinstance(value, dict):
            for key in value:
                at = _surrogate_at(key)
                if at is not None:
                    return f"{where} key", key, at
            stack.extend(reversed([(f"{where}.{k}", v) for k, v in value.items()]))
        elif isinstance(value, list):
            stack.extend(reversed([(f"{where}[{n}]", v) for n, v in enumerate(value)]))
    return None


def _surrogate_at(text: str) -> int | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def url_advice(path: str, query: bytes = b"") -> str:
    """What to do about a URL over the limit: a search is a GET, so its query cannot move to
    a body; long text goes to the routes that take one. A search made long by its ``paths``
    (a diff's changed files) is told so, not to shorten a query of a few words."""
    too_long = f"the request URL is over {MAX_URL_BYTES} bytes"
    if path.rstrip("/").endswith("/api/search"):
        spent, count = _paths_in(query)
        if spent * 2 > len(query):
            return (
                f"{too_long}: its {count} paths alone take {spent} bytes; send the paths the task "
                f"changes most (bundles and the MCP tools take at most {MAX_PATHS}), or send "
                "them as the paths of POST /api/bundle, whose JSON body the URL does not limit"
            )
        return (
            f"{too_long}; search with the query's key words (a search reads at most its first "
            "256 distinct words), or send long text as the task of POST /api/bundle"
        )
    return f"{too_long}; send long input in a POST body"


def _paths_in(query: bytes) -> tuple[int, int]:
    """The bytes of a query string's ``paths`` parameters as sent, and how many paths they
    name (repeated and/or comma-separated, as the search route reads them)."""
    spent, values = 0, []
    for pair in query.split(b"&"):
        name, _, value = pair.partition(b"=")
        if unquote_plus(name.decode("latin-1")) == "paths":
            spent += len(pair) + 1
            values.append(unquote_plus(value.decode("latin-1")))
    return spent, len(split_list(values) or ())


class Limits:
    def __init__(self, app: ASGIApp, config: ServiceConfig) -> None:
        self.app = app
        self.config = config
        self.streams = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if url_bytes(scope) > MAX_URL_BYTES:
            advice = url_advice(scope["path"], scope.get("query_string", b""))
            await deny(scope, send, 414, "uri_too_long", advice)
            return
        if header_bytes(scope) > MAX_HEADER_BYTES:
            detail = f"the request headers are over {MAX_HEADER_BYTES // 1024} KiB"
            await deny(scope, send, 431, "headers_too_large", detail)
            return
        problem = invalid_query(scope.get("query_string", b""))
        if problem is not None:
            await deny(scope, send, 400, "bad_request", problem)
            return
        if scope["method"] == "GET" and scope["path"] == "/mcp":
            await self._stream(scope, receive, send)
            return
        if scope["method"] not in _BODY_METHODS:
            await self.app(scope, receive, send)
            return
        limit = self.config.max_body_bytes
        declared = declared_length(scope["headers"])
        if declared is not None and declared > limit:
            await deny(scope, send, 413, "too_large", _too_large(limit))
            return
        try:
            with anyio.fail_after(BODY_TIMEOUT_S):
                body = await _read(receive, limit)
        except _Gone:
            return  # nobody left to answer
        except TimeoutError:
            detail = f"the request body did not arrive within {BODY_TIMEOUT_S:.0f} s"
            await deny(scope, send, 408, "request_timeout", detail, {"connection": "close"})
            return
        if body is None:
            await deny(scope, send, 413, "too_large", _too_large(limit))
            return
        content_type = dict(scope["headers"]).get(b"content-type", b"").decode("latin-1")
        problem = invalid_text(body, content_type.lower())
        if problem is not None:
            await deny(scope, send, 400, "bad_request", problem)
            return
        await self.app(scope, _replay(body, receive), send)

    async def _stream(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.streams >= self.config.max_streams:
            detail = (
                f"{self.streams} MCP event streams are open, the most this server keeps "
                "(serve.max_streams); close one, or use POST requests, which need none"
            )
            await deny(scope, send, 503, "too_many_streams", detail, {"retry-after": "5"})
            return
        self.streams += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.streams -= 1


def _too_large(limit: int) -> str:
    return (
        f"the request body is over {limit} bytes (serve.max_body_bytes); send less, or raise "
        "the limit on the server"
    )


class _Gone(Exception):
    """The client disconnected before its body was complete."""


async def _read(receive: Receive, limit: int) -> bytes | None:
    """The whole body, or None as soon as it passes ``limit`` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise _Gone
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # what comes after the body: a disconnect

    return replayed
