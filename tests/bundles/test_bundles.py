"""Bundles (B1–B5) on real indexes: refs lead, packing, rendering, cache and incremental reuse."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

import pytest

from briefd.api import Briefd
from briefd.bundles import BundleRequest
from briefd.bundles.model import TIER_ORDER
from briefd.bundles.pack import closed_blocks
from briefd.bundles.wire import response
from briefd.errors import QueryError
from briefd.markdown.parse import parse_structure
from briefd.settings import Settings, with_overrides
from briefd.tokens import count_tokens
from tests.conftest import EXAMPLE, FakeEmbedder, WriteFiles
from tests.ports import free_port
from tests.sync.gitrepo import git

REFUNDS_CODE = "services/payment-gateway/internal/refunds/partial.go"
CHARGEBACK_TASK = "chargeback evidence deadline: how many days does the merchant get to respond"


def test_paths_alone_give_their_governing_documents_whole(example: Briefd) -> None:
    alone = example.compile_bundle(BundleRequest("", max_tokens=8000, paths=(REFUNDS_CODE,)))
    vague = example.compile_bundle(
        BundleRequest("what is it", max_tokens=8000, paths=(REFUNDS_CODE,))
    )
    governed = [i.chunk_id for i in alone.items if i.tier == "governed"]
    assert governed and governed == [i.chunk_id for i in vague.items if i.tier == "governed"]
    assert {i.doc_path for i in alone.items} >= {"domain/refunds.md", "conventions/go-services.md"}


def test_refs_covering_the_paths_lead_over_a_better_word_match(example: Briefd) -> None:
    plain = example.compile_bundle(BundleRequest(CHARGEBACK_TASK, max_tokens=3000))
    assert plain.items[0].doc_path == "domain/chargebacks.md"
    assert {item.tier for item in plain.items} <= {"ranked", "related"}

    led = example.compile_bundle(
        BundleRequest(CHARGEBACK_TASK, max_tokens=8000, paths=(REFUNDS_CODE,))
    )
    assert led.items[0].doc_path == "domain/refunds.md"
    assert led.items[0].tier == "governed"
    assert "refs services/payment-gateway/internal/refunds/** covers " + REFUNDS_CODE in (
        led.items[0].reasons
    )
    governed = [i for i in led.items if i.tier == "governed"]
    # refunds.md names the refunds package; the Go conventions cover services/payment-gateway/**
    assert {i.doc_path for i in governed} == {"domain/refunds.md", "conventions/go-services.md"}
    first_ranked = next(i for i, item in enumerate(led.items) if item.tier == "ranked")
    assert all(item.tier == "governed" for item in led.items[:first_ranked])
    assert any(item.doc_path == "domain/chargebacks.md" for item in led.items)


def test_markdown_rendering_attributes_every_section(example: Briefd) -> None:
    bundle = example.compile_bundle(
        BundleRequest("partial refunds pending refundable amount", max_tokens=1500)
    )
    sections = bundle.text.split("\n\n> ")
    assert bundle.text.startswith("> domain/refunds.md:")
    assert len(sections) == len(bundle.items)
    for item in bundle.items:
        where = f"{item.doc_path}:{item.start_line}-{item.end_line}"
        line = (
            f"> {where} · {' › '.join((item.title, *item.heading_path))} · "
            f"updated {item.updated_at[:10]} · chunk {item.chunk_id}"
        )
        assert line in bundle.text
        if item.heading_path:  # the section's own heading line is not repeated
            assert f"## {item.heading_path[-1]}\n" not in bundle.text
    assert bundle.diagnostics.estimator.startswith("cl100k_base")
    assert bundle.diagnostics.ranking_version == "r13"


def test_package_and_manifest_modes_carry_each_section_once(example: Briefd) -> None:
    task = "how long do we keep retrying a failed webhook delivery"
    package = example.compile_bundle(BundleRequest(task, max_tokens=1200, mode="package"))
    data = json.loads(package.text)
    assert (data["schema_version"], data["mode"], data["bundle_id"]) == (
        2,
        "package",
        package.bundle_id,
    )
    item = data["items"][0]
    assert set(item) >= {"content", "tier", "reasons", "score", "tokens", "location", "fingerprint"}
    assert item["fingerprint"].startswith("sha256:") and len(item["fingerprint"]) == 71
    assert item["location"]["start_line"] <= item["location"]["end_line"]
    assert data["budget"] == 1200 and data["hard_limit"] == 4800
    assert data["diagnostics"] == {"estimator": package.diagnostics.estimator}
    assert "text" not in response(package)  # the content is in the items, not twice

    manifest = example.compile_bundle(BundleRequest(task, max_tokens=1200, mode="manifest"))
    listed = json.loads(manifest.text)["items"]
    assert [i["chunk_id"] for i in listed] == [i["chunk_id"] for i in data["items"]]
    assert all("content" not in i for i in listed)
    assert [i["fingerprint"] for i in listed] == [i["fingerprint"] for i in data["items"]]
    assert manifest.bundle_id != package.bundle_id

    block = example.compile_bundle(BundleRequest(task, max_tokens=1200))
    wire = response(block)
    assert wire["text"] == block.text and wire["schema_version"] == 2
    assert all("content" not in i and "fingerprint" not in i for i in wire["items"])  # type: ignore[attr-defined]
    assert set(response(block, verbose=True)["diagnostics"]) > {"estimator", "exclusions"}  # type: ignore[arg-type]


def test_small_budget_records_exclusions_and_keeps_trying_smaller_sections(
    example: Briefd,
) -> None:
    bundle = example.compile_bundle(BundleRequest("refund settlement payout fees", max_tokens=700))
    reasons = [e.reason for e in bundle.diagnostics.exclusions]
    assert any(r.startswith("does not fit: needs ") for r in reasons)
    skipped_big = next(
        i for i, e in enumerate(bundle.diagnostics.exclusions) if e.reason.startswith("does")
    )
    assert bundle.diagnostics.exclusions[skipped_big].tokens > min(i.tokens for i in bundle.items)
    assert bundle.tokens <= 665


def test_top_section_larger_than_the_budget_is_cut_to_its_head(example: Briefd) -> None:
    bundle = example.compile_bundle(
        BundleRequest("partial refunds pending refundable amount", max_tokens=260)
    )
    assert len(bundle.items) == 1
    head = bundle.items[0]
    assert head.truncated and bundle.diagnostics.truncated
    assert "[… truncated: " in head.content
    assert (
        f'get_document("{head.doc_path}", start_line={head.start_line}, scopes=["domain"])'
        in head.content
    )
    assert bundle.tokens <= 247  # the answer's envelope (ids, budget figures) included


def test_a_budget_too_small_for_any_section_says_so(example: Briefd) -> None:
    """The answer's own fields take ~75 tokens: at 150 no section fits, and the bundle says
    that rather than reading as "nothing matched"."""
    bundle = example.compile_bundle(
        BundleRequest("partial refunds pending refundable amount", max_tokens=150)
    )
    assert bundle.items == () and bundle.tokens <= 142
    (warning,) = bundle.warnings
    assert warning.startswith("max_tokens 150 fits no section (the best needs ")
    assert warning.endswith(" left); raise it")
    roomy = example.compile_bundle(BundleRequest("partial refunds pending refundable amount"))
    assert roomy.items and roomy.warnings == ()


def test_the_issue_is_mandatory_and_heads_the_bundle_whole(example: Briefd) -> None:
    issue = "PAY-4411 Partial refund rejected\n\n" + "The refund API answers 400. " * 400
    bundle = example.compile_bundle(BundleRequest("", max_tokens=2000, issue=issue))
    first = bundle.items[0]
    assert first.tier == "mandatory" and not first.truncated
    assert first.content == issue.strip()
    assert bundle.text.startswith(
        "> tracker issue · PAY-4411\n\nPAY-4411 Partial refund rejected\n\n"
    )
    assert bundle.tokens > 2000 and not bundle.diagnostics.budget_exceeded  # under 4 × 2,000
    assert bundle.items == (first,)  # it took the whole budget: no room for optional content


def test_issue_text_over_the_hard_limit_is_cut_to_its_share_as_a_live_issue_is(
    example: Briefd,
) -> None:
    """``briefd bundle --issue "<16,000 characters>" --max-tokens 500`` answered 2,896 tokens,
    the issue alone, whatever the hard limit: issue text could blow any limit (and Claude
    Code's 25,000). Over the hard limit it is cut to a live issue's share, marked as one is."""
    issue = "PAY-4411 Partial refund rejected\n\n" + "The refund API answers 400. " * 400
    small = example.compile_bundle(BundleRequest("", max_tokens=2000, issue=issue, hard_limit=500))
    assert not small.diagnostics.budget_exceeded and small.tokens <= 500
    (first,) = [i for i in small.items if i.chunk_id.startswith("issue:")]
    assert first.content.startswith("PAY-4411 Partial refund rejected\n\nThe refund API answers")
    total = count_tokens(issue.strip())
    assert first.content.endswith(
        f" of {total} tokens shown; shorten the issue text, or raise hard_limit to have it whole]"
    )
    assert "\n\n[… cut to max_tokens: " in first.content and count_tokens(first.content) <= 500
    tiny = example.compile_bundle(BundleRequest("partial refund", max_tokens=500, issue=issue))
    assert tiny.tokens <= tiny.diagnostics.hard_limit == 2000
    assert not tiny.diagnostics.budget_exceeded
    (cut,) = [i for i in tiny.items if i.chunk_id.startswith("issue:")]
    assert count_tokens(cut.content) <= 500 * 0.35 and "[… cut to max_tokens: " in cut.content


def test_near_duplicates_are_dropped(api: Briefd, write_files: WriteFiles) -> None:
    body = (
        "Refund reversals post a compensating ledger entry within the same business day and "
        "notify the merchant through the refund webhook with the original payment reference."
    )
    root = write_files(
        {
            "domain/a.md": f"# Reversals\n\n## Posting\n\n{body}\n",
            "domain/b.md": f"# Reversals copy\n\n## Posting\n\n{body} Also see the runbook.\n",
            "domain/c.md": f"# Exact copy\n\n## Posting\n\n{body}\n",
        }
    )
    api.index(root)
    bundle = api.compile_bundle(BundleRequest("refund reversal ledger entry", max_tokens=2000))
    assert len(bundle.items) == 1
    reasons = sorted(e.reason.split(" of ")[0] for e in bundle.diagnostics.exclusions)
    assert reasons == ["duplicate", "near-duplicate"]


def test_related_sections_join_as_the_last_tier(example: Briefd) -> None:
    bundle = example.compile_bundle(
        BundleRequest("partial refunds pending refundable amount", max_tokens=8000)
    )
    related = [i for i in bundle.items if i.tier == "related"]
    assert related, "refunds link to other documents; R6 should bring one"
    assert all(r.reasons[0].startswith("linked from ") for r in related)
    order = [TIER_ORDER[i.tier] for i in bundle.items]
    assert order == sorted(order)


def test_scope_order_domain_conventions_projects(example: Briefd) -> None:
    bundle = example.compile_bundle(
        BundleRequest("idempotency keys for retries", max_tokens=8000, scopes=("all",))
    )
    ranked = [i.scope for i in bundle.items if i.tier == "ranked"]
    order = {"domain": 0, "conventions": 1}
    keys = [order.get(s, 2) for s in ranked]
    assert keys == sorted(keys) and len(set(keys)) >= 2


def test_cache_hits_are_counted_and_a_change_invalidates(
    example: Briefd, settings: Settings
) -> None:
    request = BundleRequest("partial refunds pending refundable amount", max_tokens=1500)
    first = example.compile_bundle(request)
    again = example.compile_bundle(request)
    assert not first.cached and again.cached
    assert again.text == first.text and again.bundle_id == first.bundle_id
    assert example.bundle_cache_stats().hits == 1
    assert example.bundle_cache_stats().misses == 1

    with Briefd(settings, embedder=None) as other:  # another process: served from SQLite
        from_table = other.compile_bundle(request)
    assert from_table.cached and from_table.text == first.text

    assert settings.source is not None
    refunds = settings.source / "domain" / "refunds.md"
    refunds.write_text(
        refunds.read_text(encoding="utf-8").replace("Pending refunds count", "Pending ones count"),
        encoding="utf-8",
    )
    example.index()
    changed = example.compile_bundle(request)
    assert not changed.cached
    assert changed.bundle_id != first.bundle_id
    assert changed.diagnostics.index_fingerprint != first.diagnostics.index_fingerprint
    assert "Pending ones count" in changed.text
    example.close()
    with example.store.read() as conn:
        rows = conn.execute("SELECT id, hits FROM bundles").fetchall()
    assert [(r["id"], r["hits"]) for r in rows] == [(changed.bundle_id, 0)]  # stale row pruned


def test_a_bundle_stored_by_another_release_is_compiled_again(
    example: Briefd, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bundles are kept in the index file: after an upgrade whose fixes change what a bundle
    holds (paths, links, rendering) with the knowledge unchanged, the upgraded server served
    the bundle the old release had stored."""
    import briefd.bundles.cache

    request = BundleRequest("partial refunds pending refundable amount", max_tokens=1500)
    first = example.compile_bundle(request)
    monkeypatch.setattr(briefd.bundles.cache, "__version__", "99.0.0")  # the next release
    with Briefd(settings, embedder=None) as upgraded:
        again = upgraded.compile_bundle(request)
    assert not again.cached and again.bundle_id != first.bundle_id
    assert again.text == first.text  # the same content here: only the release differs


def test_committing_an_indexed_edit_never_serves_the_old_updated_date(
    api: Briefd, write_files: WriteFiles
) -> None:
    """An edit indexed before it is committed shows the file's time; once committed, the
    commit's. No content hash changes in between, yet the attribution line does (B3)."""
    root = write_files({"domain/refunds.md": "# Refunds\n\n## Partial\n\nPartial refunds.\n"})
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "refunds")
    with (root / "domain" / "refunds.md").open("a", encoding="utf-8") as file:
        file.write("Pending refunds count against the refundable amount.\n")
    api.index()  # the edit, not yet committed: the file's time
    request = BundleRequest("partial refunds pending refundable amount", max_tokens=400)
    before = api.compile_bundle(request)
    assert "updated 2020-01-02" not in before.text
    old = {"GIT_AUTHOR_DATE": "2020-01-02T10:00:00Z", "GIT_COMMITTER_DATE": "2020-01-02T10:00:00Z"}
    git(root, "commit", "-qam", "pending refunds", env=old)
    assert api.index().changed == ()  # the same content: only its date moved
    after = api.compile_bundle(request)
    assert "· updated 2020-01-02 ·" in after.text, after.text
    assert not after.cached and after.bundle_id != before.bundle_id


