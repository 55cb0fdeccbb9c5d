"""A real HTTP server on 127.0.0.1 for the adapters and ``model pull`` to talk to.

Each test registers handlers per (method, path); the server records every request. Stdlib
only: ``ThreadingHTTPServer`` in a daemon thread, shut down when the context exits.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.ports import free_port


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()


Handler = Callable[[Request], Reply]


def json_reply(value: Any, status: int = 200) -> Reply:
    return Reply(status, json.dumps(value).encode())


class FakeServer:
    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], Handler] = {}
        self.requests: list[Request] = []
        self.url = ""

    def on(self, method: str, path: str, handler: Handler) -> None:
        self.routes[(method, path)] = handler

    def serve(self, request: Request) -> Reply:
        self.requests.append(request)
        handler = self.routes.get((request.method, request.path)) or self.routes.get(
            (request.method, request.path.partition("?")[0])  # a route that reads the query
        )
        return handler(request) if handler else json_reply({"error": "not found"}, 404)


def _handler_class(server: FakeServer) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            request = Request(
                self.command,
                self.path,
                {k.lower(): v for k, v in self.headers.items()},
                self.rfile.read(length),
            )
            reply = server.serve(request)
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(reply.body)))
            for name, value in reply.headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(reply.body)

        do_GET = do_POST = do_CONNECT = _answer  # CONNECT: as a proxy sees an https request

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return _Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up (timeout tests) is not a server error


@contextmanager
def fake_server() -> Iterator[FakeServer]:
    server = FakeServer()
    httpd = _Server(("127.0.0.1", 0), _handler_class(server))
    server.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def closed_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (connection refused)."""
    return f"http://127.0.0.1:{free_port()}"
