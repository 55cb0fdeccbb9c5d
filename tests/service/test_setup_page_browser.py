"""The setup page (I6) in a real headless Chromium: the address it is opened at, and its copy
buttons, on loopback and on a plain http:// server name (briefd.test, mapped to 127.0.0.1 by the
browser's resolver: no clipboard API there)."""

from __future__ import annotations

import json
import os
import subprocess

from playwright.sync_api import Browser, Page, expect

from briefd.api import Briefd
from briefd.service import create_app
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving
from tests.service.test_dashboard_browser import browser, page, pytestmark, under_a_path
from tests.service.test_drift_pages import DOCS, drifting_api

__all__ = ["browser", "drifting_api", "page", "pytestmark"]


def test_the_setup_page_opens_from_its_address_with_a_final_slash(
    page: Page, service_api: Briefd
) -> None:
    """…/setup/ (a link copied with its slash) is the setup page too: with a token set it was
    refused 401 "missing or wrong bearer token" (a page that needs none), and without one
    redirected to the host's /setup, out of the path a reverse proxy serves briefd under."""
    app = under_a_path(create_app(service_api, service_config()), "/briefd")
    with serving(app) as url:  # type: ignore[arg-type]
        page.goto(url + "/briefd/setup/")
        expect(page).to_have_url(f"{url}/briefd/setup")
        expect(page.locator("#mcp-url")).to_have_text(f"{url}/briefd/mcp")
        assert TOKEN not in page.content()


def test_every_copy_button_on_the_setup_page_copies_its_block(
    browser: Browser, service_api: Briefd
) -> None:
    """The copy button floated inside its block, under the text of a long line: the Claude
    Code line (and the hook's, REST's) lay over it and took the click. And on a plain http://
    server name the browser has no clipboard API: the click did nothing and said nothing."""
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()
    try:
        with serving(
            create_app(service_api, service_config(allowed_hosts=("briefd.test",)))
        ) as url:
            page.goto(url + "/setup")
            blocks = page.locator(".client")
            expect(blocks.first.locator("code")).to_contain_text("claude mcp add")
            for n in range(blocks.count()):
                button = blocks.nth(n).locator("button.copy")
                button.scroll_into_view_if_needed()
                box = button.bounding_box()
                assert box is not None
                at = [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2]
                on_top = "([x, y]) => document.elementFromPoint(x, y).className"
                assert page.evaluate(on_top, at) == "copy", blocks.nth(n).inner_text()
            blocks.first.locator("button.copy").click()
            expect(blocks.first.locator("button.copy")).to_have_text("copied")
            claude = blocks.first.locator("code").inner_text()
            assert page.evaluate("navigator.clipboard.readText()") == claude

            page.goto(url.replace("127.0.0.1", "briefd.test") + "/setup")
            assert page.evaluate("window.isSecureContext") is False
            codex = page.locator(".client", has_text="Codex").first
            codex.locator("button.copy").click()
            expect(codex.locator("button.copy")).to_have_text("copied")
            assert page.evaluate("getSelection().toString()") == codex.locator("code").inner_text()
    finally:
        context.close()


def test_the_api_reference_it_links_to_works_behind_a_reverse_proxy_path(
    page: Page, service_api: Briefd
) -> None:
    """Served under https://host/briefd/, the setup page's "REST API (OpenAPI)" link opened a
    blank page: /docs asked for its script, stylesheet and schema at the host's /docs/assets/…
    and /openapi.json (404 there), and "Try it out" would have called the host's /api/…. Both
    are relative now: the reference loads, and a call made from it reaches briefd."""
    page.context.set_extra_http_headers({"Authorization": f"Bearer {TOKEN}"})  # /docs needs it
    app = under_a_path(create_app(service_api, service_config()), "/briefd")
    with serving(app) as url:  # type: ignore[arg-type]
        page.goto(url + "/briefd/setup")
        page.get_by_role("link", name="REST API (OpenAPI)").click()
        expect(page).to_have_url(f"{url}/briefd/docs")
        expect(page.locator(".swagger-ui .info .title")).to_contain_text("briefd")
        page.locator(".opblock-summary-path", has_text="/api/scopes").first.click()
        page.get_by_role("button", name="Try it out").click()
        page.get_by_role("button", name="Execute").click()
        expect(page.locator(".request-url pre")).to_have_text(f"{url}/briefd/api/scopes")
        expect(
            page.locator(".live-responses-table tbody td.response-col_status").first
        ).to_have_text("200")
        expect(page.locator(".live-responses-table")).to_contain_text("projects/ledger")


def test_the_api_reference_link_says_when_a_browser_cannot_open_it(
    page: Page, service_api: Briefd
) -> None:
    """With a token set, /docs is for clients that send it: the setup page's "REST API
    (OpenAPI)" link answered a browser 401 and a line of JSON, with nothing on the page to say
    why. The page says so beside the link, and how to read the schema; without a token the
    reference opens, and nothing is added."""
    with serving(create_app(service_api, service_config())) as url:
        page.goto(url + "/setup")
        note = page.locator("#docs-token")
        expect(note).to_be_visible()
        expect(note).to_contain_text("this server asks for its token there")
        expect(note.locator("code")).to_have_text(
            f'curl -H "Authorization: Bearer $BRIEFD_API_TOKEN" {url}/openapi.json'
        )
        assert TOKEN not in page.content()
        answer = page.request.get(url + "/docs")
        assert answer.status == 401  # what the link opens in a browser
    with serving(create_app(service_api, service_config(token=None))) as url:
        page.goto(url + "/setup", wait_until="networkidle")
        expect(page.locator("#docs-token")).to_be_hidden()
        page.get_by_role("link", name="REST API (OpenAPI)").click()
        expect(page.locator(".swagger-ui .info .title")).to_contain_text("briefd")


def test_the_knowledge_health_commands_it_gives_ask_for_a_page(
    page: Page, drifting_api: Briefd
) -> None:
    """The setup page's knowledge-health example was `curl …/api/drift`, which answers every
    drifting document with up to 20 commits each (11.6 MB on a large knowledge base). Its
    three commands, run as given in a shell with the token exported, each answer a page and
    say how many there are."""
    with serving(create_app(drifting_api, service_config())) as url:
        page.goto(url + "/setup")
        block = page.locator(".client", has_text="Knowledge health").locator("code")
        commands = block.inner_text().splitlines()
        env = {**os.environ, "BRIEFD_API_TOKEN": TOKEN}
        answers = [
            json.loads(
                subprocess.run(
                    ["bash", "-c", f"{c} --silent --fail"],
                    env=env,
                    check=True,
                    capture_output=True,
                    text=True,
                    timeout=60,
                ).stdout
            )
            for c in commands
        ]
    gaps, drift, usage = answers
    assert len(drift["documents"]) == 20 and drift["drifting"] == DOCS
    assert [c.split(url)[1].split("?")[0] for c in commands] == [
        "/api/gaps",
        "/api/drift",
        "/api/usage",
    ]
    assert (gaps["offset"], drift["offset"], usage["offset"]) == (0, 0, 0)
    assert "gaps_count" in gaps and "documents_count" in usage
