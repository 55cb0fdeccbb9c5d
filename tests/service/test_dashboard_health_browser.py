"""The dashboard's knowledge-health panels (I5, T3, T4, T6) in a real headless Chromium: a seeded
query log over two weeks, a real knowledge checkout and a real code repository that drifted
from it. The screenshot lands in .briefd/test-artifacts/dashboard-health.png."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from briefd.api import Briefd
from briefd.retrieval.search import SearchRequest
from briefd.service import create_app
from briefd.settings import load_settings
from briefd.store.activity import QueryLogEntry
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving
from tests.service.test_dashboard_browser import ARTIFACTS, browser, page, pytestmark
from tests.team.coderepo import LEDGER_DOC, RETRY_DOC, Repo

__all__ = ["browser", "page", "pytestmark"]

GLOSSARY = """
# Glossary

## Settlement
Settlement is when the acquirer pays the merchant.
"""


def logged(
    kind: str,
    query: str,
    at: str,
    top: float | None,
    latency: float,
    surface: str,
    sections: tuple[str, ...] = (),
    bundle_id: str | None = None,
) -> QueryLogEntry:
    gate = "kept" if sections else "empty"
    scopes = ("domain",)
    return QueryLogEntry(
        kind,
        query,
        scopes,
        len(sections),
        top,
        latency,
        surface,
        at,
        surface,
        gate,
        sections,
        bundle_id,
    )


def seeded_log(api: Briefd) -> list[QueryLogEntry]:
    """Two weeks of requests: answered searches, bundles and hook prompts, and two gaps."""
    retry = api.search(SearchRequest("soft decline retried", mode="bm25"))
    hits = tuple(h.chunk_id for h in retry.hits)
    today = datetime.now(UTC).replace(hour=12, minute=0, second=0, microsecond=0)
    entries = []
    for back in range(14):
        at = (today - timedelta(days=back)).isoformat(timespec="seconds")
        for n in range(1 + back % 4):
            entries.append(
                logged(
                    "search",
                    "soft decline retries",
                    at,
                    2.5,
                    4.0 + back + 3 * n,
                    "mcp",
                    sections=hits,
                )
            )
        entries.append(
            logged(
                "bundle",
                "retry a soft decline",
                at,
                2.1,
                9.0 + back,
                "rest",
                sections=hits[:1],
                bundle_id="b" * 16,
            )
        )
        if back % 2 == 0:
            entries.append(logged("search", "kafka consumer lag alerts", at, None, 3.0, "mcp"))
        if back % 3 == 0:
            entries.append(logged("recall", "how do we rotate the hsm keys", at, None, 2.0, "hook"))
    return entries


@pytest.fixture
def health_api(tmp_path: Path) -> Iterator[Briefd]:
    knowledge = Repo(tmp_path / "knowledge")
    knowledge.commit(
        {
            "domain/retry.md": RETRY_DOC,
            "domain/ledger.md": LEDGER_DOC,
            "domain/glossary.md": GLOSSARY,
        },
        "Knowledge",
        "2026-03-10T09:00:00+00:00",
    )
    app = Repo(tmp_path / "app")
    app.commit(
        {"services/payment/retry.py": "LIMIT = 5\n"},
        "Raise the soft decline retry limit to 5",
        "2026-03-15T12:00:00+00:00",
        author="Dev One",
    )
    settings = load_settings(
        config=None,
        env={},
        overrides={
            "db": str(tmp_path / "data" / "index.db"),
            "source": str(knowledge.path),
            "embeddings.enabled": False,
            "code.repos": [{"source": str(app.path), "name": "payments"}],
        },
    )
    with Briefd(settings, embedder=None) as api:
        api.index()
        api.log_queries(seeded_log(api))
        yield api


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
