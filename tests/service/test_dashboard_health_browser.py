"""The dashboard's knowledge-health panels (I5, T3, T4, T6) in a real headless Chromium: a seeded
query log over two weeks, a real knowledge checkout and a real code repository that drifted
from it. The screenshot lands in .briefd/test-artifacts/dashboard-health.png."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
from playwright.sync_api import Page, expect

from briefd.api import Briefd
from briefd.embeddings.fake import FakeEmbedder
from briefd.retrieval.search import SearchRequest
from briefd.service import create_app
from briefd.settings import Settings
from briefd.team.drift import DRIFT_FIX
from tests.conftest import WriteFiles
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving
from tests.service.test_dashboard_browser import ARTIFACTS, browser, page, pytestmark
from tests.team.coderepo import Repo, settings_for
from tests.team.seeded import GLOSSARY, health_api
from tests.team.test_gaps import KNOWLEDGE, entry

AUTH = {"Authorization": f"Bearer {TOKEN}"}
__all__ = ["browser", "health_api", "page", "pytestmark"]


def test_health_panels_render_from_a_seeded_log(page: Page, health_api: Briefd) -> None:
    with serving(create_app(health_api, service_config())) as url:
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")

        gaps = page.locator("#gaps-table tbody tr")
        expect(gaps.first).to_contain_text("kafka consumer lag alerts")
        expect(gaps.nth(1)).to_contain_text("(hashed ")  # hook prompts are logged hashed
        expect(gaps.first).to_contain_text("mcp 7")
        expect(page.locator("#gaps-table")).not_to_contain_text("soft decline")

        drift = page.locator("#drift-table tbody tr")
        expect(drift).to_have_count(1)
        expect(drift.first).to_contain_text("domain/retry.md")
        expect(drift.first).to_contain_text("Dev One: Raise the soft decline retry limit to 5")
        expect(page.locator("#drift-note")).to_contain_text("payments (main)")

        bars = page.locator("#chart-requests svg rect title")
        assert bars.count() >= 14 * 2  # a search and a bundle bar on every day
        expect(page.locator("#chart-latency svg polyline")).to_have_count(2)
        expect(page.locator("#chart-documents svg")).to_contain_text("domain/retry.md")
        expect(page.locator("#never-list")).to_contain_text("domain/ledger.md")
        expect(page.locator("#health-since")).to_contain_text("since ")

        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.locator("#health").scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "dashboard-health.png"), full_page=True)


def test_setup_page_shows_the_health_reports_and_drift_settings(
    page: Page, health_api: Briefd
) -> None:
    with serving(create_app(health_api, service_config())) as url:
        page.goto(url + "/setup")
        health = page.locator(".client", has_text="Knowledge health").locator("code")
        expect(health).to_contain_text(f'"{url}/api/gaps?since=30d&limit=20&offset=0"')
        expect(health).to_contain_text(f'"{url}/api/drift?limit=20&offset=0"')
        settings = page.locator(".client", has_text="Drift against your code").locator("code")
        expect(settings).to_contain_text("log_hook_prompts: hashed")
        assert TOKEN not in page.content()


def test_a_gap_names_the_similar_phrasings_merged_into_it(
    page: Page, settings: Settings, write_files: WriteFiles
) -> None:
    """Near-duplicate questions merge into one gap (embeddings on); the dashboard said
    "+1 similar" only after a hashed prompt, never after a query it showed as asked (as
    `briefd gaps` does)."""
    asked = "which kafka consumer group lag alert threshold pages the payments on call engineer"
    with Briefd(settings, embedder=FakeEmbedder(dim=256)) as api:
        api.index(write_files(KNOWLEDGE))
        api.log_queries([entry(asked, 0, None)] * 3 + [entry(asked + " tonight", 0, None)] * 2)
        with serving(create_app(api, service_config())) as url:
            page.goto(url + "/")
            page.fill("#token-input", TOKEN)
            page.click("#login-form button")
            gap = page.locator("#gaps-table tbody tr").first
            expect(gap.locator("td").first).to_have_text(f"{asked} +1 similar")
            expect(gap.locator("td").nth(1)).to_have_text("5")


def test_a_gap_shows_bidirectional_overrides_in_its_query_as_briefd_gaps_does(
    page: Page, service_api: Briefd
) -> None:
    """A logged query holding a right-to-left override was shown reordered: "yciloP yrteR"
    (asked, and answered by nothing) read "Retry Policy" among the gaps, a question the
    knowledge does answer. The dashboard shows the override as `briefd gaps` prints it."""
    asked = "\u202eyciloP yrteR\u202c"
    service_api.log_queries([entry(asked, 0, None)] * 2)
    with serving(create_app(service_api, service_config())) as url:
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        gap = page.locator("#gaps-table tbody tr").first
        expect(gap.locator("td").nth(1)).to_have_text("2")
        expect(gap.locator("td").first).to_have_text("\\u202eyciloP yrteR\\u202c")


def test_a_gap_asked_with_a_pasted_log_leaves_its_counts_in_view(
    page: Page, service_api: Briefd
) -> None:
    """A query logged with a pasted stack trace (one word of 3,000 characters) made the query
    column as wide: the gap's counts were off to the right, 3,000 characters away. The query
    shows its head (the whole of it on hover) and the row fits its section."""
    pasted = "at.com.acme.payments.RetryWorker.run" + "x" * 3000
    service_api.log_queries([entry(pasted, 0, None)] * 3)
    with serving(create_app(service_api, service_config())) as url:
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        gap = page.locator("#gaps-table tbody tr").first
        expect(gap.locator("td").nth(1)).to_have_text("3")
        query = gap.locator("td").first
        expect(query).to_have_text(pasted[:200] + "…")
        expect(query).to_have_attribute("title", pasted)
        section = page.locator("#gaps-table").locator("xpath=..").bounding_box()
        got = gap.locator("td").last.bounding_box()
        assert section is not None and got is not None
        assert got["x"] + got["width"] <= section["x"] + section["width"], (got, section)


def test_the_gaps_panel_says_how_many_gaps_there_are_past_the_ten_it_lists(
    page: Page, service_api: Briefd
) -> None:
    """T3, T6: the panel lists ten gaps; with 14 it said "14 query groups" under ten rows and
    nothing of the four left out, so a lead read the ten as all there are. It says how many
    gaps there are, as `briefd gaps` does, and how to list the rest."""
    service_api.log_queries([entry(f"unanswered question {n}", 0, None) for n in range(14)])
    with serving(create_app(service_api, service_config())) as url:
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        expect(page.locator("#gaps-table tbody tr")).to_have_count(10)
        expect(page.locator("#gaps-note")).to_have_text(
            "14 gaps among 14 query groups (the first 10 listed; `briefd gaps --limit 14` "
            "lists more); 0 answered and reported useful"
        )


def test_a_gap_lists_each_document_it_got_once(page: Page, service_api: Briefd) -> None:
    """The "got" column named a document once per section its queries got
    ("domain/chargebacks.md, domain/chargebacks.md"): each document once, most served first."""
    hits = service_api.search(SearchRequest("chargeback dispute evidence", scopes=("all",))).hits
    by_doc: dict[str, list[str]] = {}
    for hit in hits:
        by_doc.setdefault(hit.doc_path, []).append(hit.chunk_id)
    first = next(d for d, ids in by_doc.items() if len(ids) >= 2)
    two = tuple(by_doc[first][:2])
    other = next(d for d in by_doc if d != first)
    weak = entry("chargeback evidence deadline receipts", 2, 0.05)
    service_api.log_queries(
        [replace(weak, sections=two)] * 2
        + [replace(weak, sections=(by_doc[other][0],))]
        + [entry("retry policy", 1, 0.9)] * 3  # answered well: the weak one is a gap
    )
    with serving(create_app(service_api, service_config())) as url:
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        gap = page.locator("#gaps-table tbody tr").first
        expect(gap.locator("td").first).to_have_text("chargeback evidence deadline receipts")
        expect(gap.locator("td").last).to_have_text(f"{first}, {other}")


def test_a_long_gap_query_is_cut_between_whole_characters(page: Page, service_api: Briefd) -> None:
    """A long logged query was cut at 200 UTF-16 units: a family emoji there showed as 👨 and a
    dangling joiner, a flag as half of it, an escaped bidi override as a bare "\\u"."""
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    service_api.log_queries(
        [entry("r" * 198 + family + " card refunds", 0, None)] * 3
        + [entry("s" * 198 + "\u202eab refunds" + "c" * 20, 0, None)] * 2
    )
    with serving(create_app(service_api, service_config())) as url:
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        rows = page.locator("#gaps-table tbody tr")
        expect(rows.first.locator("td").nth(1)).to_have_text("3")
        expect(rows.first.locator("td").first).to_have_text("r" * 198 + "…")
        expect(rows.nth(1).locator("td").first).to_have_text("s" * 198 + "\\u202ea…")


def test_drift_says_that_no_document_has_refs_to_check(page: Page, tmp_path: Path) -> None:
    """T4: code repositories configured but no document with refs. The drift panel read
    "nothing yet" and "0 documents with refs checked against payments (main)": as if the
    knowledge were current, while nothing can drift. It says what `briefd drift` says."""
    knowledge = Repo(tmp_path / "knowledge")
    knowledge.commit({"domain/glossary.md": GLOSSARY}, "Knowledge", "2026-03-10T09:00:00+00:00")
    app = Repo(tmp_path / "app")
    app.commit({"services/payment/retry.py": "LIMIT = 5\n"}, "Raise", "2026-03-15T12:00:00+00:00")
    settings = settings_for(tmp_path, knowledge, {"source": str(app.path), "name": "payments"})
    with Briefd(settings, embedder=None) as api:
        api.index()
        with serving(create_app(api, service_config())) as url:
            page.goto(url + "/")
            page.fill("#token-input", TOKEN)
            page.click("#login-form button")
            expect(page.locator("#drift-note")).to_have_text(
                "No indexed document has refs, so nothing is checked against payments (main): "
                "give a document the code paths it governs in its front matter "
                '(refs: ["src/payments/**"]).'
            )


def test_the_drift_panel_lists_ten_documents_and_counts_the_rest(
    page: Page, tmp_path: Path
) -> None:
    """T4, T6: every drifting document came to the page each minute with its newest 20
    commits, and the table listed them all: with refs over most of a team's code, megabytes a
    minute and thousands of rows, where gaps and usage show ten. The panel lists the ten
    longest drifting with their latest commit and says how many drift."""
    knowledge = Repo(tmp_path / "knowledge")
    docs = {
        f"domain/rule-{n:02d}.md": f"---\nrefs: ['services/m{n}/**']\n---\n# Rule {n}\n\nText.\n"
        for n in range(12)
    }
    knowledge.commit(docs, "Knowledge", "2026-03-01T09:00:00+00:00")
    app = Repo(tmp_path / "app")
    for day in range(3, 6):
        changed = {f"services/m{n}/a.py": f"{day}\n" for n in range(12)}
        app.commit(changed, f"Change {day}", f"2026-03-{day:02d}T12:00:00+00:00")
    settings = settings_for(tmp_path, knowledge, {"source": str(app.path), "name": "payments"})
    with Briefd(settings, embedder=None) as api:
        api.index()
        with serving(create_app(api, service_config())) as url:
            page.goto(url + "/")
            page.fill("#token-input", TOKEN)
            page.click("#login-form button")
            expect(page.locator("#drift-table tbody tr")).to_have_count(10)
            expect(page.locator("#drift-table tbody tr").first).to_contain_text("Change 5")
            expect(page.locator("#drift-note")).to_have_text(
                "12 of 12 documents with refs drift, checked against payments (main) (the first "
                "10, longest drifting, listed; `briefd drift` lists them all). " + DRIFT_FIX
            )
            body = httpx.get(url + "/api/dashboard/health", headers=AUTH).json()["drift"]
            assert [len(d["commits"]) for d in body["documents"]] == [1] * 10


def test_an_empty_query_log_says_what_fills_the_health_panels(
    page: Page, service_api: Briefd
) -> None:
    """T6: before any agent asked, the panels were bare axes and "nothing yet", and a lead who
    tried the search box saw nothing arrive (this page's searches are not logged). The panel
    says what it shows, that this page's searches are left out, and links to the setup page;
    once something is logged it goes."""
    with serving(create_app(service_api, service_config())) as url:
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        page.fill("#search-input", "retry policy")
        page.click("#search-form button")
        expect(page.locator("#search-results .hit").first).to_be_visible()
        empty = page.locator("#health-empty")
        expect(empty).to_be_visible()
        expect(empty).to_contain_text("Searches made on this page are not logged.")
        expect(empty.locator("a")).to_have_attribute("href", "setup")
        service_api.log_queries([entry("retry policy", 1, 0.9)])
        page.reload()
        expect(page.locator("#gaps-note")).to_contain_text("1 query group")
        expect(empty).to_be_hidden()


def test_never_served_says_none_rather_than_nothing(page: Page, tmp_path: Path) -> None:
    """T6: with no document indexed the "Never served" panel was a heading over nothing."""
    knowledge = Repo(tmp_path / "knowledge")
    knowledge.commit({"README.md": "# Notes\n"}, "Start", "2026-03-10T09:00:00+00:00")
    with Briefd(settings_for(tmp_path, knowledge), embedder=None) as api:
        api.index()
        with serving(create_app(api, service_config())) as url:
            page.goto(url + "/")
            page.fill("#token-input", TOKEN)
            page.click("#login-form button")
            expect(page.locator("#never-list")).to_have_text("none: no document is indexed")


def test_a_chart_shows_its_whole_maximum_label(page: Page, service_api: Briefd) -> None:
    """T6: the latency chart's maximum over a slow day (p95 1.5 s) read "000 ms": "2,000 ms"
    stood right-aligned against a fixed 40-unit margin and its head fell off the chart. The
    plot starts where the label ends."""
    service_api.log_queries([replace(entry("retry policy", 1, 0.9), latency_ms=1500.0)] * 3)
    with serving(create_app(service_api, service_config())) as url:
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        label = page.locator("#chart-latency svg > text").first
        expect(label).to_have_text("2,000 ms")
        assert label.evaluate("t => t.getBBox().x") >= 0
        assert page.locator("#chart-latency svg circle").count() == 2  # p50 and p95 of a day


def test_a_quiet_day_has_a_bar_of_its_own(page: Page, service_api: Briefd) -> None:
    """T6: one request on a day beside a day of 400 was a bar 0.3 units high: a quiet day read
    as a day without requests. Any request shows a bar at least 1.5 high."""
    service_api.log_queries(
        [entry("retry policy", 1, 0.9)] * 400 + [entry("retry policy", 1, 0.9, hours_ago=49)]
    )
    with serving(create_app(service_api, service_config())) as url:
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        bars = page.locator("#chart-requests svg rect", has=page.locator("title"))
        expect(bars).to_have_count(2)
        heights = sorted(float(bars.nth(i).get_attribute("height") or 0) for i in range(2))
        assert heights[0] >= 1.5, heights


def test_the_health_window_is_the_days_the_query_log_keeps(
    page: Page, service_settings: Settings
) -> None:
    """T6: with activity.retention_days: 7 the charts still spanned 30 days, the 23 the log no
    longer holds drawn as days without a request: a lead read that agents had only just begun
    to ask. The window is the days the log keeps, and the panel says why."""
    kept = replace(service_settings, activity=replace(service_settings.activity, retention_days=7))
    with Briefd(kept, embedder=None) as api:
        api.index()
        api.log_queries([entry("retry policy", 1, 0.9)])
        with serving(create_app(api, service_config())) as url:
            page.goto(url + "/")
            page.fill("#token-input", TOKEN)
            page.click("#login-form button")
            expect(page.locator("#health-since")).to_contain_text(
                "UTC (the query log keeps 7 days: activity.retention_days)"
            )
            first = (datetime.now(UTC) - timedelta(days=7)).date().isoformat()
            expect(page.locator("#chart-requests svg > text").nth(2)).to_have_text(first)


def test_the_requests_chart_names_hook_prompts_as_briefd_usage_does(
    page: Page, service_api: Briefd
) -> None:
    """T6: the chart's legend said "recall" where `briefd usage` and the gaps' surfaces say
    "hook" for the same prompts: a lead matching the figures found no "recall" anywhere else."""
    service_api.log_queries([entry("retry policy", 1, 0.9, surface="hook", kind="recall")] * 2)
    with serving(create_app(service_api, service_config())) as url:
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        chart = page.locator("#chart-requests svg")
        expect(chart.locator("> text")).to_contain_text(["search", "bundle", "hook"])
        expect(chart.locator("rect title")).to_have_text(re.compile(r"^\d{4}-\d\d-\d\d: 2 hook$"))


def test_the_health_panels_say_their_days_are_utc_days(page: Page, health_api: Briefd) -> None:
    """T6: the log counts requests per UTC day, and the window starts at a UTC time; the
    panel said "since 2026-11-05" over "Requests per day", which a lead in Tokyo or San
    Francisco reads as local days (a morning's requests under the day before). It says UTC,
    and the window's start to the minute, as `briefd usage` does."""
    since = health_api.usage().since
    with serving(create_app(health_api, service_config())) as url:
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        window = re.compile(rf"since {since[:10]} \d\d:\d\d UTC")  # as late as the page asked
        expect(page.locator("#health-since")).to_have_text(window)
        expect(page.locator("#health h3")).to_have_text(
            ["Requests per UTC day", "Latency per UTC day (p50, p95)"]
        )