def test_a_scope_rule_changed_moves_the_documents_and_never_serves_an_old_bundle(
    settings: Settings, write_files: WriteFiles
) -> None:
    """``scopes:`` rules changed with no file changed: the files are stored with their new
    scope, and a bundle of the default scopes no longer holds what left them (B3, K1)."""
    write_files(
        {
            "domain/refunds.md": "# Refunds\n\n## Partial\n\nPartial refunds are allowed.\n",
            "domain/adr/0001-refunds.md": "# ADR 1\n\n## Decision\n\nRefund ledger decision.\n",
        }
    )
    request = BundleRequest("refunds ledger decision", max_tokens=800)
    with Briefd(settings, embedder=None) as api:
        api.index()
        before = api.compile_bundle(request)
    assert "domain/adr/0001-refunds.md" in {item.doc_path for item in before.items}
    rules = [
        {"folder": "domain/adr", "scope": "adr"},
        {"folder": "domain", "default": True},
        {"folder": "conventions", "default": True},
    ]
    moved = with_overrides(settings, {"scopes": rules, "default_scopes": ["domain", "conventions"]})
    with Briefd(moved, embedder=None) as api:
        api.index()
        assert sorted((s.name, s.documents) for s in api.scopes()) == [("adr", 1), ("domain", 1)]
        after = api.compile_bundle(request)
    assert {item.doc_path for item in after.items} == {"domain/refunds.md"}
    assert not after.cached and after.bundle_id != before.bundle_id


