"""Clickjacking (I3): a page on another site that frames one of the server's pages could have
the user click its buttons — the API reference's "Try it out" / "Execute" send their requests
as this server's own page, so the Origin check lets them through. In a real headless Chromium,
a page of another site (``briefd.test``, a second server on loopback) frames each HTML page of
a tokenless loopback server: none renders there, and each still renders on its own."""

from __future__ import annotations

import time
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Frame
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from briefd.api import Briefd
from briefd.service import create_app
from tests.service.conftest import service_config
from tests.service.live import serving
from tests.service.test_dashboard_browser import browser, pytestmark

__all__ = ["browser", "pytestmark"]  # headless Chromium (Debian's), skipped only outside CI

# what each page shows once it has loaded (Swagger UI: an operation, read from the schema)
SHOWN = {"/docs": "#swagger-ui .opblock", "/": "#stat-cache", "/setup": "#mcp-url"}


def framing_site(target: str) -> Starlette:
    """Another site's page that frames ``target`` (as a clickjacking page would, under a lure)."""

    def lure(_: Request) -> HTMLResponse:
        return HTMLResponse(f'<iframe src="{target}" width="1000" height="800"></iframe>')

    return Starlette(routes=[Route("/", lure)])


@pytest.mark.parametrize("path", list(SHOWN))
def test_no_other_site_can_frame_a_page(browser: Browser, service_api: Briefd, path: str) -> None:
    app = create_app(service_api, service_config(token=None))
    with serving(app) as base, serving(framing_site(base + path)) as other:
        context = browser.new_context()
        try:
            page = context.new_page()
            page.goto(f"http://briefd.test:{urlsplit(other).port}/")  # ARGS map it to loopback
            deadline, shown = time.monotonic() + 3, 0  # Swagger UI needs its schema first
            while time.monotonic() < deadline and not shown:
                shown = sum(_shows(f, SHOWN[path]) for f in page.frames if f != page.main_frame)
                page.wait_for_timeout(200)
            alone = context.new_page()
            alone.goto(base + path)
            alone.wait_for_selector(SHOWN[path], timeout=10_000)  # the page itself works
        finally:
            context.close()
    assert shown == 0, f"{path} rendered inside a frame of another site's page"


def _shows(frame: Frame, selector: str) -> int:
    try:
        return frame.locator(selector).count()
    except Exception:  # the frame replaced by an error page: nothing of the server's shown
        return 0
