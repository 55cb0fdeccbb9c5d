"""The dashboard in a real headless Chromium (Debian's package, driven by Playwright; no browser
download). Skipped only when Chromium is absent outside CI; in CI it must run."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from briefd.api import Briefd
from briefd.model import SearchResult
from briefd.service import create_app
from briefd.service.schemas import search_out
from briefd.sources.knowledge import sync_lock
from tests.conftest import REPO
from tests.service.conftest import service_config, service_settings_for
from tests.service.live import TOKEN, serving
from tests.sync.conftest import git_settings
from tests.sync.gitrepo import RETRY, Remote

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP briefd.test 127.0.0.1",  # a server's name, not loopback
]
ARTIFACTS = Path(os.environ.get("BRIEFD_TEST_ARTIFACTS", REPO / ".briefd" / "test-artifacts"))

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists() and not os.environ.get("CI"),
        reason="Chromium is not installed (apt-get install chromium); CI always runs this",
    ),
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    yield page
    context.close()


def test_dashboard_with_token_search_and_reset(page: Page, service_api: Briefd) -> None:
    with serving(create_app(service_api, service_config())) as url:
        page.goto(url + "/")
        expect(page.locator("#login")).to_be_visible()
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        expect(page.locator("#stat-documents")).to_have_text("45")
        expect(page.locator("#scopes-table")).to_contain_text("projects/ledger")

        for query in ("retry policy", "chargeback dispute"):
            page.fill("#search-input", query)
            page.click("#search-form button")
            expect(page.locator("#search-results .hit").first).to_be_visible()
        expect(page.locator("#search-results")).to_contain_text("domain/")
        expect(page.locator("#requests-table")).to_contain_text("search")
        page.fill("#search-input", "what is it")  # only common words: refused (400)
        page.click("#search-form button")
        expect(page.locator("#message")).to_contain_text("search failed: ")
        expect(page.locator("#search-results .hit")).to_have_count(0)  # not the last query's
        page.fill("#search-input", "retry policy")
        page.click("#search-form button")
        expect(page.locator("#search-results .hit").first).to_be_visible()
        expect(page.locator("#message")).to_have_text("")  # the failure is not left standing
        # the page's searches are a person's, served to no agent; an agent's count
        expect(page.locator("#stat-tokens")).to_have_text("0")
        agent = httpx.get(
            url + "/api/search?q=retry+policy", headers={"Authorization": f"Bearer {TOKEN}"}
        )
        assert agent.status_code == 200
        page.click("#search-form button")  # searched again, the figures refreshed
        expect(page.locator("#stat-tokens")).not_to_have_text("0")

        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "dashboard.png"), full_page=True)

        page.once("dialog", lambda dialog: dialog.accept())
        page.click("#btn-reset")
        expect(page.locator("#message")).to_have_text("counters reset: done")
        expect(page.locator("#stat-tokens")).to_have_text("0")
        expect(page.locator("#requests-table")).not_to_contain_text("search")


def test_dashboard_without_an_index_says_why_and_fills_in_once_built(
    page: Page, tmp_path: Path, example_copy: tuple[Path, Path]
) -> None:
    """A server with no index yet answers the stats 503: the page shows that message (it was
    written into the hidden page, leaving the login form up as if the token were wrong), keeps
    the actions at hand, and fills in once "Rebuild index" has built the index."""
    source, _ = example_copy
    settings = service_settings_for(source, tmp_path / "fresh.db")
    with Briefd(settings, embedder=None) as api, serving(create_app(api, service_config())) as url:
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        expect(page.locator("#login")).to_be_hidden()
        expect(page.locator("#message")).to_be_visible()
        expect(page.locator("#message")).to_contain_text("cannot load stats: 503: no index at")
        page.once("dialog", lambda dialog: dialog.accept())
        page.click("#btn-rebuild")
        expect(page.locator("#stat-documents")).to_have_text("45", timeout=20_000)
        expect(page.locator("#message")).not_to_contain_text("cannot load stats")


def test_dashboard_rejects_a_wrong_token(page: Page, service_api: Briefd) -> None:
    with serving(create_app(service_api, service_config())) as url:
        page.goto(url + "/")
        page.fill("#token-input", "wrong")
        page.click("#login-form button")
        expect(page.locator("#login-error")).to_have_text("The token was not accepted.")
        expect(page.locator("#app")).to_be_hidden()


def test_dashboard_asks_for_a_token_when_none_is_entered(page: Page, service_api: Briefd) -> None:
    """Enter in the empty token field did nothing visible (the 401 that followed was taken for
    the first visit's, which says nothing)."""
    with serving(create_app(service_api, service_config())) as url:
        page.goto(url + "/")
        expect(page.locator("#login")).to_be_visible()
        page.press("#token-input", "Enter")
        expect(page.locator("#login-error")).to_have_text("Enter the token first.")
        page.fill("#token-input", TOKEN)
        page.press("#token-input", "Enter")
        expect(page.locator("#stat-documents")).to_have_text("45")


def test_setup_page_builds_instructions_from_its_url(page: Page, service_api: Briefd) -> None:
    with serving(create_app(service_api, service_config())) as url:
        page.goto(url + "/setup")
        claude = page.locator(".client", has_text="Claude Code").first.locator("code")
        expect(claude).to_have_text(
            f"claude mcp add --transport http briefd {url}/mcp "
            '--header "Authorization: Bearer $BRIEFD_API_TOKEN"'
        )
        for name in ("Cursor", "VS Code", "Codex", "Any MCP client", "Prompt-time hook"):
            expect(page.locator(".client h2", has_text=name).first).to_be_visible()
        expect(page.locator("#bundles")).to_contain_text("hard_limit (default 4 × max_tokens)")
        rest = page.locator(".client", has_text="REST").first.locator("code")
        expect(rest).to_contain_text(f"{url}/api/context")
        assert TOKEN not in page.content()


def under_a_path(app: ASGIApp, prefix: str) -> ASGIApp:
    """``app`` as a reverse proxy serves it under ``prefix`` (nginx ``location /briefd/ {
    proxy_pass http://127.0.0.1:8484/; }``): the prefix is stripped before the app sees it."""

    async def proxied(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            if not scope["path"].startswith(prefix + "/"):
                await PlainTextResponse("not proxied", 404)(scope, receive, send)
                return
            cut = len(prefix)
            scope = {**scope, "path": scope["path"][cut:], "raw_path": scope["raw_path"][cut:]}
        await app(scope, receive, send)

    return proxied


def test_pages_behind_a_reverse_proxy_path(page: Page, service_api: Briefd) -> None:
    """Served under https://host/briefd/, the setup page names …/briefd/mcp (not the host's
    /mcp), and the dashboard loads its data from …/briefd/api/…"""
    app = under_a_path(create_app(service_api, service_config()), "/briefd")
    with serving(app) as url:  # type: ignore[arg-type]
        page.goto(url + "/briefd/setup")
        claude = page.locator(".client", has_text="Claude Code").first.locator("code")
        expect(claude).to_have_text(
            f"claude mcp add --transport http briefd {url}/briefd/mcp "
            '--header "Authorization: Bearer $BRIEFD_API_TOKEN"'
        )
        expect(page.locator("#mcp-url")).to_have_text(f"{url}/briefd/mcp")
        hook = page.locator(".client", has_text="Prompt-time hook").first.locator("code")
        expect(hook).to_contain_text(f"BRIEFD_RECALL__SERVER={url}/briefd briefd recall")
        rest = page.locator(".client", has_text="REST").first.locator("code")
        expect(rest).to_contain_text(f"{url}/briefd/api/context")
        page.get_by_role("link", name="Dashboard", exact=True).click()
        expect(page).to_have_url(f"{url}/briefd/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        expect(page.locator("#stat-documents")).to_have_text("45")


def test_dashboard_fits_a_phone_screen(browser: Browser, service_api: Briefd) -> None:
    """On a 375 px phone the page is as wide as the screen: the actions in the header and the
    search button can be reached, and the wide tables and charts scroll inside their sections
    (the header did not wrap and the grid's 1fr columns grew to the charts and tables)."""
    context = browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True)
    page = context.new_page()
    try:
        with serving(create_app(service_api, service_config())) as url:
            page.goto(url + "/")
            page.fill("#token-input", TOKEN)
            page.click("#login-form button")
            expect(page.locator("#stat-documents")).to_have_text("45")
            expect(page.locator("#health-since")).to_contain_text("since ")
            expect(page.locator("#chart-requests svg")).to_be_visible()
            widths = page.evaluate(
                "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
            )
            assert widths == [375, 375]
            for control in ("#btn-sync", "#btn-rebuild", "#btn-reset", "#search-form button"):
                box = page.locator(control).bounding_box()
                assert box is not None and box["x"] + box["width"] <= 375, (control, box)
    finally:
        context.close()


def test_dashboard_says_when_the_server_stops_answering_and_recovers(
    page: Page, service_api: Briefd
) -> None:
    """The server going away (the browser's connection is refused) left the last figures up
    as if live, with nothing said; the page says they may be out of date, and clears that once
    the server answers again. The page's clock is driven, so no test waits 10 s."""
    page.clock.install()
    with serving(create_app(service_api, service_config())) as url:
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        expect(page.locator("#stat-documents")).to_have_text("45")
        expect(page.locator("#health-since")).to_contain_text("since ")  # nothing in flight
        expect(page.locator("#message")).to_have_text("")

        page.route("**/api/**", lambda route: route.abort("connectionrefused"))
        page.clock.run_for(10_000)
        expect(page.locator("#message")).to_contain_text(
            "cannot load stats: the server does not answer"
        )
        expect(page.locator("#message")).to_contain_text("may be out of date")
        expect(page.locator("#app")).to_be_visible()

        page.unroute("**/api/**")
        page.clock.run_for(10_000)
        expect(page.locator("#message")).to_have_text("")
        expect(page.locator("#stat-documents")).to_have_text("45")


def test_pages_load_without_a_console_error(page: Page, service_api: Briefd) -> None:
    """The dashboard and the setup page declare their icon in the page: the browser's own
    request for /favicon.ico was answered 404, a failed request in the console on every load."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.context.set_extra_http_headers({"Authorization": f"Bearer {TOKEN}"})
    with serving(create_app(service_api, service_config())) as url:
        for path, ready in (("/", "#stat-documents"), ("/setup", "#mcp-url")):
            page.goto(url + path, wait_until="networkidle")
            expect(page.locator(ready)).not_to_be_empty()
            icon = page.evaluate("document.querySelector('link[rel=icon]')?.href ?? ''")
            assert icon.startswith("data:image/svg+xml,"), (path, icon)
            page.wait_for_load_state("networkidle")
    assert errors == []


def test_link_findings_list_unknown_anchors_beside_broken_links(
    page: Page, tmp_path: Path, example_copy: tuple[Path, Path]
) -> None:
    """Link findings named only the broken links: an unknown anchor (which `briefd links
    --check` fails on too) was a count with no document or line to go and fix."""
    source = tmp_path / "knowledge"
    shutil.copytree(example_copy[0], source)
    with (source / "domain" / "fees.md").open("a", encoding="utf-8") as doc:
        doc.write("\nRefunds keep their fee, see [the window](refunds.md#no-such-window).\n")
    line = (source / "domain" / "fees.md").read_text(encoding="utf-8").count("\n")
    settings = service_settings_for(source, tmp_path / "index.db")
    with Briefd(settings, embedder=None) as api, serving(create_app(api, service_config())) as url:
        api.index()
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        anchors = page.locator("#links-table tbody tr", has_text="unknown anchors")
        expect(anchors.locator("td.num")).to_have_text("1")
        findings = page.locator("#links-list li")
        expect(findings.first).to_have_text(
            "broken: projects/ledger/month-end-close.md:123 → legacy-settlement-batch "
            "(no document matches 'legacy-settlement-batch')"
        )
        expect(findings.nth(1)).to_have_text(
            f"unknown anchor: domain/fees.md:{line}: "
            "domain/refunds.md has no heading or anchor '#no-such-window'"
        )


def test_a_token_changed_on_the_server_asks_again_and_leaves_no_stale_failure(
    page: Page, service_api: Briefd
) -> None:
    """The token this tab holds stops being accepted (it was changed on the server): the next
    search brings the token prompt back, and once the new one is entered the page showed
    "search failed: unauthorized" above figures that had just loaded fine."""
    with serving(create_app(service_api, service_config())) as url:
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        expect(page.locator("#stat-documents")).to_have_text("45")
        page.evaluate("sessionStorage.setItem('briefd-token', 'the-token-before-rotation')")

        page.fill("#search-input", "retry policy")
        page.press("#search-input", "Enter")
        expect(page.locator("#login")).to_be_visible()
        expect(page.locator("#login-error")).to_have_text("The token was not accepted.")
        expect(page.locator("#app")).to_be_hidden()

        page.fill("#token-input", TOKEN)
        page.press("#token-input", "Enter")
        expect(page.locator("#app")).to_be_visible()
        expect(page.locator("#stat-documents")).to_have_text("45")
        expect(page.locator("#message")).to_have_text("")


def test_a_query_too_long_for_a_url_says_what_to_do_in_the_page(
    page: Page, service_api: Briefd
) -> None:
    """A pasted log longer than a URL holds is refused 414; the page passed on the server's
    advice to "send long input in a POST body", which nobody can do from the search box."""
    with serving(create_app(service_api, service_config())) as url:
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        expect(page.locator("#stat-documents")).to_have_text("45")
        page.fill("#search-input", "返金 " * 1000)
        page.press("#search-input", "Enter")
        expect(page.locator("#message")).to_have_text(
            "search failed: the query is too long to search (2,999 characters; a URL holds "
            "8 KiB): search with its key words"
        )
        expect(page.locator("#search-results .hit")).to_have_count(0)


def test_setup_page_fits_a_phone_screen(browser: Browser, service_api: Briefd) -> None:
    """On a 375 px phone the setup page is as wide as the screen: its command blocks scroll,
    and a URL inside a sentence (the Jira Cloud address) wraps instead of widening the page."""
    context = browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True)
    page = context.new_page()
    try:
        with serving(create_app(service_api, service_config())) as url:
            page.goto(url + "/setup")
            expect(page.locator("#mcp-url")).to_have_text(f"{url}/mcp")
            expect(page.locator(".client h2", has_text="Claude Code").first).to_be_visible()
            widths = page.evaluate(
                "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
            )
            assert widths == [375, 375]
    finally:
        context.close()


def test_a_knowledge_health_failure_clears_once_the_panels_load(
    page: Page, service_api: Briefd
) -> None:
    """The health panels failed to load once (the request did not get through): the message
    stayed up after the minute's refresh had filled them in. The page's clock is driven."""
    page.clock.install()
    page.route("**/api/dashboard/health", lambda route: route.abort("connectionrefused"))
    with serving(create_app(service_api, service_config())) as url:
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        expect(page.locator("#message")).to_contain_text("cannot load knowledge health: ")
        expect(page.locator("#health-since")).to_have_text("")

        page.unroute("**/api/dashboard/health")
        page.clock.run_for(60_000)
        expect(page.locator("#health-since")).to_contain_text("since ")
        expect(page.locator("#message")).to_have_text("")


def test_dashboard_says_a_sync_asked_for_while_one_runs_is_queued(
    page: Page, tmp_path: Path
) -> None:
    remote = Remote(tmp_path)
    remote.push({"domain/retry.md": RETRY}, "first knowledge")
    settings = git_settings(tmp_path, remote.url, **{"sync.interval": 0})
    with Briefd(settings, embedder=None) as api:
        api.sync()
        with serving(create_app(api, service_config())) as url:
            with sync_lock(settings):
                page.goto(url + "/")
                page.fill("#token-input", TOKEN)
                page.click("#login-form button")
                expect(page.locator("#stat-documents")).to_have_text("1")
                page.click("#btn-sync")  # it runs, and waits for the lock this test holds
                expect(page.locator("#message")).to_have_text("sync started")
                assert _eventually(lambda: api.sync_status().running)
                page.click("#btn-sync")
                expect(page.locator("#message")).to_have_text(
                    "sync queued: it runs when the sync in progress ends"
                )
            assert _eventually(lambda: api.sync_status().syncs == 3)


def _eventually(check: Callable[[], bool], seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_a_knowledge_health_failure_stays_said_after_a_search_and_each_refresh(
    page: Page, service_api: Briefd
) -> None:
    """The health panels cannot load (PostgreSQL down for a replica: 503): the message said so
    on the first load only, a search that worked wiped it, and the minute's refresh failed in
    silence, leaving empty panels with nothing said. The page's clock is driven."""
    page.clock.install()
    with serving(create_app(service_api, service_config())) as url:
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        expect(page.locator("#health-since")).to_contain_text("since ")

        page.route("**/api/dashboard/health", lambda route: route.abort("connectionrefused"))
        page.clock.run_for(60_000)
        expect(page.locator("#message")).to_contain_text("cannot load knowledge health: ")

        page.fill("#search-input", "retry policy")
        page.press("#search-input", "Enter")
        expect(page.locator("#search-results .hit").first).to_be_visible()
        expect(page.locator("#message")).to_contain_text("cannot load knowledge health: ")

        page.unroute("**/api/dashboard/health")
        page.clock.run_for(60_000)
        expect(page.locator("#message")).to_have_text("")


def test_a_front_matter_problem_is_listed_before_many_skipped_files(
    page: Page, tmp_path: Path, example_copy: tuple[Path, Path]
) -> None:
    """With 60 Markdown files outside every scope (an archive/ folder), the list showed the
    first 50 of them and stopped: the document indexed without its front matter (its title,
    tags and refs lost) was never listed, and nothing said that anything was left out."""
    source = tmp_path / "knowledge"
    shutil.copytree(example_copy[0], source)
    (source / "archive").mkdir()
    for n in range(60):
        (source / "archive" / f"note-{n:02}.md").write_text(f"# Old note {n}\n", "utf-8")
    (source / "domain" / "broken.md").write_text("---\ntitle: [x\n---\n# Broken\n", "utf-8")
    settings = service_settings_for(source, tmp_path / "index.db")
    with Briefd(settings, embedder=None) as api, serving(create_app(api, service_config())) as url:
        api.index()
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        listed = page.locator("#skipped-list li")
        expect(listed.first).to_contain_text("domain/broken.md: front matter is not valid YAML")
        expect(listed).to_have_count(51)
        expect(listed.last).to_have_text(
            "… and 12 more; `briefd index --json` lists every one show 1 more"
        )


def test_a_search_that_finds_nothing_says_why(page: Page, tmp_path: Path) -> None:
    """The search box answered every empty result "No section matches (gate: …)": over an
    index holding no document (as if the knowledge had nothing on the topic), and when the
    relevance gate emptied it, without the reasons the answer carries. It says why, as the
    MCP text does."""
    (tmp_path / "knowledge").mkdir()
    settings = service_settings_for(tmp_path / "knowledge", tmp_path / "index.db")
    with Briefd(settings, embedder=None) as api, serving(create_app(api, service_config())) as url:
        api.index()
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        expect(page.locator("#stat-documents")).to_have_text("0")
        page.fill("#search-input", "retry policy")
        page.press("#search-input", "Enter")
        expect(page.locator("#search-results")).to_have_text(
            "Nothing returned: the knowledge base is empty (no document is indexed yet), so "
            "there is nothing to search; index the source: `briefd index`, or on a server POST "
            "/api/admin/rebuild (the dashboard's rebuild)."
        )

        why = ("lexical: weak: not in the index: garlic", "semantic: margin -0.013")
        gated = SearchResult("plant garlic", "hybrid", ("domain",), (), "r7", 0.1, gate="empty")
        body = search_out(replace(gated, gate_reasons=why), 200_000).model_dump(mode="json")
        page.route("**/api/search?*", lambda route: route.fulfill(json=body))
        page.fill("#search-input", "plant garlic")
        page.press("#search-input", "Enter")
        expect(page.locator("#search-results")).to_have_text(
            "Nothing returned: the relevance gate judged the query unrelated to this knowledge "
            "base (lexical: weak: not in the index: garlic; semantic: margin -0.013); ask in "
            "the words its documents use."
        )


def test_a_token_pasted_with_a_typographic_character_is_refused_at_the_prompt(
    page: Page, service_api: Briefd
) -> None:
    """A token copied from a chat or a wiki with a typographic hyphen (U+2010) cannot be sent
    in a header: the page said "cannot load stats: the server does not answer (… non
    ISO-8859-1 code point)", took the prompt away and retried every 3 s, the same after a
    reload (the tab kept the token). The prompt says what is wrong and stays."""
    with serving(create_app(service_api, service_config())) as url:
        page.goto(url + "/")
        page.fill("#token-input", TOKEN.replace("-", "\u2010"))
        page.press("#token-input", "Enter")
        expect(page.locator("#login-error")).to_have_text(
            "A token is ASCII: this one has '\u2010' (character 5); copy it again from where "
            "it is kept."
        )
        expect(page.locator("#app")).to_be_hidden()
        page.fill("#token-input", TOKEN)
        page.press("#token-input", "Enter")
        expect(page.locator("#stat-documents")).to_have_text("45")


def test_a_rebuild_started_from_the_page_says_how_it_ended(
    page: Page, tmp_path: Path, example_copy: tuple[Path, Path]
) -> None:
    """A rebuild that failed (the source directory gone) left "rebuild started" at the top of
    the page for good; the failure was a grey line at the foot of the Sync panel, below the
    fold. The page says how the rebuild it started ended, where it said it started."""
    source = tmp_path / "knowledge"
    shutil.copytree(example_copy[0], source)
    settings = service_settings_for(source, tmp_path / "index.db")
    with Briefd(settings, embedder=None) as api, serving(create_app(api, service_config())) as url:
        api.index()
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        expect(page.locator("#stat-documents")).to_have_text("45")

        page.once("dialog", lambda dialog: dialog.accept())
        page.click("#btn-rebuild")
        expect(page.locator("#message")).to_have_text(
            "rebuild done: 45 documents, 338 sections", timeout=20_000
        )

        shutil.rmtree(source)
        page.once("dialog", lambda dialog: dialog.accept())
        page.click("#btn-rebuild")
        # the source's own words (the folder gone) are the index's to choose
        expect(page.locator("#message")).to_contain_text(
            f"rebuild failed: knowledge source {source} ", timeout=20_000
        )
        expect(page.locator("#message")).to_have_class("bad")


def test_the_health_panels_reload_with_the_figures_when_the_server_answers_again(
    page: Page, service_api: Briefd
) -> None:
    """The server away for a minute: the minute's health refresh failed too, and its message
    ("the server does not answer") stayed up to a minute after the figures had come back.
    The page's clock is driven."""
    page.clock.install()
    with serving(create_app(service_api, service_config())) as url:
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        expect(page.locator("#health-since")).to_contain_text("since ")

        page.route("**/api/**", lambda route: route.abort("connectionrefused"))
        page.clock.run_for(60_000)
        expect(page.locator("#message")).to_contain_text("the server does not answer")

        page.unroute("**/api/**")
        page.clock.run_for(10_000)
        expect(page.locator("#message")).to_have_text("")
        expect(page.locator("#stat-documents")).to_have_text("45")
