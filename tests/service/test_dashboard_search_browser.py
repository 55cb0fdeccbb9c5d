"""The dashboard's search box in a real headless Chromium: what a person reads of each hit."""

from __future__ import annotations

import shutil
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from fastapi.testclient import TestClient
from playwright.sync_api import Locator, Page, expect

from briefd.api import Briefd
from briefd.embeddings.base import EmbeddingKind, Vectors
from briefd.embeddings.fake import FakeEmbedder
from briefd.service import create_app
from briefd.settings import Settings
from tests.service.conftest import service_config, service_settings_for
from tests.service.live import TOKEN, serving
from tests.service.test_dashboard_browser import browser, page, pytestmark

__all__ = ["browser", "page", "pytestmark"]

LAST_LINE = "than to quietly change the caps."


def test_a_long_hit_opens_whole_from_the_search_results(page: Page, service_api: Briefd) -> None:
    """A hit showed its first six lines and hid the rest mid-line, with no way to read it on
    the page (the YAML alert rule was cut inside its expression). A cut hit now says how many
    lines it has and opens whole, from the keyboard too, and closes again."""
    with serving(create_app(service_api, service_config())) as url:
        page.goto(url + "/")
        page.fill("#token-input", TOKEN)
        page.click("#login-form button")
        expect(page.locator("#stat-documents")).to_have_text("45")
        page.fill("#search-input", "AuthorizationRetryRateHigh alert")
        page.press("#search-input", "Enter")
        hit = page.locator(".hit", has_text="domain/retry-policy.md:139-156")
        content = hit.locator("pre")
        expect(content).to_contain_text(LAST_LINE)  # in the page, but out of sight
        assert not _shown(content, LAST_LINE)
        more = hit.locator("button.more")
        expect(more).to_have_text("show all 16 lines")
        more.focus()
        page.keyboard.press("Enter")
        expect(more).to_have_text("show less")
        expect(more).to_have_attribute("aria-expanded", "true")
        assert _shown(content, LAST_LINE)
        page.keyboard.press("Enter")
        expect(more).to_have_text("show all 16 lines")
        assert not _shown(content, LAST_LINE)
        # a hit shown whole offers nothing to open
        cut = "[...document.querySelectorAll('.hit pre')].filter(p => p.scrollHeight > p.clientHeight)"
        hits = page.locator(".hit")
        assert 0 < page.evaluate(cut + ".length") == page.locator(".hit button.more").count()
        assert hits.count() > page.locator(".hit button.more").count()


def _shown(content: Locator, text: str) -> bool:
    """Whether the line holding ``text`` lies inside the hit's visible box."""
    return bool(
        content.evaluate(
            """(pre, text) => {
                const range = document.createRange();
                const at = pre.textContent.indexOf(text);
                range.setStart(pre.firstChild, at);
                range.setEnd(pre.firstChild, at + text.length);
                const line = range.getBoundingClientRect(), box = pre.getBoundingClientRect();
                return line.bottom <= box.bottom + 1;
            }""",
            text,
        )
    )


def searched(page: Page, url: str, query: str) -> None:
    page.goto(url + "/")
    page.fill("#token-input", TOKEN)
    page.click("#login-form button")
    expect(page.locator("#stat-documents")).not_to_have_text("–")
    page.fill("#search-input", query)
    page.press("#search-input", "Enter")


def test_a_hit_of_a_superseded_document_says_what_replaces_it(
    page: Page, tmp_path: Path, example_copy: tuple[Path, Path]
) -> None:
    """The answer names, for each hit of a document another one supersedes, the documents
    that do (``superseded_by``; the CLI, the MCP text and bundles say it); the search box
    dropped it, so the replaced retry policy read as the one in force. Each such hit says it."""
    source = tmp_path / "knowledge"
    shutil.copytree(example_copy[0], source)
    (source / "domain" / "retry-policy-v2.md").write_text(
        "---\nsupersedes: domain/retry-policy.md\n---\n# Retry policy v2\n\n"
        "Soft declines are retried three times with jitter; hard declines never.\n"
    )
    settings = service_settings_for(source, tmp_path / "index.db")
    with Briefd(settings, embedder=None) as api, serving(create_app(api, service_config())) as url:
        api.index()
        searched(page, url, "retry soft decline")
        old = page.locator(".hit", has_text="domain/retry-policy.md:")
        expect(old.first).to_be_visible()
        assert old.count() > 1
        for where in old.locator(".where").all():
            expect(where).to_contain_text("· superseded by domain/retry-policy-v2.md (prefer it)")
        # a current document's hits say nothing of it
        assert (
            page.locator(".hit .superseded").count() == old.count() < page.locator(".hit").count()
        )


