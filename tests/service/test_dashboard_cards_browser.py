"""The dashboard's stat cards in a real headless Chromium: a figure is always whole in its card,
and counts what it says."""

from __future__ import annotations

import re

import httpx
from playwright.sync_api import Browser, Page, expect

from briefd.api import Briefd
from briefd.service import create_app
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving
from tests.service.test_dashboard_browser import browser, page, pytestmark

__all__ = ["browser", "page", "pytestmark"]

TOKENS = ("briefd_tokens_served", '{"name": "search", "surface": "rest"}')


def test_a_figure_of_a_billion_fits_its_card_at_every_width(
    browser: Browser, service_api: Briefd
) -> None:
    """1,234,567,890 tokens served showed as "1,234,567,89" at 1280 px: ten digits and three
    commas overflow a 150 px card. From a million on a figure is compact, the exact one on
    hover."""
    service_api.save_counters({TOKENS: 1_234_567_890})
    with serving(create_app(service_api, service_config())) as url:
        for width in (1280, 1024, 390):
            context = browser.new_context(viewport={"width": width, "height": 900})
            page = context.new_page()
            page.goto(url + "/")
            page.fill("#token-input", TOKEN)
            page.click("#login-form button")
            figure = page.locator("#stat-tokens")
            expect(figure).to_have_text("1.23B")
            expect(figure).to_have_attribute("title", "1,234,567,890")
            expect(page.locator("#stat-documents")).to_have_text("45")
            fits = page.evaluate(
                """() => [...document.querySelectorAll('.card .value')].every((v) => {
                    const card = v.parentElement.getBoundingClientRect();
                    const box = v.getBoundingClientRect();
                    return v.scrollWidth <= v.clientWidth && box.right <= card.right;
                })"""
            )
            assert fits, width
            context.close()


def test_the_requests_card_counts_what_is_asked_not_who_watches(
    page: Page, service_api: Briefd
) -> None:
    """The requests card summed every row of the table: a container's health check (every
    10 s) and this page's own refreshes (every 10 s) read as some 17,000 requests a day on a
    server no agent had asked anything. It counts the rest; the table still lists all."""
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with serving(create_app(service_api, service_config())) as url:
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        expect(page.locator("#stat-requests")).to_have_text("0")
        for _ in range(5):
            assert httpx.get(url + "/api/health").status_code == 200
        for query in ("retry policy", "chargeback dispute"):
            assert httpx.get(url + "/api/search", params={"q": query}, headers=auth).is_success
        page.reload()
        expect(page.locator("#stat-requests")).to_have_text("2")
        rows = page.locator("#requests-table tbody tr")
        health = rows.filter(has=page.locator("td", has_text=re.compile(r"^health$")))
        expect(health.locator("td").nth(2)).to_have_text("5")
        expect(page.locator("#requests-table")).to_contain_text("stats")


def test_the_proposals_panel_says_when_proposals_are_off(page: Page, service_api: Briefd) -> None:
    """T1: with proposals off (the default) the panel read "open 0, merged 0, closed 0", as if
    agents had proposed nothing yet; it says they are off and which setting turns them on."""
    assert not service_api.settings.proposals.enabled
    with serving(create_app(service_api, service_config())) as url:
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        rows = page.locator("#proposals-table tbody tr")
        expect(rows.first).to_have_text(
            "off: agents are not offered propose_update (proposals.enabled in briefd.yaml)"
        )
        expect(rows.nth(1)).to_have_text(re.compile(r"^open\s*0$"))