def test_a_bundle_served_while_the_shared_state_is_down_counts_what_it_says(
    settings: Settings,
) -> None:
    """Replicas with PostgreSQL unreachable still serve bundles, marked ``state_error``; the
    answer's ``tokens`` count the mark, so they bound what the client receives (B7, S1)."""
    assert settings.source is not None
    shutil.copytree(EXAMPLE, settings.source)
    down = with_overrides(settings, {"state.url": f"postgresql://u:p@127.0.0.1:{free_port()}/x"})
    with Briefd(down, embedder=None) as api:
        api.index()
        bundle = api.compile_bundle(BundleRequest("partial refunds pending", max_tokens=700))
    assert bundle.items and bundle.state_error is not None and "unreachable" in bundle.state_error
    received = json.dumps(response(bundle), ensure_ascii=False, separators=(",", ":"))
    assert count_tokens(received) <= bundle.tokens


def test_a_bundle_served_from_the_cache_is_remembered_after_its_manifest_aged_out(
    example: Briefd, settings: Settings
) -> None:
    """Manifests are kept ``manifest_days``; a bundle served again from the cache after that
    (the knowledge did not change) is still one this index issued."""
    request = BundleRequest("partial refunds pending refundable amount", max_tokens=1500)
    first = example.compile_bundle(request)
    example.close()
    aged = "2020-01-01T00:00:00+00:00"
    with example.store.write() as conn:
        conn.execute("UPDATE bundle_manifests SET created_at = ?", (aged,))
    with Briefd(settings, embedder=None) as later:
        later.index()  # nothing changed; the old manifest is pruned
        again = later.compile_bundle(request)
        assert again.cached and again.bundle_id == first.bundle_id
        ids = [i.chunk_id for i in again.items]
        receipt = later.report_usage(again.bundle_id, ids[:2])
        assert receipt.useful_chunk_ids == tuple(ids[:2])
        delta = later.compile_bundle(replace(request, base=again.bundle_id))
        assert not delta.recovered and delta.delta is not None
        assert [e.op for e in delta.delta.entries] == ["reuse"] * len(ids)

    with example.store.write() as conn:  # served again: remembered from the serving on
        conn.execute("UPDATE bundle_manifests SET created_at = ?", (aged,))
    with Briefd(settings, embedder=None) as later:
        assert later.compile_bundle(request).cached
    with Briefd(settings, embedder=None) as later:
        later.index()
        assert later.report_usage(first.bundle_id, ids[:1]).useful_chunk_ids == tuple(ids[:1])


