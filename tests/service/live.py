"""The app served by a real uvicorn on 127.0.0.1, for tests that need real HTTP (MCP clients,
the browser)."""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import anyio
import httpx2
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from starlette.applications import Starlette

from briefd.service.listener import BoundedH11Protocol
from tests.ports import free_port

TOKEN = "test-token-0f4c9a"
T = TypeVar("T")


@contextmanager
def serving(app: Starlette, host: str = "127.0.0.1", **options: Any) -> Iterator[str]:
    """``app`` on a real uvicorn; ``options`` go to its config (``ssl_certfile``: https)."""
    port = free_port()
    options = {"log_level": "warning", "lifespan": "on", "http": BoundedH11Protocol, **options}
    config = uvicorn.Config(app, host=host, port=port, **options)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        shown = f"[{host}]" if ":" in host else host
        yield f"{'https' if 'ssl_certfile' in options else 'http'}://{shown}:{port}"
    finally:
        server.should_exit = True
        thread.join(15)


def mcp_session(url: str, body: Callable[[Client], Awaitable[T]]) -> T:
    """``body`` run with the SDK's MCP client on the served app's ``url`` (``…/mcp``), with
    :data:`TOKEN`."""

    async def main() -> T:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            return await body(client)

    return anyio.run(main)
