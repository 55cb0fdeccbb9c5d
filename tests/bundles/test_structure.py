"""Tiers with structure (B8), the hard limit (B7) and the tags filter (R5) on the example
knowledge and on small repositories written for the case."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from briefd.api import Briefd
from briefd.bundles import BundleRequest
from briefd.bundles.model import TIER_ORDER
from briefd.bundles.warned import TARGET_CUT
from briefd.errors import NotFoundError, QueryError
from briefd.retrieval.search import SearchRequest
from briefd.settings import Settings
from tests.conftest import WriteFiles

REFUND_HANDLER = "services/payment-gateway/internal/refunds/handler.go"
BROAD_TASK = "how should the refund endpoint handle errors and retries"
MONEY = "domain/currency-and-rounding.md"
ADR_0004 = "domain/adr/0004-integer-minor-units.md"


def test_a_broad_refs_glob_leaves_room_for_the_ranked_hits(example: Briefd) -> None:
    """conventions/go-services.md governs services/payment-gateway/** and used to fill an
    1,100-token bundle with its generic sections; domain/refunds.md names the refunds package."""
    plain = example.compile_bundle(BundleRequest(BROAD_TASK, max_tokens=1100))
    top_ranked = [(i.doc_path, i.heading_path[-1]) for i in plain.items[:2]]
    assert top_ranked == [
        ("domain/retry-policy.md", "Capture is at most once"),
        ("domain/idempotency.md", "Guidance for client developers"),
    ]

    led = example.compile_bundle(
        BundleRequest(BROAD_TASK, max_tokens=1100, paths=(REFUND_HANDLER,))
    )
    first = led.items[0]
    assert (first.doc_path, first.tier) == ("domain/refunds.md", "governed")
    assert first.reasons == (
        f"refs services/payment-gateway/internal/refunds/** covers {REFUND_HANDLER}",
    )
    assert [(i.doc_path, i.heading_path[-1]) for i in led.items if i.tier == "ranked"][:2] == (
        top_ranked
    )
    broad = [e for e in led.diagnostics.exclusions if e.doc_path == "conventions/go-services.md"]
    # past the governed share; a section the task ranked competes again as a ranked hit
    assert broad and broad[0].reason.startswith(("governed share: ", "does not fit: "))
    assert "conventions/go-services.md" not in {i.doc_path for i in led.items}
    assert sum(i.tokens for i in led.items if i.tier == "governed") <= 1100

    roomy = example.compile_bundle(
        BundleRequest(BROAD_TASK, max_tokens=3000, paths=(REFUND_HANDLER,))
    )
    governed = [i.doc_path for i in roomy.items if i.tier == "governed"]
    assert governed[0] == "domain/refunds.md" and "conventions/go-services.md" in governed
    assert governed == sorted(governed, key=lambda path: path != "domain/refunds.md")
    go = next(i for i in roomy.items if i.doc_path == "conventions/go-services.md")
    assert go.reasons == (f"refs services/payment-gateway/** covers {REFUND_HANDLER}",)


def test_naming_the_code_never_costs_the_bundle_its_best_hits(example: Briefd) -> None:
    """A section of a governing document is claimed by the governed tier; when that tier's
    share of the budget had no room for it, it was dropped ("governed share") and never
    competed as the ranked hit it also is: with the refund handler named, the refunds rules
    the task ranked #2 gave way to a settlement section ranked #7."""
    task = "how long is the refund window for partial refunds"
    plain = example.compile_bundle(BundleRequest(task, max_tokens=1000))
    led = example.compile_bundle(BundleRequest(task, max_tokens=1000, paths=(REFUND_HANDLER,)))
    best = [(i.doc_path, i.heading_path[-1:]) for i in plain.items[:2]]
    assert best == [
        ("domain/refunds.md", ("Refund window",)),
        ("domain/refunds.md", ("Refund rules at a glance",)),
    ]
    shown = {(i.doc_path, i.heading_path[-1:]): (i.tier, i.reasons[0]) for i in led.items}
    assert shown[best[0]][0] == "governed"
    assert shown.get(best[1]) == ("ranked", "ranked #2"), shown
    taken = {i.chunk_id for i in led.items}
    assert not [e for e in led.diagnostics.exclusions if e.chunk_id in taken]
    assert led.tokens <= 1000 * 0.95


def test_document_context_puts_the_dependency_before_any_text_match(example: Briefd) -> None:
    task = "which rounding mode do fee calculations use"
    context = example.compile_bundle(BundleRequest(task, max_tokens=11000, target=MONEY))
    tiers = [i.tier for i in context.items]
    assert [TIER_ORDER[t] for t in tiers] == sorted(TIER_ORDER[t] for t in tiers)
    own = [i for i in context.items if i.doc_path == MONEY]
    assert own == [i for i in context.items if i.tier == "mandatory"]
    assert all(i.reasons == ("target document",) for i in own)
    dependency = [i for i in context.items if i.doc_path == ADR_0004]
    assert dependency and all(i.tier == "structural" for i in dependency)
    assert dependency[0].reasons == (f"depends_on of {MONEY} (front matter)",)
    first_text_match = tiers.index("ranked")
    assert context.items.index(dependency[-1]) < first_text_match
    # a plain search ranks other documents above the ADR for this task: tier beats score
    hits = example.search(SearchRequest(task, top_k=5)).hits
    assert ADR_0004 not in {h.doc_path for h in hits}

    linked = [i for i in context.items if i.tier == "linked"]
    assert linked and all(" from " in i.reasons[0] or "backlink" in i.reasons[0] for i in linked)
    assert any(r.startswith(f"linked from {MONEY}:") for i in linked for r in i.reasons)


def test_context_without_a_task_searches_the_title_and_says_what_is_missing(
    example: Briefd,
) -> None:
    context = example.compile_bundle(BundleRequest("", max_tokens=8000, target=MONEY))
    assert context.target == MONEY and context.items[0].doc_path == MONEY
    assert {i.tier for i in context.items} >= {"mandatory", "structural", "linked"}
    with pytest.raises(NotFoundError, match=r"no document 'domain/nope\.md' in scopes"):
        example.compile_bundle(BundleRequest("", target="domain/nope.md"))
    with pytest.raises(NotFoundError, match="scope 'projects/ledger' is not requested"):
        example.compile_bundle(BundleRequest("", target="projects/ledger/overview.md"))
    ledger = example.compile_bundle(
        BundleRequest("", target="projects/ledger/overview.md", scopes=("all",))
    )
    assert ledger.items[0].doc_path == "projects/ledger/overview.md"


def test_hard_limit_decides_budget_exceeded_for_mandatory_content(example: Briefd) -> None:
    whole = example.compile_bundle(BundleRequest("", max_tokens=8000, target=MONEY))
    mandatory = sum(1 for i in whole.items if i.tier == "mandatory")

    small = example.compile_bundle(BundleRequest("", max_tokens=1000, target=MONEY))
    assert small.tokens > 1000  # the target document is kept whole…
    assert not small.diagnostics.budget_exceeded  # …and a small budget alone never flags it
    assert small.diagnostics.overage == 0 and small.diagnostics.hard_limit == 4000
    assert all(i.tier == "mandatory" for i in small.items)
    tiny = example.compile_bundle(
        BundleRequest("", max_tokens=100, hard_limit=50_000, target=MONEY)
    )
    assert not tiny.diagnostics.budget_exceeded and len(tiny.items) == mandatory

    capped = example.compile_bundle(BundleRequest("", max_tokens=300, hard_limit=900, target=MONEY))
    own = [i.content for i in whole.items if i.tier == "mandatory"]
    held = [i.content for i in capped.items]
    assert capped.tokens <= 900 and not capped.diagnostics.budget_exceeded  # cut to the limit
    assert 0 < len(held) < len(own) and held[:-1] == own[: len(held) - 1]
    assert capped.items[-1].truncated and "truncated:" in held[-1]


def test_a_target_over_the_hard_limit_says_so_and_where_to_read_on(example: Briefd) -> None:
    """B7 kept a target document whole and flagged it: the caller got 1,000 tokens and more
    for a hard_limit of 300. The target now comes from its top as far as the limit holds (here
    none of it: the envelope and the warning take the 300), and a warning says what the answer
    holds and names the get_document call (and the REST route) that reads on in parts; a
    target within the hard limit has none."""
    capped = example.compile_bundle(BundleRequest("", max_tokens=300, hard_limit=300, target=MONEY))
    assert capped.items == () and capped.tokens <= 300
    assert capped.warnings == (
        f"the target {MONEY} is over hard_limit 300 (max_tokens 300): this answer holds none "
        f'of it. Read on with get_document("{MONEY}", scopes=["domain"], start_line=1, '
        f"max_tokens=500) (REST: GET /api/docs/{MONEY}?scopes=domain&start_line=1&"
        "max_tokens=500), which gives the rest in parts, each saying where the next starts; or "
        "raise hard_limit to have it whole",
    )
    within = example.compile_bundle(BundleRequest("", max_tokens=1000, target=MONEY))
    assert within.tokens > 1000 and within.warnings == ()  # over max_tokens, under hard_limit
    part = example.compile_bundle(BundleRequest("", max_tokens=300, hard_limit=900, target=MONEY))
    last = part.items[-1]
    (said,) = part.warnings
    assert f"this answer holds its lines {part.items[0].start_line}-{last.end_line} (" in said
    assert f'the last cut short). Read on with get_document("{MONEY}"' in said
    assert f"start_line={last.start_line}, max_tokens=500)" in said
    listed = example.compile_bundle(
        BundleRequest("", max_tokens=300, hard_limit=900, target=MONEY, mode="manifest")
    )
    assert listed.warnings and [i.chunk_id for i in listed.items] == [
        i.chunk_id
        for i in example.compile_bundle(
            BundleRequest("", max_tokens=300, hard_limit=900, target=MONEY, mode="package")
        ).items
    ]


def test_the_warnings_call_and_route_name_a_path_as_written_and_as_a_url(
    api: Briefd, write_files: WriteFiles
) -> None:
    """The warning's REST route carried the path as it is: a space, a ``#`` (the route ends
    there) or a ``?`` did not reach the document; its get_document call quotes it as JSON."""
    path = 'domain/Gebühren & "Rückbuchung" #2.md'
    write_files({path: "# Gebühren\n\n" + "Fees are charged per capture and refunded. " * 120})
    api.index()
    warned = api.compile_bundle(BundleRequest("", max_tokens=300, hard_limit=300, target=path))
    (said,) = warned.warnings
    assert 'get_document("domain/Gebühren & \\"Rückbuchung\\" #2.md", scopes=["domain"]' in said
    route = "/api/docs/domain/Geb%C3%BChren%20%26%20%22R%C3%BCckbuchung%22%20%232.md"
    assert f"(REST: GET {route}?scopes=domain&start_line=1&max_tokens=500)" in said


def test_a_truncated_sections_call_names_a_path_with_a_quote_as_a_json_string(
    api: Briefd, write_files: WriteFiles
) -> None:
    """The marker under a truncated section wrote its get_document call with the path in
    bare quotes: a file named 'the "big" one.md' gave get_document("domain/the "big" one.md",
    ...), a call no client can make as written. It is a JSON string now, and the call reads the
    section's document."""
    big = 'domain/the "big" one.md'
    write_files(
        {
            big: "# Big\n\n" + "Refunds settle in the ledger every night. " * 150,
            "domain/t.md": '---\ndepends_on: ["domain/the \\"big\\" one.md"]\n---\n# T\n\nSmall.\n',
        }
    )
    api.index()
    context = api.compile_bundle(BundleRequest("", max_tokens=500, target="domain/t.md"))
    (cut,) = [i for i in context.items if i.truncated]
    assert cut.doc_path == big
    call = 'get_document("domain/the \\"big\\" one.md", start_line=1, scopes=["domain"])'
    assert cut.content.endswith(f"read the rest with {call}]")
    path = json.loads(call.removeprefix("get_document(").split(", start_line")[0])
    assert api.document(path, ("domain",), scoped=True).title == "Big"


def test_a_relation_naming_a_section_brings_that_section_first(
    api: Briefd, write_files: WriteFiles
) -> None:
    """``depends_on: ["[[money#Units]]"]`` names one section, but the structural tier took the
    related document's sections in document order: within a budget for one of them the
    context held the introduction the relation did not name, and the Units section was
    excluded as not fitting."""
    write_files(
        {
            "domain/payouts.md": """
                ---
                depends_on: ["[[money#Units]]"]
                ---
                # Payouts

                Payouts run daily.
                """,
            "domain/money.md": "# Money\n\n"
            + "The history of our money handling, told at length. " * 12
            + "\n\n## Units\n\nAmounts are integers in minor units, never floats.\n",
        }
    )
    api.index()
    context = api.compile_bundle(BundleRequest("", max_tokens=300, target="domain/payouts.md"))
    structural = [(i.heading_path, i.truncated) for i in context.items if i.tier == "structural"]
    assert structural[0] == (("Units",), False)
    reasons = {i.reasons for i in context.items if i.tier == "structural"}
    assert reasons == {("depends_on of domain/payouts.md (front matter)",)}


def test_a_second_hop_comes_only_beside_the_section_it_was_reached_from(
    api: Briefd, write_files: WriteFiles
) -> None:
    """A second-hop section was packed when the first-hop section it was reached from did not
    fit: the context held banks.md with the reason "second hop: linked from domain/fx.md:5" and
    no fx.md in it, a chain whose middle the reader cannot see. It is left out, as a related
    hit is without its hit, and said so in the exclusions."""
    write_files(
        {
            "domain/payouts.md": """
                ---
                depends_on: [domain/money.md]
                ---
                # Payouts

                Payouts follow the [[fx]] rates of the day.
                """,
            "domain/money.md": "# Money\n\nAmounts are integers in minor units.\n",
            "domain/fx.md": "# FX\n\n"
            + "Rates come from the reference feed and are cached for the day. " * 30
            + "\n\nBanks: see [[banks]].\n",
            "domain/banks.md": "# Banks\n\nBanks close at 17:00.\n",
        }
    )
    api.index()
    request = BundleRequest("", max_tokens=400, target="domain/payouts.md")
    context = api.compile_bundle(request)
    assert [(i.doc_path, i.tier) for i in context.items] == [
        ("domain/payouts.md", "mandatory"),
        ("domain/money.md", "structural"),
    ]
    fx = next(e for e in context.diagnostics.exclusions if e.doc_path == "domain/fx.md")
    banks = next(e for e in context.diagnostics.exclusions if e.doc_path == "domain/banks.md")
    assert fx.reason.startswith("does not fit: ")
    assert banks.reason == f"linked from {fx.chunk_id}, which is not in the bundle"
    roomy = api.compile_bundle(replace(request, max_tokens=2000))
    rows = [(i.doc_path, i.tier, i.reasons) for i in roomy.items]
    assert rows[2:] == [
        ("domain/fx.md", "linked", ("linked from domain/payouts.md:6",)),
        ("domain/banks.md", "linked", ("second hop: linked from domain/fx.md:5",)),
    ]


def test_parent_relations_always_documents_and_backlinks(
    api: Briefd, write_files: WriteFiles
) -> None:
    write_files(
        {
            "domain/constitution.md": """
                ---
                always: true
                ---
                # Constitution

                Amounts are integers. Never log card numbers.
                """,
            "domain/payouts.md": """
                ---
                parent: "[[money|the money rules]]"
                ---
                # Payouts

                ## Schedule

                Payouts run daily at 06:00 and follow the [[fx#Rates]] of the day.
                """,
            "domain/money.md": "# Money\n\n## Units\n\nMinor units everywhere.\n",
            "domain/fx.md": "# FX\n\n## Rates\n\nECB reference rates, see [[banks]].\n",
            "domain/banks.md": "# Banks\n\n## Cutoffs\n\nBanks close at 17:00.\n",
            "domain/ledger.md": "# Ledger\n\n## Payout postings\n\nSee [[payouts]].\n",
            "domain/weather.md": "# Weather\n\n## Payout weather\n\nPayouts schedule sunshine.\n",
        }
    )
    api.index()
    context = api.compile_bundle(
        BundleRequest("payout schedule", max_tokens=4000, target="domain/payouts.md")
    )
    rows = [(i.doc_path, i.tier, i.reasons[0]) for i in context.items]
    assert rows[0] == ("domain/payouts.md", "mandatory", "target document")
    assert ("domain/constitution.md", "mandatory", "always: true in its front matter") in rows
    assert ("domain/money.md", "structural", "parent of domain/payouts.md (front matter)") in rows
    assert ("domain/fx.md", "linked", "linked from domain/payouts.md:8") in rows
    assert (
        "domain/ledger.md",
        "linked",
        "backlink: domain/ledger.md:5 links to domain/payouts.md",
    ) in rows
    assert ("domain/banks.md", "linked", "second hop: linked from domain/fx.md:5") in rows
    assert rows[-1][:2] == ("domain/weather.md", "ranked")

    bundle = api.compile_bundle(BundleRequest("payout weather", max_tokens=2000))
    assert bundle.items[0].doc_path == "domain/constitution.md"
    assert bundle.items[0].tier == "mandatory"
    document = api.document("domain/payouts.md")
    relation = next(link for link in document.links if link.link.kind == "relation")
    assert (relation.link.display, relation.target_path, relation.link.line) == (
        "parent",
        "domain/money.md",
        2,
    )


def test_package_and_context_responses_reuse_a_base(example: Briefd, settings: Settings) -> None:
    request = BundleRequest("which rounding mode", max_tokens=3000, target=MONEY, mode="package")
    base = example.compile_bundle(request)
    same = example.compile_bundle(replace(request, base=base.bundle_id))
    assert same.delta is not None and not same.recovered
    assert all(e.op == "reuse" for e in same.delta.entries)
    delta = json.loads(same.text)["delta"]
    assert delta["base"] == base.bundle_id and all("item" not in e for e in delta["entries"])

    assert settings.source is not None
    money = settings.source / MONEY
    money.write_text(money.read_text("utf-8").replace("half-even", "half-to-even"), "utf-8")
    example.index()
    changed = example.compile_bundle(replace(request, base=base.bundle_id))
    assert changed.delta is not None
    replaced = [e for e in json.loads(changed.text)["delta"]["entries"] if e["op"] == "replace"]
    assert replaced and all("half-to-even" in e["item"]["content"] for e in replaced)
    assert all(e["item"]["fingerprint"].startswith("sha256:") for e in replaced)
    other = example.compile_bundle(BundleRequest("rounding", target=ADR_0004))
    assert example.compile_bundle(replace(request, base=other.bundle_id)).recovered


def test_tags_keep_search_and_ranked_content_to_tagged_documents(example: Briefd) -> None:
    hits = example.search(SearchRequest("retry", tags=("REFUNDS", "webhooks"), top_k=8)).hits
    assert hits and {h.doc_path for h in hits} <= {
        "domain/refunds.md",
        "domain/merchant-webhooks.md",
    }
    plain = example.compile_bundle(BundleRequest("retry a failed delivery", max_tokens=3000))
    tagged = example.compile_bundle(
        BundleRequest("retry a failed delivery", max_tokens=3000, tags=("webhooks",))
    )
    assert {i.doc_path for i in plain.items} - {"domain/merchant-webhooks.md"}
    assert {i.doc_path for i in tagged.items} == {"domain/merchant-webhooks.md"}
    assert tagged.bundle_id != plain.bundle_id
    with pytest.raises(
        QueryError, match="tag 'webhook' is on no document; known tags: webhooks, 3ds, "
    ):
        example.search(SearchRequest("retry", tags=("webhook",)))


def test_tags_choose_the_related_sections_before_the_cap_not_after(
    api: Briefd, write_files: WriteFiles
) -> None:
    """A tagged hit links to three untagged documents, then to a tagged one: with the cap of
    three related sections taken before the tags filter, none came (the tagged one was the
    fourth); the filter now chooses first, in search and in a bundle's related tier."""
    untagged = {f"domain/{x}.md": f"---\ntags: [other]\n---\n# {x}\n\nPlain {x}.\n" for x in "abc"}
    write_files(
        {
            **untagged,
            "domain/d.md": "---\ntags: [kargo]\n---\n# D\n\nPlain d.\n",
            "domain/k.md": "---\ntags: [kargo]\n---\n# Zebra kargo\n\n"
            "Zebra kargo. See [[a]], [[b]], [[c]], [[d]].\n",
        }
    )
    api.index()
    hits = api.search(SearchRequest("zebra", tags=("kargo",), related=3)).hits
    assert [(h.doc_path, h.related_to is not None) for h in hits] == [
        ("domain/k.md", False),
        ("domain/d.md", True),
    ]
    untagged_hits = api.search(SearchRequest("zebra", related=3)).hits
    assert [h.doc_path for h in untagged_hits] == [f"domain/{x}.md" for x in "kabc"]
    bundle = api.compile_bundle(BundleRequest("zebra", tags=("kargo",)))
    assert [(i.doc_path, i.tier) for i in bundle.items] == [
        ("domain/k.md", "ranked"),
        ("domain/d.md", "related"),
    ]


def test_related_sections_follow_the_links_in_the_order_written(
    api: Briefd, write_files: WriteFiles
) -> None:
    """A line's links were kept wikilinks first, then Markdown links, then reference-style
    ones: with the cap of three related sections (R6), ``[the fee schedule](fees.md)``, the
    first link written, gave way to three wikilinks after it, and a document's links were
    listed out of their order."""
    others = {f"domain/{x}.md": f"# {x}\n\nPlain {x}.\n" for x in ("a", "b", "c", "fees")}
    write_files(
        {
            **others,
            "domain/k.md": "# Zebra\n\nZebra: see [the fee schedule](fees.md), [[a]], [[b]] "
            "and [[c]].\n",
        }
    )
    api.index()
    hits = api.search(SearchRequest("zebra", related=3)).hits
    assert [h.doc_path for h in hits] == [f"domain/{x}.md" for x in ("k", "fees", "a", "b")]
    links = api.document("domain/k.md").links
    assert [r.link.target for r in links] == ["fees.md", "a", "b", "c"]


def test_a_repeated_heading_does_not_lend_its_links_to_the_other(
    api: Briefd, write_files: WriteFiles
) -> None:
    """Related sections (R6) were the links of every section with the hit's heading: a hit
    on the "Notes" of "Card payments" brought what the "Notes" of "Bank transfers" links to,
    in search and in a bundle's related tier. Only the hit's own section's links count."""
    write_files(
        {
            "domain/pay.md": "# Pay\n\n## Card payments\n\nCards.\n\n### Notes\n\n"
            "Zebra capture at shipment.\n\n## Bank transfers\n\nTransfers.\n\n### Notes\n\n"
            "Reversals: see [[reversals]].\n",
            "domain/reversals.md": "# Reversals\n\nHow a transfer is reversed.\n",
            "domain/lead.md": "# Lead\n\nZebra, see [[pay#Notes]] and [[pay#notes-1]].\n",
        }
    )
    api.index()
    hits = api.search(SearchRequest("zebra capture shipment", top_k=1, related=3)).hits
    assert [(h.doc_path, h.heading_path, h.related_to is not None) for h in hits] == [
        ("domain/pay.md", ("Card payments", "Notes"), False)
    ]
    bundle = api.compile_bundle(BundleRequest("zebra capture shipment", max_tokens=3000))
    assert "domain/reversals.md" not in {i.doc_path for i in bundle.items}
    lead = api.search(SearchRequest("zebra see", top_k=1, related=3)).hits
    assert [(h.doc_path, h.heading_path[-1:]) for h in lead] == [
        ("domain/lead.md", ()),
        ("domain/pay.md", ("Notes",)),
        ("domain/pay.md", ("Notes",)),
    ]
    second = api.search(SearchRequest("reversals see", top_k=1, related=3)).hits
    assert [(h.doc_path, h.related_to is not None) for h in second] == [
        ("domain/pay.md", False),
        ("domain/reversals.md", True),
    ]


def test_tags_with_capitals_beyond_ascii_match_however_they_are_typed(
    api: Briefd, write_files: WriteFiles
) -> None:
    """SQLite's lower() folds ASCII only: a tag "Ödeme" or "İade" matched no spelling at all."""
    write_files(
        {
            "domain/iade.md": "---\ntags: [İade, Ödeme, Straße]\n---\n# İade\n\nİade 14 gün.\n",
            "domain/kargo.md": "---\ntags: [kargo]\n---\n# Kargo\n\nKargo iade 3 gün.\n",
        }
    )
    api.index()
    for typed in ("İade", "iade", "IADE", "ödeme", "ÖDEME", "STRASSE"):
        hits = api.search(SearchRequest("iade", tags=(typed,))).hits
        assert {h.doc_path for h in hits} == {"domain/iade.md"}, typed
    bundle = api.compile_bundle(BundleRequest("iade", max_tokens=1000, tags=("ÖDEME",)))
    assert {i.doc_path for i in bundle.items} == {"domain/iade.md"}
    with pytest.raises(QueryError, match=r"known tags: iade, kargo, strasse, ödeme$"):
        api.search(SearchRequest("iade", tags=("nope",)))


def test_a_tag_written_with_obsidians_hash_is_the_same_tag(
    api: Briefd, write_files: WriteFiles
) -> None:
    """``tags: ["#payments"]`` (as Obsidian users write a tag) and ``tags: [payments]`` are
    one tag: the filter ``payments`` left the first document out without a word."""
    write_files(
        {
            "domain/fees.md": '---\ntags: ["#payments"]\n---\n# Fees\n\nA refund fee is 2 EUR.\n',
            "domain/refunds.md": "---\ntags: [payments]\n---\n# Refunds\n\nA refund takes 14 days.\n",
            "domain/cards.md": "---\ntags: [cards]\n---\n# Cards\n\nA refund to a card.\n",
        }
    )
    api.index()
    for typed in ("payments", "#payments", "#Payments"):
        hits = api.search(SearchRequest("refund", tags=(typed,))).hits
        assert {h.doc_path for h in hits} == {"domain/fees.md", "domain/refunds.md"}, typed
    bundle = api.compile_bundle(BundleRequest("refund", max_tokens=1000, tags=("payments",)))
    assert {i.doc_path for i in bundle.items} == {"domain/fees.md", "domain/refunds.md"}
    with pytest.raises(QueryError, match=r"known tags: cards, payments$"):
        api.search(SearchRequest("refund", tags=("nope",)))


def test_a_target_without_text_says_so(api: Briefd, write_files: WriteFiles) -> None:
    """An empty file, or one of front matter only, has no section: its context came back with
    no target item and not a word on why, as if the bundle had gone wrong."""
    write_files(
        {
            "domain/empty.md": "",
            "domain/meta.md": "---\ntitle: Only meta\ntags: [fees]\n---\n",
            "domain/fees.md": "# Fees\n\nA fee is charged per capture; see [[meta]].\n",
        }
    )
    api.index()
    for path in ("domain/empty.md", "domain/meta.md"):
        context = api.compile_bundle(BundleRequest("", target=path))
        assert not any(i.doc_path == path for i in context.items)
        assert context.warnings == (
            f"the target {path} has no text to serve (an empty file, or front matter only): "
            "this context holds only what relates to it",
        )
    fees = api.compile_bundle(BundleRequest("", target="domain/fees.md"))
    assert fees.items[0].doc_path == "domain/fees.md" and fees.warnings == ()


def test_linked_sections_past_the_cap_are_in_the_exclusions(
    api: Briefd, write_files: WriteFiles
) -> None:
    """A document context takes at most ``bundles.linked`` sections by one link; those past
    it were dropped before packing and listed nowhere, so a verbose answer with room to spare
    did not say why the target's ninth and tenth links were missing."""
    links = " ".join(f"[[node{i}]]" for i in range(10))
    files = {"domain/hub.md": f"# Hub\n\n## Links\n\nThe hub links to {links}.\n"}
    for i in range(10):
        files[f"domain/node{i}.md"] = f"# Node {i}\n\n## Body\n\nNode {i} holds a fact.\n"
    write_files(files)
    api.index()
    bundle = api.compile_bundle(BundleRequest("", max_tokens=6000, target="domain/hub.md"))
    linked = [i.doc_path for i in bundle.items if i.tier == "linked"]
    assert linked == [f"domain/node{i}.md" for i in range(8)]
    capped = [(e.doc_path, e.tier, e.reason) for e in bundle.diagnostics.exclusions]
    assert capped == [
        (
            f"domain/node{i}.md",
            "linked",
            "linked from domain/hub.md:5; past the first 8 (bundles.linked)",
        )
        for i in (8, 9)
    ]
    assert bundle.tokens < 6000 * 0.5  # room to spare: the cap, not the budget, left them out


def test_an_unknown_tag_among_hundreds_names_the_nearest_and_counts_the_rest(
    api: Briefd, write_files: WriteFiles
) -> None:
    """A team's knowledge with 400 tags: a mistyped one was refused with all 400 listed on one
    line (3,500 tags made 35 KB), the one meant somewhere in the middle. The error names 30:
    the nearest spellings first, then the others in order, and how many more there are."""
    files = {
        f"domain/d{n}.md": f"---\ntags: [topic{n:03d}, area{n % 100:02d}]\n---\n# D {n}\n\nText.\n"
        for n in range(300)
    }
    write_files({**files, "domain/pay.md": "---\ntags: [payments]\n---\n# Pay\n\nText.\n"})
    api.index()
    with pytest.raises(QueryError) as refused:
        api.search(SearchRequest("text", tags=("paymnets",)))
    message = str(refused.value)
    assert message.startswith("tag 'paymnets' is on no document; known tags: payments, area00, ")
    assert message.endswith(" and 371 more")
    assert len(message.split("known tags: ")[1].split(" and ")[0].split(", ")) == 30


def test_always_documents_that_leave_no_room_say_so_and_what_budget_fits(
    api: Briefd, write_files: WriteFiles
) -> None:
    """A 2,500-token ``always: true`` house-rules document answered "partial refunds" at
    max_tokens 2000 with itself alone: the refund section that matched was left out,
    budget_exceeded false (under the 8,000 hard limit) and no warning, so the caller could
    not tell its task found nothing from a task crowded out. A warning names the documents,
    what they take and the budget at which the best match fits; at that budget it does."""
    rule = "Log the request id, merchant id and amount in minor units; alert within five minutes."
    rules = "\n\n".join(f"## Rule {n}\n\n{rule} (rule {n}) " * 4 for n in range(20))
    write_files(
        {
            "conventions/house-rules.md": f"---\nalways: true\n---\n# House rules\n\n{rules}\n",
            "domain/refunds.md": "# Refunds\n\n## Partial refunds\n\nA partial refund "
            "returns part of a capture; several may follow one capture up to its amount.\n",
        }
    )
    api.index()
    crowded = api.compile_bundle(BundleRequest("partial refunds", max_tokens=2000))
    assert {i.doc_path for i in crowded.items} == {"conventions/house-rules.md"}
    assert not crowded.diagnostics.budget_exceeded
    (said,) = crowded.warnings
    taken = sum(i.tokens for i in crowded.items)
    assert said.startswith(
        f"always: true documents take {taken} tokens (conventions/house-rules.md {taken}) of "
        "max_tokens 2000, so no section that matched fits (1 left out; the best "
        "domain/refunds.md: needs "
    )
    needed = int(said.rsplit("(to ", 1)[1].split(" ", 1)[0])
    roomy = api.compile_bundle(BundleRequest("partial refunds", max_tokens=needed))
    assert "domain/refunds.md" in {i.doc_path for i in roomy.items} and roomy.warnings == ()


def test_an_issue_beside_a_target_cut_at_the_hard_limit_keeps_to_it(example: Briefd) -> None:
    """With an issue and a target over the hard limit, the answer said both that the target
    was cut and that the issue left no room, and the second warning took it over the limit
    (661 tokens for a ceiling of 648, found by test_bundle_invariants): the cut's warning
    alone says why nothing else came."""
    issue = "PAY-1 chargeback evidence deadline\n\nchargeback evidence deadline " * 3
    cut = example.compile_bundle(
        BundleRequest("", max_tokens=300, hard_limit=900, target=MONEY, issue=issue)
    )
    assert cut.items[0].content == issue.strip() and cut.items[-1].truncated
    (said,) = cut.warnings
    assert TARGET_CUT in said and "shorten the issue text" not in said
    assert cut.tokens <= 900 and not cut.diagnostics.budget_exceeded


def test_an_issue_text_that_leaves_no_room_says_so_and_what_budget_fits(
    api: Briefd, write_files: WriteFiles
) -> None:
    """An agent that passed a long issue's text as ``issue`` got that text back alone: the
    refund section its task matched was left out, under the hard limit with no warning. A
    warning says what the issue takes and at which max_tokens a matching section fits."""
    write_files(
        {
            "domain/refunds.md": "# Refunds\n\n## Partial refunds\n\nA partial refund "
            "returns part of a capture; several may follow one capture up to its amount.\n",
        }
    )
    api.index()
    issue = "PAY-9 " + "Partial refunds of a captured payment fail after settlement. " * 175
    crowded = api.compile_bundle(BundleRequest("partial refunds", max_tokens=2000, issue=issue))
    assert [i.tier for i in crowded.items] == ["mandatory"]
    assert not crowded.diagnostics.budget_exceeded
    (said,) = crowded.warnings
    assert said.startswith(
        f"the tracker issue takes {crowded.items[0].tokens} tokens of max_tokens 2000, so no "
        "section that matched fits (1 left out; the best domain/refunds.md: needs "
    )
    assert said.endswith(" or more) or shorten the issue text")
    needed = int(said.rsplit("(to ", 1)[1].split(" ", 1)[0])
    roomy = api.compile_bundle(BundleRequest("partial refunds", max_tokens=needed, issue=issue))
    assert "domain/refunds.md" in {i.doc_path for i in roomy.items} and roomy.warnings == ()
