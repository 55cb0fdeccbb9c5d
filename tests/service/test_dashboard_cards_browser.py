"""The dashboard's stat cards in a real headless Chromium: a figure is always whole in its card."""

from __future__ import annotations

from playwright.sync_api import Browser, expect

from briefd.api import Briefd
from briefd.service import create_app
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving
from tests.service.test_dashboard_browser import browser, pytestmark

__all__ = ["browser", "pytestmark"]

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
