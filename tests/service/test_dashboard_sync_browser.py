""" "Sync now" on the dashboard in a real headless Chromium, over a real git remote: the page
says how the sync it started ended, where it said it started."""

from __future__ import annotations

import shutil
from pathlib import Path

from playwright.sync_api import Page, expect

from briefd.api import Briefd
from briefd.service import create_app
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving
from tests.service.test_dashboard_browser import browser, page, pytestmark
from tests.sync.conftest import git_settings
from tests.sync.gitrepo import RETRY, Remote

__all__ = ["browser", "page", "pytestmark"]


def test_a_sync_started_from_the_page_says_how_it_ended(page: Page, tmp_path: Path) -> None:
    """/api/admin/sync named no job, so the page stopped following it at once: a failed sync
    left a green "sync started" for good. The page says the commit a sync served, or its
    error, where it said it started."""
    remote = Remote(tmp_path)
    remote.push({"domain/retry.md": RETRY}, "first knowledge")
    settings = git_settings(tmp_path, remote.url, **{"sync.interval": 0})
    with Briefd(settings, embedder=None) as api:
        api.sync()
        with serving(create_app(api, service_config())) as url:
            page.goto(url + "/")
            page.fill("#token-input", TOKEN)
            page.click("#login-form button")
            expect(page.locator("#stat-documents")).to_have_text("1")

            commit = remote.push({"domain/refunds.md": "# Refunds\n\nWithin 30 days.\n"})
            page.click("#btn-sync")
            expect(page.locator("#message")).to_have_text(
                f"sync done: commit {commit[:10]}, 2 documents, 2 sections", timeout=20_000
            )
            expect(page.locator("#stat-documents")).to_have_text("2")

            shutil.move(remote.bare, tmp_path / "moved.git")  # the remote is gone
            page.click("#btn-sync")
            expect(page.locator("#message")).to_contain_text("sync failed: ", timeout=20_000)
            expect(page.locator("#message")).to_have_class("bad")
            said = page.locator("#message").inner_text()
            assert said == f"sync failed: {api.sync_status().last_error}"
