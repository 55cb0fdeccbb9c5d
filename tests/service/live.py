"""The app served by a real uvicorn on 127.0.0.1, for tests that need real HTTP (MCP clients,
the browser)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from starlette.applications import Starlette

from briefd.service.listener import BoundedH11Protocol
from tests.ports import free_port

TOKEN = "test-token-0f4c9a"


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