def test_incremental_reuse_against_a_base(example: Briefd, settings: Settings) -> None:
    request = BundleRequest("partial refunds pending refundable amount", max_tokens=3000)
    base = example.compile_bundle(request)
    unchanged = example.compile_bundle(replace(request, base=base.bundle_id))
    assert unchanged.delta is not None and unchanged.text == ""
    assert all(e.op == "reuse" for e in unchanged.delta.entries)
    assert unchanged.delta.tokens_saved == sum(i.tokens for i in base.items)
    assert unchanged.delta.removed == ()

    assert settings.source is not None
    refunds = settings.source / "domain" / "refunds.md"
    text = refunds.read_text(encoding="utf-8")
    refunds.write_text(text.replace("Pending refunds count", "Pending ones count"), "utf-8")
    example.index()
    delta = example.compile_bundle(replace(request, base=base.bundle_id))
    assert delta.delta is not None and not delta.recovered
    replaced = [e for e in delta.delta.entries if e.op == "replace"]
    assert [e.chunk_id for e in replaced] == [
        i.chunk_id for i in delta.items if "Pending ones count" in i.content
    ]
    assert "Pending ones count" in delta.text
    assert delta.text.count("\n> ") + 1 == len(replaced)

    unknown = example.compile_bundle(replace(request, base="0123456789abcdef"))
    assert unknown.recovered and unknown.delta is None
    blank = example.compile_bundle(replace(request, base=""))  # sent as "no base", as issue ""
    assert not blank.recovered and blank.delta is None and blank.text == unknown.text
    assert unknown.text == example.compile_bundle(request).text
    other_task = example.compile_bundle(BundleRequest("webhook retries", max_tokens=3000))
    mismatched = example.compile_bundle(replace(request, base=other_task.bundle_id))
    assert mismatched.recovered


