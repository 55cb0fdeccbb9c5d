"""The dashboard in a real headless Chromium while `briefd serve`'s first index still runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect

from briefd.cli.serve import prepared_beside
from briefd.service import create_app
from tests.embeddings.fakehttp import FakeServer
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving
from tests.service.test_dashboard_browser import browser, page, pytestmark
from tests.service.test_stdio_start import slow_ollama, slow_settings

__all__ = ["browser", "page", "pytestmark", "slow_ollama"]

DOCS = {
    f"domain/kiwi-{n}.md": f"# Kiwi batch {n}\n\nKiwi batch {n} settles at noon.\n"
    for n in range(20)
}


def test_the_page_says_the_first_index_is_being_built_in_its_own_terms(
    page: Page, tmp_path: Path, write_files: Any, slow_ollama: FakeServer
) -> None:
    """The page showed the server's 503 as it is written for whoever started the server:
    "cannot load stats: 503: the index is being built for the first time: … (`indexed …` on
    its stderr); try again in a minute", though it checks again every 3 s by itself."""
    settings = slow_settings(write_files(DOCS), tmp_path / "fresh.db", slow_ollama)
    api, metrics, building, _ = prepared_beside(settings, False, 0.2, "serving")
    try:
        app = create_app(api, service_config(allowed_hosts=("127.0.0.1",)), metrics, building)
        with serving(app) as url:
            assert building()
            page.goto(url + "/")
            page.fill("#token-input", TOKEN)
            page.click("#login-form button")
            message = page.locator("#message")
            expect(message).to_have_text(
                "The index is being built for the first time: the figures appear here when it "
                "is done (this page checks every 3 s)."
            )
            page.fill("#search-input", "kiwi batch")
            page.click("#search-form button")
            expect(message).to_have_text(
                "search failed: the index is being built for the first time: search again once "
                "the figures above appear"
            )
            expect(page.locator("#stat-documents")).to_have_text("20", timeout=30_000)
            expect(message).to_have_text("")
    finally:
        api.close()
