""" "Sync now" on the dashboard in a real headless Chromium, over a real git remote: the page
says how the sync it started ended, where it said it started."""

from __future__ import annotations

import shutil
from pathlib import Path

from playwright.sync_api import Browser, Page, expect

from briefd.api import Briefd
from briefd.service import create_app
from briefd.sources.knowledge import sync_lock
from tests.service.conftest import service_config, service_settings_for
from tests.service.live import TOKEN, serving
from tests.service.test_dashboard_browser import browser, page, pytestmark
from tests.sync.conftest import git_settings
from tests.sync.gitrepo import RETRY, Remote
from tests.team.coderepo import RETRY_DOC, Repo, settings_for

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


def test_a_sync_of_one_document_says_it_in_the_singular(page: Page, tmp_path: Path) -> None:
    """The page said "sync done: commit …, 1 documents, 1 sections"."""
    remote = Remote(tmp_path)
    remote.push({"domain/refunds.md": "# Refunds\n\nWithin 30 days.\n"}, "first knowledge")
    settings = git_settings(tmp_path, remote.url, **{"sync.interval": 0})
    with Briefd(settings, embedder=None) as api:
        api.sync()
        with serving(create_app(api, service_config())) as url:
            page.goto(url + "/")
            page.fill("#token-input", TOKEN)
            page.click("#login-form button")
            expect(page.locator("#stat-documents")).to_have_text("1")
            commit = remote.push({"domain/refunds.md": "# Refunds\n\nWithin 60 days.\n"})
            page.click("#btn-sync")
            expect(page.locator("#message")).to_have_text(
                f"sync done: commit {commit[:10]}, 1 document, 1 section", timeout=20_000
            )


def test_the_sync_panel_names_a_plain_folder_source_a_folder(page: Page, tmp_path: Path) -> None:
    """A knowledge folder with no .git, synced from the page: the Sync panel's row read "git"
    (commit "–"), as if a repository were followed."""
    source = tmp_path / "knowledge"
    (source / "domain").mkdir(parents=True)
    (source / "domain" / "refunds.md").write_text("# Refunds\n\nWithin 30 days.\n", "utf-8")
    with (
        Briefd(service_settings_for(source, tmp_path / "index.db"), embedder=None) as api,
        serving(create_app(api, service_config())) as url,
    ):
        api.index()
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        page.click("#btn-sync")
        expect(page.locator("#message")).to_contain_text("sync done: ", timeout=20_000)
        # the rows' first cells, not their count: a failure names the rows the page shows
        first = page.locator("#sync-table tbody tr td:first-child")
        expect(first).to_have_text(["folder", "index"])


def test_a_failed_rebuild_a_later_sync_fixed_is_no_longer_shown_as_the_state(
    page: Page, tmp_path: Path
) -> None:
    """The source folder moved away, Rebuild failed; it came back, and Sync now indexed it. The
    Jobs line still said "rebuild: failed: knowledge source … does not exist", over an index a
    later run had built."""
    source = tmp_path / "knowledge"
    (source / "domain").mkdir(parents=True)
    (source / "domain" / "refunds.md").write_text("# Refunds\n\nWithin 30 days.\n", "utf-8")
    with (
        Briefd(service_settings_for(source, tmp_path / "index.db"), embedder=None) as api,
        serving(create_app(api, service_config())) as url,
    ):
        api.index()
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        shutil.move(source, tmp_path / "away")
        page.once("dialog", lambda dialog: dialog.accept())
        page.click("#btn-rebuild")
        expect(page.locator("#message")).to_contain_text("rebuild failed: ", timeout=20_000)
        expect(page.locator("#jobs")).to_contain_text("rebuild: failed: ")
        shutil.move(tmp_path / "away", source)
        (source / "domain" / "refunds.md").write_text("# Refunds\n\nWithin 60 days.\n", "utf-8")
        page.click("#btn-sync")
        expect(page.locator("#message")).to_contain_text("sync done: ", timeout=20_000)
        jobs = page.locator("#jobs")
        expect(jobs).not_to_contain_text("rebuild: failed: ")
        expect(jobs).to_contain_text("rebuild: failed at ")
        indexed = page.locator("#freshness").inner_text().removeprefix("indexed ")
        expect(jobs).to_contain_text(f"; the index was built since (at {indexed})")


def test_the_drift_panel_shows_what_a_sync_from_the_page_read(page: Page, tmp_path: Path) -> None:
    """A sync reads the code repositories' new commits, and the page said "sync done" over the
    drift panel as it was: it loads every minute, so the commit the team lead synced for
    showed up to a minute later. The health panels load again when a sync ends."""
    knowledge = Repo(tmp_path / "knowledge")
    knowledge.commit({"domain/retry.md": RETRY_DOC}, "Write it", "2026-03-10T09:00:00+00:00")
    code = Repo(tmp_path / "app")
    code.commit({"services/payment/retry.py": "LIMIT = 3\n"}, "Raise", "2026-03-12T10:00:00+00:00")
    with Briefd(settings_for(tmp_path, knowledge, str(code.path)), embedder=None) as api:
        api.sync()
        with serving(create_app(api, service_config())) as url:
            page.goto(url + "/")
            page.fill("#token-input", TOKEN)
            page.click("#login-form button")
            drift = page.locator("#drift-table tbody tr")
            expect(drift).to_have_count(1)
            expect(drift.locator("td").nth(1)).to_have_text("1")
            expect(drift.locator("td").nth(3)).to_contain_text("Dev One: Raise")

            code.commit(
                {"services/payment/retry.py": "LIMIT = 5\n"},
                "Raise once more",
                "2026-03-14T10:00:00+00:00",
                author="Ayşe Yılmaz",
            )
            page.click("#btn-sync")
            expect(page.locator("#message")).to_contain_text("sync done: ", timeout=20_000)
            expect(drift.locator("td").nth(1)).to_have_text("2")  # not a minute later
            expect(drift.locator("td").nth(3)).to_contain_text("Ayşe Yılmaz: Raise once more")


def test_a_rebuild_asked_for_while_one_runs_is_followed_not_called_failed(
    browser: Browser, page: Page, tmp_path: Path, example_copy: tuple[Path, Path]
) -> None:
    """A teammate's rebuild running, "Rebuild index" on another page answered 409 and the page
    said "rebuild failed: 409: …" in red (nothing had failed) and never how the running rebuild
    ended. It says the rebuild runs, follows it and says how it ended."""
    source = tmp_path / "knowledge"
    shutil.copytree(example_copy[0], source)
    settings = service_settings_for(source, tmp_path / "index.db")
    with Briefd(settings, embedder=None) as api, serving(create_app(api, service_config())) as url:
        api.index()
        teammate = browser.new_page()
        for each in (teammate, page):
            each.goto(url + "/")
            each.fill("#token-input", TOKEN)
            each.click("#login-form button")
            expect(each.locator("#stat-documents")).to_have_text("45")
            each.on("dialog", lambda dialog: dialog.accept())
        with sync_lock(settings):  # the teammate's rebuild waits for it: still running
            teammate.click("#btn-rebuild")
            expect(teammate.locator("#message")).to_have_text("rebuild started")
            page.click("#btn-rebuild")
            said = page.locator("#message")
            expect(said).to_contain_text("rebuild not started again: a rebuild started at ")
            expect(said).to_contain_text("is still running; wait for it to finish; this page says")
            expect(said).to_have_class("ok")
        expect(said).to_have_text("rebuild done: 45 documents, 338 sections", timeout=20_000)
        expect(teammate.locator("#message")).to_have_text(
            "rebuild done: 45 documents, 338 sections"
        )
        teammate.close()