def test_hybrid_bundles_are_deterministic(hybrid_api: Briefd, settings: Settings) -> None:
    assert settings.source is not None
    shutil.copytree(EXAMPLE, settings.source)
    hybrid_api.index()
    request = BundleRequest("how do partial refunds work", max_tokens=2000, mode="package")
    first = hybrid_api.compile_bundle(request)
    hybrid_api._bundles.clear()
    with hybrid_api.store.write() as conn:
        conn.execute("DELETE FROM bundles")
    second = hybrid_api.compile_bundle(request)
    assert first.diagnostics.search_mode == "hybrid"
    assert second.text == first.text and not second.cached


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (BundleRequest("   "), "task description is empty"),
        (BundleRequest("", paths=("", " ")), "task description is empty and the paths are blank"),
        (BundleRequest("", target=" "), "the document path is empty; name a document"),
        (BundleRequest("refunds", max_tokens=10), "max_tokens must be between 100"),
        (BundleRequest("refunds", mode="yaml"), "mode must be one of"),  # type: ignore[arg-type]
        (BundleRequest("refunds", hard_limit=50), "hard_limit must be between 100 and 800000"),
        (BundleRequest("refunds", tags=("nope",)), "tag 'nope' is on no document; known tags: "),
        (BundleRequest("refunds", scopes=("nope",)), "scope 'nope' does not exist"),
    ],
)
def test_bad_requests_say_what_to_do(
    example: Briefd, request_: BundleRequest, message: str
) -> None:
    with pytest.raises(QueryError, match=message):
        example.compile_bundle(request_)


