"""The dashboard in a real headless Chromium while the server fills a new index file where the
served one was deleted (I9)."""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect

from briefd.api import Briefd
from briefd.service import create_app
from tests.embeddings.fakehttp import FakeServer
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving
from tests.service.test_dashboard_browser import browser, page, pytestmark
from tests.service.test_refill import gate, held_ollama
from tests.service.test_stdio_start import DOCS, slow_settings

__all__ = ["browser", "gate", "held_ollama", "page", "pytestmark"]

DELETED = r"the index file was deleted at \d{4}-\d\d-\d\dT[^,;]+, and a new one is being filled from the source"


def test_the_page_says_a_deleted_index_file_is_being_filled_again(
    page: Page,
    tmp_path: Path,
    write_files: Any,
    held_ollama: FakeServer,
    gate: threading.Event,
) -> None:
    """The page said "The index is being built for the first time" while the server filled a
    new index file where the served one was deleted (it asked /api/health only whether the
    status was "building"): a user who had been reading its figures minutes before was told
    nothing had ever been indexed. It says the file was deleted, when, and that it is refilled."""
    settings = slow_settings(write_files(DOCS), tmp_path / "index.db", held_ollama)
    with Briefd(settings) as api:
        api.index()
        app = create_app(api, service_config(allowed_hosts=("127.0.0.1",), flush_seconds=0.2))
        with serving(app) as url:
            gate.clear()  # the refill's embedding waits until the test lets it go
            for suffix in ("", "-wal", "-shm"):
                Path(f"{settings.db}{suffix}").unlink(missing_ok=True)
            page.goto(url + "/")
            page.fill("#token-input", TOKEN)
            page.click("#login-form button")
            message = page.locator("#message")
            expect(message).to_have_text(
                re.compile(
                    "^T"
                    + DELETED[1:]
                    + re.escape(": the figures appear here when it is done (this page checks ")
                    + re.escape("every 3 s).")
                    + "$"
                )
            )
            page.fill("#search-input", "kiwi batch")
            page.click("#search-form button")
            expect(message).to_have_text(
                re.compile(
                    "^search failed: "
                    + DELETED
                    + re.escape(": search again once the figures above appear")
                    + r"\s*$"
                )
            )
            gate.set()
            expect(page.locator("#stat-documents")).to_have_text("6", timeout=30_000)
            expect(message).to_have_text("")
