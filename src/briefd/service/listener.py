"""The HTTP/1.1 listener: uvicorn's h11 protocol, answering a request head that is too large.

h11 gives up on a request line and headers over 16 KiB; uvicorn then writes a 400 and closes
the socket with the rest of the request unread, so the client sees its connection reset
instead of an answer. Here such a head gets 414 (the URL is what is too long) or 431 (the
headers are), and the connection lingers for a moment reading and dropping what the client is
still sending (as nginx does) before it closes, so the answer arrives. URLs shorter than that
but over the service's own limit get their 414 from :mod:`briefd.service.limits`.

uvicorn times a connection out only between requests that were answered: one that never sends
a whole request head (nothing at all, or a head a byte at a time, slow-loris style) was held
open for good, each taking a file descriptor and a place among the connections. Here the head
must be complete :data:`HEAD_TIMEOUT_S` after the connection opened or the last answer ended;
a part of one gets 408, and the connection closes. So does a connection whose request was
answered before its body was read (a 401, a 413) and that goes on sending that body.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

HEAD_LIMIT = 16 * 1024  # h11's default maximum for an incomplete request head
LINGER_SECONDS = 2.0
LINGER_BYTES = 16 * 1024 * 1024  # read and dropped at most, then the connection closes
HEAD_TIMEOUT_S = 30.0  # for a whole request head, from the connection or the last answer


def head_too_large(buffered: bytes) -> tuple[int, str, str] | None:
    """(status, error, detail) when ``buffered`` (what h11 could not parse yet) is a request
    head over the limit; None for any other malformed request."""
    if len(buffered) < HEAD_LIMIT:
        return None
    if b"\n" not in buffered[:HEAD_LIMIT]:
        return (
            414,
            "uri_too_long",
            f"the request URL is over {HEAD_LIMIT // 1024} KiB; send long input in a POST body",
        )
    return 431, "headers_too_large", f"the request headers are over {HEAD_LIMIT // 1024} KiB"


def raw_response(status: int, error: str, detail: str) -> bytes:
    body = json.dumps({"error": error, "detail": detail}).encode()
    reason = {
        408: "Request Timeout",
        414: "URI Too Long",
        431: "Request Header Fields Too Large",
    }.get(status, "")
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


class BoundedH11Protocol(H11Protocol):
    """uvicorn's protocol with 414/431 for oversized heads, 408 for a head that does not
    arrive in time, and a lingering close."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._draining: int | None = None  # bytes dropped since the answer (None: not answered)
        self._head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._head_arrived()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        super().handle_events()
        if self._running():  # a whole head came: the request runs
            self._head_arrived()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and not self._running():
            self._await_head()  # the next head; or the rest of a body answered unread (401)

    def _running(self) -> bool:
        return self.cycle is not None and not self.cycle.response_complete

    def _await_head(self) -> None:
        self._head_arrived()
        self._head_timer = self.loop.call_later(HEAD_TIMEOUT_S, self._head_too_slow)

    def _head_arrived(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_too_slow(self) -> None:
        self._head_timer = None
        if self.transport.is_closing() or self._running():
            return
        if self.conn.their_state is h11.IDLE and self.conn.trailing_data[0]:  # part of a head
            detail = f"the request head did not arrive within {HEAD_TIMEOUT_S:.0f} s"
            self.transport.write(raw_response(408, "request_timeout", detail))
        self.transport.close()

    def data_received(self, data: bytes) -> None:
        if self._draining is None:
            super().data_received(data)
            return
        self._draining += len(data)
        if self._draining > LINGER_BYTES:
            self.transport.close()

    def send_400_response(self, msg: str) -> None:
        oversized = head_too_large(self.conn.trailing_data[0])
        if oversized is None:
            super().send_400_response(msg)
            return
        self.transport.write(raw_response(*oversized))
        self._draining = 0
        if self.transport.can_write_eof():
            self.transport.write_eof()
        asyncio.get_running_loop().call_later(LINGER_SECONDS, self.transport.close)