def test_an_empty_index_gives_an_empty_bundle(api: Briefd, write_files: WriteFiles) -> None:
    api.index(write_files({}))
    bundle = api.compile_bundle(BundleRequest("refunds"))
    assert bundle.items == () and bundle.text == ""


def test_a_reindex_holding_the_write_lock_never_stalls_a_bundle(
    example: Briefd, settings: Settings
) -> None:
    import sqlite3
    import time

    writer = sqlite3.connect(settings.db, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # like a sync writing a large reindex
    try:
        started = time.monotonic()
        bundle = example.compile_bundle(BundleRequest("partial refunds", max_tokens=800))
        assert time.monotonic() - started < 2.0  # not the 30 s busy timeout
        assert bundle.items and not bundle.cached
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    with Briefd(settings, embedder=None) as other:  # the cache row was skipped, not the answer
        again = other.compile_bundle(BundleRequest("partial refunds", max_tokens=800))
    assert not again.cached and again.text == bundle.text


@pytest.mark.parametrize("budget", [210, 220, 235, 260])  # ~80 of them: the envelope
def test_the_smallest_budgets_still_give_the_top_sections_head(
    example: Briefd, budget: int
) -> None:
    bundle = example.compile_bundle(BundleRequest("chargeback evidence deadline", budget))
    assert bundle.items and bundle.tokens <= int(budget * 0.95)
    top = bundle.items[0]
    assert top.doc_path == "domain/chargebacks.md" and top.content.strip()


WEAK = {
    "domain/narwhals.md": "# Narwhal tusks\n\nHow we measure a narwhal tusk: length along the spiral.\n",
    "domain/retry.md": "# Retry policy\n\nRetry soft declines three times, then stop.\n",
    "conventions/review.md": "# Code review policy\n\nTwo approvals before merging.\n",
    "conventions/metrics.md": "# Metric naming policy\n\nSnake case, unit suffix.\n",
}


def test_hybrid_bundles_leave_weak_matches_out(hybrid_api: Briefd, write_files: WriteFiles) -> None:
    write_files(WEAK)
    hybrid_api.index()
    bundle = hybrid_api.compile_bundle(BundleRequest("narwhal tusk measurement policy"))
    assert bundle.items[0].doc_path == "domain/narwhals.md"
    kept = {item.doc_path for item in bundle.items}
    weak = [e for e in bundle.diagnostics.exclusions if e.reason.startswith("weak match")]
    assert {e.doc_path for e in weak} == {"domain/retry.md", "conventions/metrics.md"}
    assert not kept & {e.doc_path for e in weak}
    assert "is under 35% of the best" in weak[0].reason


def test_changed_search_settings_never_serve_a_cached_bundle(
    settings: Settings, write_files: WriteFiles
) -> None:
    write_files(WEAK)
    request = BundleRequest("narwhal tusk measurement policy", mode="package")
    with Briefd(settings, embedder=None) as api:
        api.index()
        plain = api.compile_bundle(request)
    tuned = with_overrides(settings, {"search.title_weight": 0.5})
    with Briefd(tuned, embedder=None) as api:
        again = api.compile_bundle(request)
    assert not again.cached and again.bundle_id != plain.bundle_id


def test_section_windows_switched_on_never_serve_a_cached_bundle(settings: Settings) -> None:
    """``embeddings.window_words`` changes how sections score against the task (a long one
    as its closest window); a bundle cached before it is not served after (B3, R2)."""
    assert settings.source is not None
    shutil.copytree(EXAMPLE, settings.source)
    request = BundleRequest("partial refunds pending refundable amount", mode="package")
    with Briefd(settings, embedder=FakeEmbedder()) as api:
        api.index()
        whole = api.compile_bundle(request)
    windows = with_overrides(settings, {"embeddings.window_words": 40})
    with Briefd(windows, embedder=FakeEmbedder()) as api:
        assert api.index().windows > 0
        again = api.compile_bundle(request)
    assert not again.cached and again.bundle_id != whole.bundle_id
    scores = [round(item.score, 4) for item in again.items if item.tier == "ranked"]
    assert scores != [round(item.score, 4) for item in whole.items if item.tier == "ranked"]


def test_a_head_cut_inside_code_closes_its_fence(api: Briefd, write_files: WriteFiles) -> None:
    code = "\n".join(
        f"    settle_payout(batch_{i}, currency='EUR')  # wombat step {i}" for i in range(60)
    )
    write_files(
        {"domain/payouts.md": f"# Payouts\n\n## Wombat batches\n\n```python\n{code}\n```\n"}
    )
    api.index()
    bundle = api.compile_bundle(BundleRequest("wombat batches settle payout", max_tokens=300))
    head = bundle.items[0]
    assert head.truncated and "settle_payout(batch_" in head.content
    fences = [line for line in head.content.splitlines() if line.startswith("```")]
    assert fences == ["```python", "```"]
    assert head.content.index("```\n\n[… truncated") > 0


def test_a_document_that_never_closes_a_block_never_swallows_the_next_section(
    api: Briefd, write_files: WriteFiles
) -> None:
    """A document whose last section leaves a code fence, a comment or ``<pre>`` open: in the
    block that section is closed, so the sections after it are read as Markdown (B4)."""
    write_files(
        {
            "domain/a-fence.md": "# Job\n\n## Refund job\n\n```bash\nrefund-job --all\n",
            "domain/b-comment.md": "# Notes\n\n## Refund notes\n\nRefund text.\n\n<!-- refund\n",
            "domain/c-pre.md": "# Pre\n\n## Refund output\n\n<pre>\nrefund done\n",
            "domain/d-plain.md": "# Plain\n\n## Refund rules\n\nRefund within 30 days.\n",
        }
    )
    api.index()
    bundle = api.compile_bundle(BundleRequest("refund", max_tokens=2000))
    assert len(bundle.items) == 4
    structure = parse_structure(bundle.text)
    assert [f.closed for f in structure.fences] == [True]
    assert [h.closed for h in structure.html] == [True, True]
    assert structure.headings == ()  # "## Refund …" lines stay out of the sections' bodies
    assert "refund-job --all\n```" in bundle.text
    assert "<!-- refund\n-->" in bundle.text and "refund done\n</pre>" in bundle.text
    package = api.compile_bundle(BundleRequest("refund", max_tokens=2000, mode="package"))
    assert "```bash\nrefund-job --all" in {i.content for i in package.items}  # as written


def test_a_title_written_over_several_lines_stays_on_the_attribution_line(
    api: Briefd, write_files: WriteFiles
) -> None:
    """``title: |`` keeps its line breaks; the attribution line puts them on one line, so its
    other lines are not read as the section's text or as a heading (B4)."""
    title = "title: |\n  Refunds\n  and returns\n\n  # Policy\n"
    write_files({"domain/refunds.md": f"---\n{title}---\n## Partial\n\nPartial refunds.\n"})
    api.index()
    bundle = api.compile_bundle(BundleRequest("partial refunds", max_tokens=400))
    first = bundle.text.split("\n")[0]
    assert first.startswith("> domain/refunds.md:8-10 · Refunds and returns # Policy › Partial · ")
    assert bundle.text.split("\n")[1:] == ["", "Partial refunds."]
    assert parse_structure(bundle.text).headings == ()


def test_a_section_that_opens_indented_keeps_its_first_lines_indentation(
    api: Briefd, write_files: WriteFiles
) -> None:
    """A section whose text starts with an indented code block or an indented list: in the
    block its first line keeps its spaces, so the code stays code and the list one list
    (B4)."""
    code = "    refund --all\n    refund --dry-run\n"
    listed = "  - refund item one\n  - refund item two\n"
    write_files({"domain/refunds.md": f"# Refunds\n\n## Run\n\n{code}\n## Steps\n\n{listed}"})
    api.index()
    bundle = api.compile_bundle(BundleRequest("", target="domain/refunds.md", max_tokens=400))
    assert f"chunk {bundle.items[0].chunk_id}\n\n{code}\n> " in bundle.text
    assert bundle.text.endswith(f"chunk {bundle.items[1].chunk_id}\n\n{listed.rstrip()}")
    assert len(parse_structure(bundle.text).code_ranges) == 1  # the indented code block


def test_closed_blocks_closes_what_a_cut_left_open() -> None:
    listed = closed_blocks("Steps:\n\n1. ```sh\n   make build\n   make test")
    assert listed.endswith("\n   make test\n   ```")
    quoted = closed_blocks("> ~~~~\n> code")
    assert quoted.endswith("\n> ~~~~")
    comment = closed_blocks("Intro\n\n<!-- reviewer notes\nstill open")
    assert comment.endswith("\nstill open\n-->")
    assert closed_blocks("done\n\n```\nx\n```") == "done\n\n```\nx\n```"


def test_rechunking_never_serves_a_bundle_cached_before_it(
    settings: Settings, write_files: WriteFiles
) -> None:
    root = write_files({})
    shutil.copytree(EXAMPLE, root, dirs_exist_ok=True)
    request = BundleRequest("partial refunds pending settlement", mode="package")
    with Briefd(settings, embedder=None) as api:
        api.index()
        first = api.compile_bundle(request)
    small = with_overrides(settings, {"chunking.max_tokens": 100, "chunking.target_tokens": 60})
    with Briefd(small, embedder=None) as api:
        assert api.index().rechunked
        again = api.compile_bundle(request)
    assert not again.cached and again.bundle_id != first.bundle_id
    assert max(item.tokens for item in again.items) < max(item.tokens for item in first.items)


def test_a_long_unbroken_run_is_counted_in_slices() -> None:
    run = "═" * 200_000  # BPE is quadratic in a piece: whole, this took minutes
    assert count_tokens(run) == 100_000
    assert count_tokens("refund policy for card payments") == 5  # exact as before


def test_a_deep_indent_is_counted_in_slices() -> None:
    """Whitespace before a line is one BPE piece: a list nested 1,000 deep (indents of up to
    2,000 spaces) took 36 s to count whole, and indexing one nested 1,300 deep 75 s. Runs of
    400 whitespace characters and more are counted in slices (0.2 s; 15,509 tokens, 13,589
    whole); shorter ones, as real documents have them, exactly."""
    nested = "".join("  " * i + f"- item {i}\n" for i in range(1000))
    assert count_tokens(nested) == 15_509
    assert count_tokens(" " * 399 + "x") == 5  # exact: one piece, as tiktoken counts it


def test_governing_documents_in_scopes_not_requested_are_said(example: Briefd) -> None:
    threeds = "services/checkout-api/internal/threeds/x.go"
    bundle = example.compile_bundle(BundleRequest("add a 3ds challenge", paths=(threeds,)))
    said = {e.doc_path: e.reason for e in bundle.diagnostics.exclusions if not e.chunk_id}
    assert said["projects/checkout/three-d-secure.md"] == (
        f"refs services/checkout-api/internal/threeds/** covers {threeds}, but scope "
        "'projects/checkout' was not requested: add it to scopes (--scopes on the CLI) or use 'all'"
    )
    asked = example.compile_bundle(
        BundleRequest("add a 3ds challenge", paths=(threeds,), scopes=("all",))
    )
    assert "projects/checkout/three-d-secure.md" in {i.doc_path for i in asked.items}
    assert not [e for e in asked.diagnostics.exclusions if not e.chunk_id]
