"""Offline-complete (O3): every page the server has — the dashboard, the setup page and the API
reference at /docs — loads in a real Chromium that refuses every request beyond loopback,
without one blocked or failed request, with and without a token configured."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Request, Route, expect

from briefd.api import Briefd
from briefd.service import create_app
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving
from tests.service.test_dashboard_browser import browser, pytestmark

__all__ = ["browser", "pytestmark"]  # headless Chromium (Debian's), skipped only outside CI

LOOPBACK = {"127.0.0.1", "localhost", "[::1]", "::1"}


@dataclass
class Traffic:
    """What the pages asked for: requests to other hosts (refused) and requests that failed."""

    blocked: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    loaded: list[str] = field(default_factory=list)

    def route(self, route: Route) -> None:
        if urlsplit(route.request.url).hostname in LOOPBACK:
            route.continue_()
        else:
            self.blocked.append(route.request.url)
            route.abort("blockedbyclient")

    def watch(self, page: Page) -> None:
        page.on("requestfailed", lambda r: self.failed.append(f"{r.url} {r.failure}"))
        page.on("requestfinished", lambda r: self.loaded.append(_status(r)))
        page.on("pageerror", lambda e: self.errors.append(str(e)))


def _status(request: Request) -> str:
    response = request.response()
    return f"{response.status if response else '-'} {urlsplit(request.url).path}"


@pytest.fixture
def offline(browser: Browser) -> Iterator[tuple[BrowserContext, Traffic]]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    traffic = Traffic()
    context.route("**/*", traffic.route)
    yield context, traffic
    context.close()


def test_every_page_loads_with_the_network_cut_off(
    offline: tuple[BrowserContext, Traffic], service_api: Briefd
) -> None:
    context, traffic = offline
    context.set_extra_http_headers({"Authorization": f"Bearer {TOKEN}"})  # /docs needs it
    with serving(create_app(service_api, service_config())) as url:
        page = context.new_page()
        traffic.watch(page)

        page.goto(url + "/", wait_until="networkidle")  # the header stands in for the login
        expect(page.locator("#stat-documents")).to_have_text("45")
        page.wait_for_load_state("networkidle")

        page.goto(url + "/setup", wait_until="networkidle")
        expect(page.locator(".client h2", has_text="Claude Code").first).to_be_visible()

        page.goto(url + "/docs", wait_until="networkidle")
        expect(page.locator(".swagger-ui .info .title")).to_contain_text("briefd")
        expect(page.locator(".opblock-summary-path", has_text="/api/search").first).to_be_visible()
        page.wait_for_load_state("networkidle")

    assert traffic.blocked == []
    assert traffic.failed == []
    assert traffic.errors == []
    assert {
        "200 /docs/assets/swagger-ui-bundle.js",
        "200 /docs/openapi.json",
        "200 /api/stats",
    } <= set(traffic.loaded)
    assert not [line for line in traffic.loaded if not line.startswith("200 ")], traffic.loaded


def test_without_the_token_a_browser_gets_the_shell_and_nothing_else(
    offline: tuple[BrowserContext, Traffic], service_api: Briefd
) -> None:
    context, traffic = offline
    with serving(create_app(service_api, service_config())) as url:
        page = context.new_page()
        traffic.watch(page)
        page.goto(url + "/", wait_until="networkidle")
        expect(page.locator("#login")).to_be_visible()
        expect(page.locator("#app")).to_be_hidden()
        assert page.goto(url + "/docs").status == 401  # type: ignore[union-attr]
        assert page.goto(url + "/openapi.json").status == 401  # type: ignore[union-attr]
    assert traffic.blocked == [] and traffic.failed == []
