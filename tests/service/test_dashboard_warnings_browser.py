"""What the server's start-up log warns about the index, on the dashboard, in a real headless
Chromium: an index of no document says why, and a default scope the index lacks is named."""

from __future__ import annotations

from pathlib import Path

import httpx
from playwright.sync_api import Page, expect

from briefd.api import Briefd
from briefd.service import create_app
from briefd.settings import Settings, load_settings
from tests.service.conftest import service_config, service_settings_for
from tests.service.live import TOKEN, serving
from tests.service.test_dashboard_browser import browser, page, pytestmark

__all__ = ["browser", "page", "pytestmark"]


def opened(page: Page, url: str) -> None:
    page.goto(url + "/")
    page.fill("#token-input", TOKEN)
    page.click("#login-form button")


def test_an_index_of_no_document_says_why_on_the_dashboard(page: Page, tmp_path: Path) -> None:
    """A team's notes in docs/ (no scope of the default layout): `briefd serve` warned on its
    stderr that it indexed 0 documents and which setting to change, and the dashboard showed
    only zeros and "nothing yet". It says the same now, above the skipped files."""
    source = tmp_path / "knowledge"
    (source / "docs").mkdir(parents=True)
    (source / "docs" / "ödeme-akışı.md").write_text("# Ödeme akışı\n\nİade süreci.\n", "utf-8")
    with (
        Briefd(service_settings_for(source, tmp_path / "index.db"), embedder=None) as api,
        serving(create_app(api, service_config())) as url,
    ):
        api.index()
        opened(page, url)
        expect(page.locator("#stat-documents")).to_have_text("0")
        warning = page.locator("#skipped-list li").first
        expect(warning).to_have_text(
            f"warning: indexed 0 documents from {source}: briefd looked for **/*.md, "
            "**/*.markdown in domain/, conventions/, projects/*/, and the file it found is outside "
            "those folders (docs/ödeme-akışı.md); map their folders to scopes with "
            "'scopes' in briefd.yaml, e.g. scopes: [{folder: docs, default: true}]"
        )
        expect(page.locator("#skipped-list li").nth(1)).to_contain_text(
            "docs/ödeme-akışı.md: outside every scope"
        )


def test_a_default_scope_the_index_lacks_is_named_on_the_dashboard(
    page: Page, tmp_path: Path, example_copy: tuple[Path, Path]
) -> None:
    """``default_scopes: [domain, nope]``: searches without scopes read domain only, which the
    start-up log, `briefd scopes` and every answer say, but not the dashboard."""
    source, _ = example_copy
    settings = load_settings(
        config=None,
        env={},
        overrides={
            "db": str(tmp_path / "index.db"),
            "source": str(source),
            "embeddings.enabled": False,
            "default_scopes": ["domain", "nope"],
        },
    )
    with Briefd(settings, embedder=None) as api, serving(create_app(api, service_config())) as url:
        api.index()
        opened(page, url)
        expect(page.locator("#stat-documents")).to_have_text("45")
        expect(page.locator("#skipped-list li.bad")).to_have_text(
            "warning: default scope 'nope' is not in this index, so searches without scopes "
            "read domain only (indexed scopes: conventions, domain, projects/checkout, "
            "projects/ledger); set default_scopes in briefd.yaml to scopes the index has"
        )


def test_an_index_damaged_while_the_page_is_open_says_to_rebuild_it_here(
    page: Page, service_api: Briefd, service_settings: Settings
) -> None:
    """The index file damaged under the server (a disk fault, a truncated copy), found so by an
    agent's search: /api/health said "damaged", every search failed, and the dashboard showed
    its figures (their pages still read) with nothing said; where the figures failed too it
    said "rebuild it with `briefd index --rebuild`", a shell a team lead at this page may not
    have. The page now says the file was found damaged and that the button above rebuilds it,
    and the rebuild ends it. The page's clock is driven."""
    page.clock.install()
    page.on("dialog", lambda dialog: dialog.accept())
    db = service_settings.db
    with serving(create_app(service_api, service_config())) as url:
        opened(page, url)
        expect(page.locator("#stat-documents")).to_have_text("45")
        expect(page.locator("#health-since")).to_contain_text("since ")  # nothing in flight
        with db.open("r+b") as file:
            file.truncate(db.stat().st_size // 3)
        # an agent's search finds it so
        asked = {"q": "chargeback evidence deadline"}
        auth = {"Authorization": f"Bearer {TOKEN}"}
        assert httpx.get(url + "/api/search", params=asked, headers=auth).status_code == 503
        page.clock.run_for(10_000)
        message = page.locator("#message")
        expect(message).to_contain_text("the index file was found damaged at ")
        expect(message).to_contain_text(
            "(database disk image is malformed): \u201cRebuild index\u201d above builds it anew "
            "from the knowledge source (searches fail until then)"
        )
        expect(page.locator("#stat-documents")).to_have_text("45")  # the figures still read
        expect(message).to_have_class("bad")
        page.click("#btn-rebuild")
        for _ in range(20):  # the page follows the job every second
            page.clock.run_for(1_000)
            if (message.text_content() or "").startswith("rebuild done"):
                break
        expect(message).to_have_text("rebuild done: 45 documents, 338 sections")
