"""The dashboard's link findings in a real headless Chromium: every finding the table counts
is named, as `briefd links` names it."""

from __future__ import annotations

import shutil
from pathlib import Path

from playwright.sync_api import Page, expect

from briefd.api import Briefd
from briefd.service import create_app
from tests.service.conftest import service_config, service_settings_for
from tests.service.live import TOKEN, serving
from tests.service.test_dashboard_browser import browser, page, pytestmark

__all__ = ["browser", "page", "pytestmark"]

NOTES = """# Checkout notes

See [[chargeback-window]] and [the old limits](../../domain/old-limits.md).
And the [readme](/README.md).

## Retries {#same}

A.

## Refunds {#same}

B.
"""
FILES = {
    "projects/checkout/notes.md": NOTES,
    "conventions/chargeback-window.md": "# Chargeback window\n\nHow we name it.\n",
    "projects/ledger/chargeback-window.md": "# Chargeback window\n\nHow the ledger books it.\n",
    "domain/old-limits.md": "# Old limits\n\nOld text.\n",
    "domain/limits.md": "---\nsupersedes: [domain/old-limits.md]\n---\n# Limits\n\nNew text.\n",
    **{f"domain/lonely-{n:02d}.md": f"# Lonely {n}\n\nNobody links here.\n" for n in range(10)},
}


def test_every_link_finding_counted_is_named(
    page: Page, tmp_path: Path, example_copy: tuple[Path, Path]
) -> None:
    """Link findings listed broken links and unknown anchors only: "ambiguous 1", "duplicate
    anchors 1", "to superseded 1" and "orphans 16" were counts with no document to go and fix
    (`briefd links` names each). Each kind is listed now, ten at most, with how many more; a
    broken link with its reason, which the page left out ("→ /README.md" read as a typo)."""
    source = tmp_path / "knowledge"
    shutil.copytree(example_copy[0], source)
    for path, text in FILES.items():
        (source / path).write_text(text, encoding="utf-8")
    settings = service_settings_for(source, tmp_path / "index.db")
    with Briefd(settings, embedder=None) as api, serving(create_app(api, service_config())) as url:
        api.index()
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        counts = page.locator("#links-table tbody tr")
        expect(counts).to_have_text(
            [
                "broken2",
                "ambiguous1",
                "unknown anchors0",
                "duplicate anchors1",
                "orphans16",
                "to superseded1",
            ]
        )
        findings = page.locator("#links-list li")
        expect(findings).to_have_text(
            [
                # the reason, as `briefd links` prints it: a file outside every scope is no typo
                "broken: projects/checkout/notes.md:4 → /README.md (README.md exists but is "
                "outside every scope (not indexed); link to an indexed document, or add its "
                "folder to 'scopes' in briefd.yaml)",
                "broken: projects/ledger/month-end-close.md:123 → legacy-settlement-batch "
                "(no document matches 'legacy-settlement-batch')",
                "ambiguous: projects/checkout/notes.md:3: chose conventions/chargeback-window.md;"
                " also matches projects/ledger/chargeback-window.md",
                "duplicate anchor: projects/checkout/notes.md: #same on lines 6, 10",
                "to superseded: projects/checkout/notes.md:3: links to domain/old-limits.md,"
                " superseded by domain/limits.md",
                *[f"orphan (no inbound links): {path}" for path in ORPHANS_SHOWN],
                "… and 6 more orphans show 6 more",
            ]
        )


def test_the_findings_past_the_first_ten_are_shown_on_request_and_stay_shown(
    page: Page, tmp_path: Path, example_copy: tuple[Path, Path]
) -> None:
    """ "… and 6 more orphans" gave no way to see them (the page held them: /api/stats sends
    50 of each kind), and the documents past those said nothing of `briefd links`."""
    source = tmp_path / "knowledge"
    shutil.copytree(example_copy[0], source)
    for n in range(55):
        (source / "domain" / f"lonely-{n:02d}.md").write_text(f"# Lonely {n}\n\nNobody.\n")
    settings = service_settings_for(source, tmp_path / "index.db")
    with Briefd(settings, embedder=None) as api, serving(create_app(api, service_config())) as url:
        api.index()
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        orphans = page.locator("#links-list li", has_text="orphan (no inbound links): ")
        expect(orphans).to_have_count(10)
        fold = page.locator("#links-list li", has_text="more orphans")
        expect(fold).to_have_text(
            "… and 48 more orphans; `briefd links` lists every one show 40 more"
        )
        fold.get_by_role("button", name="show 40 more").click()
        expect(orphans).to_have_count(50)
        expect(fold).to_have_text("… and 8 more orphans; `briefd links` lists every one")
        page.evaluate("refresh()")  # the figures' 10 s refresh draws the list anew: still open
        expect(page.locator("#stat-documents")).to_have_text("100")
        expect(orphans).to_have_count(50)


ORPHANS_SHOWN = [
    "conventions/python-services.md",
    "domain/limits.md",
    *[f"domain/lonely-{n:02d}.md" for n in range(8)],
]


def test_a_name_with_a_bidi_override_or_a_zero_width_space_is_shown_escaped(
    page: Page, tmp_path: Path
) -> None:
    """'domain/inv\\u202ecod.exe.md' was listed as the browser lays it out, 'invexe.doc.md', and
    'domain/a\\u200bb.md' as 'ab.md': each is shown as `briefd links` prints it now."""
    source = tmp_path / "knowledge"
    (source / "domain").mkdir(parents=True)
    (source / "domain" / "inv\u202ecod.exe.md").write_text("# Evil\n\nRefund window.\n")
    (source / "domain" / "a\u200bb.md").write_text("# Joined\n\nRefund rules.\n")
    settings = service_settings_for(source, tmp_path / "index.db")
    with Briefd(settings, embedder=None) as api, serving(create_app(api, service_config())) as url:
        api.index()
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        expect(page.locator("#links-list li")).to_have_text(
            [
                "orphan (no inbound links): domain/a\\u200bb.md",
                "orphan (no inbound links): domain/inv\\u202ecod.exe.md",
            ]
        )
        page.fill("#search-input", "refund")
        page.press("#search-input", "Enter")
        where = page.locator("#search-results .hit .where")
        expect(where).to_have_count(2)
        expect(where.filter(has_text="domain/inv\\u202ecod.exe.md:1-3")).to_have_count(1)