def test_a_search_on_keywords_only_says_so_above_its_hits(
    page: Page, service_settings: Settings
) -> None:
    """An index built without vectors, served with the model on: the answer's warnings say the
    search ran on keywords only and how to embed the index; the search box showed the hits
    alone, so a worse ranking went unexplained. The warning leads the hits."""
    embedding = replace(service_settings.embeddings, enabled=True)
    settings = replace(service_settings, embeddings=embedding)
    with (
        Briefd(settings, embedder=FakeEmbedder()) as api,
        serving(create_app(api, service_config())) as url,
    ):
        searched(page, url, "retry soft decline")
        expect(page.locator(".hit").first).to_be_visible()
        warning = page.locator("#search-results > p.warning")
        expect(warning).to_have_count(1)
        expect(warning).to_contain_text(
            "warning: searched by keywords only (bm25): this index has no vectors of fake-bow"
        )
        expect(warning).to_contain_text("run `briefd index` to embed it with this model")
        # it comes before the first hit
        assert page.evaluate(
            "document.querySelector('#search-results').firstElementChild.classList"
            ".contains('warning')"
        )


# long enough to be embedded before the search takes the service's lock (a short query is
# embedded under it, where a second search waits its turn)
LONG_SETTLEMENT = " ".join(
    f"which settlement batch {n} reconciles the ledger against the acquirer report"
    for n in range(12)
)


class SlowOnSettlement(FakeEmbedder):
    """The fake model, slow on the one query that names a settlement batch (a long query the
    real model takes longer on), quick on every other."""

    def embed_batch(self, texts: Sequence[str], kind: EmbeddingKind) -> Vectors:
        if kind == "query" and any("settlement batch" in text for text in texts):
            time.sleep(1.5)
        return super().embed_batch(texts, kind)


def test_only_the_last_search_asked_shows_its_hits(page: Page, service_settings: Settings) -> None:
    """A search asked while an earlier, slower one still ran: the earlier one answered last and
    its hits stood under the new query in the box (settlement sections under "idempotency
    key"). Only the last search asked shows what it found."""
    embedding = replace(service_settings.embeddings, enabled=True)
    gateless = replace(service_settings.search, gate=False)  # the fake model's scores are no gauge
    settings = replace(service_settings, embeddings=embedding, search=gateless)
    with Briefd(settings, embedder=SlowOnSettlement()) as api:
        api.index()  # with vectors: every search embeds its query
        with serving(create_app(api, service_config())) as url:
            searched(page, url, "idempotency key")  # its hits drawn (which ranks first: r13)
            expect(page.locator(".hit").first).to_contain_text("dempoten")
            wanted = page.locator("#search-results").text_content() or ""
            with page.expect_response(lambda r: "settlement" in r.url) as slow:
                page.fill("#search-input", LONG_SETTLEMENT)
                page.press("#search-input", "Enter")
                page.fill("#search-input", "idempotency key")
                page.press("#search-input", "Enter")
            assert slow.value.ok
            page.wait_for_timeout(300)  # what the slow answer would have drawn
            expect(page.locator("#search-results")).to_have_text(wanted)


def test_more_hits_than_a_page_are_read_on_from_the_keyboard(
    page: Page, service_api: Briefd, client: TestClient
) -> None:
    """The search box showed the server's top_k (8) hits and no more, with nothing saying that
    others ranked below: in a knowledge base of thousands of documents the ninth was out of
    reach. Ten come at a time, as the API ranks them, and the keyboard reads on."""
    query = "payment"
    with serving(create_app(service_api, service_config())) as url:
        searched(page, url, query)
        hits, more = page.locator(".hit"), page.locator("#more-hits")
        expect(more).to_have_text("show 10 more hits")
        assert hits.count() >= 10
        more.focus()
        page.keyboard.press("Enter")
        expect(page.locator(".hit strong").nth(10)).to_be_focused()
        wanted = client.get(
            "/api/search", params={"q": query, "scopes": "all", "max_tokens": 200000, "top_k": 20}
        ).json()["hits"]
        assert len(wanted) >= 20
        shown = page.locator(".hit pre").evaluate_all("pres => pres.map(p => p.textContent)")
        assert shown == [h["content"] for h in wanted]


