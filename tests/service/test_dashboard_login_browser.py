"""The dashboard's token prompt in a real headless Chromium, used from the keyboard."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from briefd.api import Briefd
from briefd.service import create_app
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving
from tests.service.test_dashboard_browser import browser, page, pytestmark

__all__ = ["browser", "page", "pytestmark"]

ACTIONS = ("#btn-sync", "#btn-rebuild", "#btn-reset")


def test_the_token_prompt_takes_the_keyboard_and_the_actions_wait_for_the_token(
    page: Page, service_api: Briefd
) -> None:
    """The prompt left the focus on the page: typing went nowhere, and Tab reached Sync now,
    Rebuild index and Reset counters first — two asked to confirm, then failed unseen (401)
    behind the prompt. The token field has the focus; the actions appear with the figures."""
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    with serving(create_app(service_api, service_config())) as url:
        page.goto(url + "/")
        expect(page.locator("#login")).to_be_visible()
        expect(page.locator("#token-input")).to_be_focused()
        for action in ACTIONS:
            expect(page.locator(action)).to_be_hidden()
        page.keyboard.type(TOKEN)
        page.keyboard.press("Enter")
        expect(page.locator("#stat-documents")).to_have_text("45")
        for action in ACTIONS:
            expect(page.locator(action)).to_be_visible()

        page.evaluate("sessionStorage.setItem('briefd-token', 'a-token-changed-since')")
        page.locator("#btn-sync").click()  # refused: the prompt again, the actions put away
        expect(page.locator("#login-error")).to_have_text("The token was not accepted.")
        expect(page.locator("#token-input")).to_be_focused()
        for action in ACTIONS:
            expect(page.locator(action)).to_be_hidden()
    assert dialogs == []