def test_a_linked_section_says_which_hit_links_to_it(
    page: Page, service_api: Briefd, client: TestClient
) -> None:
    """A section that joins the hits because a hit links to it carries ``related_to`` (the MCP
    text and the CLI say "linked from …"); the search box said "score 0.000 · linked", which
    read as noise, and not which hit it came with. It says "linked from 3." and no score."""
    query = "settlement batch"
    with serving(create_app(service_api, service_config())) as url:
        searched(page, url, query)
        expect(page.locator(".hit").first).to_be_visible()
        hits = client.get(
            "/api/search", params={"q": query, "scopes": "all", "max_tokens": 200000, "top_k": 10}
        ).json()["hits"]
        rank = {h["chunk_id"]: n for n, h in enumerate(hits, 1)}
        linked = [(n, h) for n, h in enumerate(hits, 1) if h.get("related_to")]
        assert linked
        wheres = page.locator(".hit .where")
        expect(wheres).to_have_count(len(hits))
        for n, h in linked:
            where = wheres.nth(n - 1)
            expect(where).to_contain_text(f"{h['doc_path']}:{h['start_line']}-")
            expect(where).to_contain_text(f" · linked from {rank[h['related_to']]}. · ")
            expect(where).not_to_contain_text("score")
        expect(wheres.first).to_contain_text(f"score {hits[0]['score']:.3f}")


def test_a_long_line_of_a_hit_wraps_in_its_box(
    page: Page, tmp_path: Path, example_copy: tuple[Path, Path]
) -> None:
    """A hit's text wrapped at spaces only, in a box that hides what overflows: a line longer
    than the box (a URL, a line of code; on a phone the example's Kafka handler) was cut at
    its right edge, with nothing to scroll and no "show all" (the box was not too tall), even
    opened whole. A long line now wraps inside the box, every character of it in sight."""
    source = tmp_path / "knowledge"
    shutil.copytree(example_copy[0], source)
    url_line = "https://hooks.example.com/v1/callbacks?token=" + "AbCdEf0123" * 30
    (source / "domain" / "webhook-urls.md").write_text(
        f"# Webhook URLs\n\nMerchant webhook callbacks are registered as\n{url_line}\n"
        "and are checked once a day.\n"
    )
    settings = service_settings_for(source, tmp_path / "index.db")
    with Briefd(settings, embedder=None) as api, serving(create_app(api, service_config())) as url:
        api.index()
        searched(page, url, "merchant webhook callbacks registered")
        _wraps(page, "domain/webhook-urls.md:")
        page.set_viewport_size({"width": 390, "height": 900})  # a phone
        page.fill("#search-input", "consumer groups transactional handler")
        page.press("#search-input", "Enter")
        _wraps(page, "conventions/kafka-topics.md:115-")


def _wraps(page: Page, where: str) -> None:
    """The hit found at ``where``, opened whole when it is cut, shows each line in its box."""
    hit = page.locator(".hit", has_text=where).first
    expect(hit).to_be_visible()
    if hit.locator("button.more").count():
        hit.locator("button.more").click()
    box = hit.locator("pre").evaluate("p => [p.scrollWidth, p.clientWidth]")
    assert 0 < box[0] <= box[1], f"a line of {where} overflows its box: {box}"


def test_a_search_the_server_was_away_for_is_not_said_to_fail_once_it_is_back(
    page: Page, service_api: Briefd
) -> None:
    """A search asked while the server was away (restarting) failed with "the server does not
    answer", and the page kept saying so once the server answered again, its figures refreshed
    under the message. It now says the server answers again and to search again; a search
    then clears it. The page's clock is driven."""
    page.clock.install()
    with serving(create_app(service_api, service_config())) as url:
        searched(page, url, "retry policy")
        expect(page.locator(".hit").first).to_be_visible()
        message = page.locator("#message")
        page.route("**/api/**", lambda route: route.abort("connectionrefused"))
        page.fill("#search-input", "refund window")
        page.press("#search-input", "Enter")
        expect(message).to_contain_text("search failed: the server does not answer (")
        expect(page.locator(".hit")).to_have_count(0)

        page.unroute("**/api/**")
        page.clock.run_for(10_000)  # the figures' refresh: the server answers
        expect(message).to_have_text(
            "search failed: the server did not answer it; it answers again: search again"
        )
        expect(message).to_have_class("ok")
        page.press("#search-input", "Enter")
        expect(page.locator(".hit").first).to_be_visible()
        expect(message).to_have_text("")
