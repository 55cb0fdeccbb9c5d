from __future__ import annotations

import threading
import time
import unicodedata

import anyio
import httpx2
import pytest
from fastapi.testclient import TestClient
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

from briefd.api import Briefd
from briefd.errors import NotFoundError
from briefd.graph.suggest import DocNames, select, unlinked_mentions
from briefd.service import create_app
from tests.conftest import WriteFiles
from tests.service.conftest import service_config
from tests.service.live import serving


def doc(path: str, names: tuple[str, ...], body: str, links: tuple[str, ...] = ()) -> DocNames:
    return DocNames(path, names, body, 3, frozenset(links))


def test_mentions_in_prose_are_suggested_once_at_the_first_line() -> None:
    fees = doc("domain/fees.md", ("Fees", "Fee calculation"), "# Fees\n")
    flags = doc(
        "conventions/flags.md",
        ("Feature flags",),
        "Intro.\n```\nfee calculation in code\n```\nUse `fee calculation` here.\n"
        "The Fee Calculation runs nightly.\nFee calculation again.\n",
    )
    found = unlinked_mentions([flags], [fees, flags])
    assert [(s.target, s.mention, s.line) for s in found] == [
        ("domain/fees.md", "Fee Calculation", 3 + 5)
    ]
    assert found[0].detail == (
        "mentions 'Fee Calculation' without linking domain/fees.md; add [[domain/fees.md]]"
    )


def test_linked_short_self_and_wikilinked_names_are_not_suggested() -> None:
    glossary = doc("domain/glossary.md", ("Glossary", "PSP"), "# Glossary\n")
    linked = doc("a.md", ("A doc",), "See the Glossary.\n", links=("domain/glossary.md",))
    wiki = doc("b.md", ("B doc",), "See [[Glossary]] and [Glossary](domain/glossary.md).\n")
    short = doc("c.md", ("C doc",), "Our PSP is fine.\n")
    assert unlinked_mentions([linked, wiki, short, glossary], [glossary]) == []


def test_select_filters_dismissed_and_orders_broken_links_first() -> None:
    found = unlinked_mentions(
        [doc("x.md", ("X",), "Mentions Alpha Doc and Beta Doc.\n")],
        [doc("alpha.md", ("Alpha Doc",), ""), doc("beta.md", ("Beta Doc",), "")],
    )
    assert [s.target for s in select(found, set(), None, 10)] == ["alpha.md", "beta.md"]
    assert [s.target for s in select(found, {("x.md", "alpha.md")}, None, 10)] == ["beta.md"]
    assert select(found, set(), "other.md", 10) == []
    assert len(select(found, set(), None, 1)) == 1


def test_names_are_found_as_the_case_blind_match_finds_them_in_any_text() -> None:
    """An ASCII name is found in text with other letters too, matched as regular expressions
    ignore case: "İ" and "ı" are an "i", the Kelvin sign a "k", the long s an "s"; a letter
    joined to the name keeps it from being a mention."""
    kiosk = doc("domain/kiosk.md", ("Kiosk mode",), "")
    kyc = doc("domain/kyc.md", ("Risk limits",), "")
    body = "Ödeme akışı — the \u212aIOSK MODE screen.\nRİSK LİMİTS are daily.\nRisk limitsé no.\n"
    found = unlinked_mentions([doc("domain/pay.md", ("Pay",), body)], [kiosk, kyc])
    assert [(s.target, s.mention, s.line) for s in found] == [
        ("domain/kiosk.md", "\u212aIOSK MODE", 3),
        ("domain/kyc.md", "RİSK LİMİTS", 4),
    ]


def test_dismissed_suggestions_stay_dismissed(write_files: WriteFiles, api: Briefd) -> None:
    write_files(
        {
            "domain/retries.md": "# Retry policy\n\nSee [[missing-doc]]. Settlement matters.\n",
            "domain/settlement.md": "# Settlement\n\nMoney moves.\n",
        }
    )
    api.index()
    assert [(s.kind, s.target) for s in api.suggest_links("domain/retries.md")] == [
        ("broken-link", "missing-doc"),
        ("unlinked-mention", "domain/settlement.md"),
    ]
    with TestClient(create_app(api, service_config(token=None))) as http:
        response = http.post(
            "/api/links/suggestions/dismiss",
            json={"doc_path": "domain/retries.md", "target": "domain/settlement.md"},
        )
    assert [s["target"] for s in response.json()["suggestions"]] == ["missing-doc"]
    assert [s.target for s in api.suggest_links("domain/retries.md")] == ["missing-doc"]


def test_mentions_in_code_blocks_are_not_suggested_as_no_link_there_counts(
    write_files: WriteFiles, api: Briefd
) -> None:
    """Code blocks as the links' own parser finds them: a ```` fence showing ``` examples, a
    ~~~ fence holding a ``` line, indented code; the prose after them still counts, at its
    file line (a form feed in a line does not shift the lines)."""
    write_files(
        {
            "domain/settlement.md": "# Settlement\n\nMoney moves.\n",
            "domain/refunds.md": "# Refunds\n\nMoney goes back.\n",
            "domain/notes.md": (
                "---\ntags: [x]\n---\n# Notes\n\n"
                "````markdown\n```\nexample\n```\nSettlement in an example.\n````\n\n"
                "~~~\n```\n~~~\nPage\x0cbreak.\n\n"
                "    Settlement in indented code.\n\n"
                "Refunds are the topic.\n"
            ),
        }
    )
    api.index()
    found = [(s.target, s.mention, s.line) for s in api.suggest_links("domain/notes.md")]
    assert found == [("domain/refunds.md", "Refunds", 20)]


def test_mentions_in_html_or_obsidian_comments_are_not_suggested(
    write_files: WriteFiles, api: Briefd
) -> None:
    """A name inside a comment no reader sees (``<!-- … -->``, ``%% … %%`` on a line or as a
    block) was suggested as an unlinked mention, at the comment's line; a mermaid ``%%`` in a
    code block opens no comment, and the prose after the comments still counts."""
    write_files(
        {
            "domain/settlement.md": "# Settlement\n\nMoney moves.\n",
            "domain/notes.md": (
                "# Notes\n\n"
                "Text <!-- Settlement later --> here.\n\n"
                "%% Settlement draft %%\n\n"
                "%%\nTODO: Settlement\n\nmore\n%%\n\n"
                "```mermaid\n%% a diagram\n```\n\n"
                "Settlement is the topic.\n"
            ),
        }
    )
    api.index()
    found = [(s.target, s.mention, s.line) for s in api.suggest_links("domain/notes.md")]
    assert found == [("domain/settlement.md", "Settlement", 17)]


def test_code_blocks_are_found_again_when_a_document_changes(
    write_files: WriteFiles, api: Briefd
) -> None:
    """A process keeps each body's code blocks: an edit that moves a mention out of a code
    block (or into one) is seen at the next request, at the mention's new line."""
    write_files(
        {
            "domain/settlement.md": "# Settlement\n\nMoney moves.\n",
            "domain/notes.md": "# Notes\n\n```\nSettlement runs\n```\n",
            "domain/other.md": "# Other\n\n```\nSettlement runs\n```\n",
        }
    )
    api.index()
    assert api.suggest_links(scopes=("all",)) == []
    write_files({"domain/notes.md": "# Notes\n\n```\nx\n```\nSettlement runs\n"})
    api.index()
    assert [(s.doc_path, s.line) for s in api.suggest_links(scopes=("all",))] == [
        ("domain/notes.md", 6)
    ]
    write_files({"domain/notes.md": "# Notes\n\n```\nx\nSettlement runs\n```\n"})
    api.index()
    assert api.suggest_links(scopes=("all",)) == []


def test_dismissing_needs_the_document_in_scope(write_files: WriteFiles, api: Briefd) -> None:
    write_files(
        {
            "projects/pay/notes.md": "# Pay notes\n\nSettlement matters.\n",
            "projects/pay/settlement.md": "# Settlement\n\nMoney moves.\n",
        }
    )
    api.index()
    body = {"doc_path": "projects/pay/notes.md", "target": "projects/pay/settlement.md"}
    with TestClient(create_app(api, service_config(token=None))) as http:
        hidden = http.post("/api/links/suggestions/dismiss", json=body)
        assert hidden.status_code == 400  # none of the default scopes is in this index
        assert hidden.json()["detail"] == (
            "no default scope is in this index (default_scopes: domain, conventions; indexed "
            "scopes: projects/pay): set default_scopes in briefd.yaml (or mark a scopes: rule "
            "default: true), or name scopes (or 'all')"
        )
        assert [s.target for s in api.suggest_links(scopes=("all",))] == [body["target"]]
        listed = {**body, "scopes": [" projects/pay,", ""]}  # read as ?scopes= reads it
        shown = http.post("/api/links/suggestions/dismiss", json=listed)
        assert shown.status_code == 200, shown.json()
    assert shown.json() == {"suggestions": [], "total": 0, "dismissed": 1}  # and said so
    assert api.suggest_links(scopes=("all",)) == []


def test_suggestions_over_hundreds_of_documents_answer_quickly(
    write_files: WriteFiles, api: Briefd
) -> None:
    """Every document names many others (a big team's knowledge): the default scopes' answer
    reads only their documents, and every scope's is found without trying each name on each
    line of each document — also in text that is not all ASCII (a dash, a Turkish letter)."""
    words = ["ledger", "refund", "invoice", "payout", "settlement", "chargeback", "dispute"]
    files = {}
    for i in range(300):
        folder = "domain" if i < 40 else f"projects/p{i % 10}"
        named = " ".join(
            f"Topic {j} {words[j % 7]}." for j in ((i + k) % 300 for k in range(1, 30))
        )
        filler = "\n\n".join(f"Line {n} — the {words[n % 7]} akışı." for n in range(150))
        files[f"{folder}/t{i}.md"] = f"# Topic {i} {words[i % 7]}\n\n{named}\n\n{filler}\n"
    write_files(files)
    api.index()
    started = time.process_time()  # CPU time: a loaded machine (CI's other jobs) adds none
    default = api.suggest_links(limit=1000)
    every = api.suggest_links(limit=100_000, scopes=("all",))
    elapsed = time.process_time() - started
    assert {s.doc_path.split("/")[0] for s in default} == {"domain"}
    assert len(default) == 40 * 29 - sum(1 for i in range(40) for k in range(1, 30) if i + k >= 40)
    assert len(every) == 300 * 29
    assert ("domain/t3.md", "domain/t4.md", "Topic 4 settlement", 3) in {
        (s.doc_path, s.target, s.mention, s.line) for s in default
    }
    assert elapsed < 3, (
        f"{elapsed:.1f} s"
    )  # ~0.4 s here; 7 s when non-ASCII text was regex-searched


def test_names_inside_web_and_mail_addresses_are_no_mentions(
    write_files: WriteFiles, api: Briefd
) -> None:
    """A document's name inside an e-mail address, a URL's query or path, a bare www host or
    an autolink is part of an address: the first mention is the one in prose after them."""
    write_files(
        {
            "domain/settlement.md": "# Settlement\n\nMoney moves.\n",
            "domain/refunds.md": "---\naliases: [refunds]\n---\n# Refund policy\n\nBack.\n",
            "domain/contacts.md": (
                "# Contacts\n\n"
                "Mail settlement@example.com or ops@refunds.example.com for payouts.\n"
                "Dashboard: https://example.com/search?q=refunds&x=1 and www.settlement.io.\n"
                "Autolink <https://docs.example.com/?page=Settlement>, [docs](mailto:refunds@x.io).\n"
                "The Settlement runs nightly; refunds wait for it.\n"
            ),
        }
    )
    api.index()
    found = [(s.target, s.mention, s.line) for s in api.suggest_links("domain/contacts.md")]
    assert found == [("domain/refunds.md", "refunds", 6), ("domain/settlement.md", "Settlement", 6)]


def test_dismissing_what_no_suggestion_targets_is_refused_and_says_what_to_send(
    write_files: WriteFiles, api: Briefd
) -> None:
    """A dismissal naming the mention's text or a mistyped path would stop nothing: it is a
    400 naming the document's targets, and nothing is stored; a suggestion's target, a
    document to be suggested later, or one dismissed again is taken."""
    write_files(
        {
            "domain/retries.md": "# Retry policy\n\nSee [[missing-doc]]. Settlement matters.\n",
            "domain/settlement.md": "# Settlement\n\nMoney moves.\n",
            "domain/fees.md": "# Fees\n\nCharged.\n",
        }
    )
    api.index()
    url = "/api/links/suggestions/dismiss"
    with TestClient(create_app(api, service_config(token=None))) as http:
        for target in ("Settlement", "domain/Settlement.md", "missing"):
            refused = http.post(url, json={"doc_path": "domain/retries.md", "target": target})
            assert refused.status_code == 400, refused.json()
            assert refused.json()["detail"] == (
                f"nothing to dismiss: domain/retries.md has no suggestion with target "
                f"'{target}' (a target is the document to link, as a path, or a broken link's "
                "target as written); its suggestions' targets: missing-doc, "
                "domain/settlement.md. Nothing was stored"
            )
        assert [s.target for s in api.suggest_links("domain/retries.md")] == [
            "missing-doc",
            "domain/settlement.md",
        ]
        for target in ("missing-doc", "domain/fees.md", "missing-doc"):
            taken = http.post(url, json={"doc_path": "domain/retries.md", "target": target})
            assert taken.status_code == 200, taken.json()
    assert [s.target for s in api.suggest_links("domain/retries.md")] == ["domain/settlement.md"]


def test_mentions_in_headings_are_not_suggested(write_files: WriteFiles, api: Briefd) -> None:
    """A heading is no place for a link (it names its section; its anchor is made from its
    text): a name in an ATX or setext heading was suggested at the heading's line. The first
    mention in prose is, at its file line (the front matter counted)."""
    write_files(
        {
            "domain/settlement.md": "# Settlement\n\nMoney moves.\n",
            "domain/refunds.md": "# Refunds\n\nMoney goes back.\n",
            "domain/notes.md": (
                "---\ntags: [x]\n---\n# Settlement notes\n\n## When Settlement runs\n\n"
                "Refunds and settlement\n----------------------\n\n"
                "Nightly: settlement is late.\n"
            ),
        }
    )
    api.index()
    found = [(s.target, s.mention, s.line) for s in api.suggest_links("domain/notes.md")]
    assert found == [("domain/settlement.md", "settlement", 11)]


def test_a_link_by_a_documents_title_or_alias_names_that_document(
    write_files: WriteFiles, api: Briefd
) -> None:
    """Links find files, not titles: a wikilink by a title (any case, ß written ss, a Turkish
    dotted İ lowercased) or a markdown link by an alias is broken, and its suggestion names the
    document so called and a link that reaches it; written so, the link resolves."""
    write_files(
        {
            "domain/strasse.md": "---\ntitle: Hauptstraße Office\n---\n# Office\n\nBerlin.\n",
            "domain/istanbul.md": (
                "---\ntitle: İstanbul Ödeme Merkezi\naliases: [Istanbul Hub]\n---\n# Hub\n\nTRY.\n"
            ),
            "domain/notes.md": (
                "# Notes\n\nSee [[HAUPTSTRASSE-OFFICE]], [[istanbul ödeme merkezi|the hub]]\n"
                "and [our hub](Istanbul%20Hub.md). Also [[Nowhere]].\n"
            ),
        }
    )
    api.index()
    found = [(s.target, s.detail) for s in api.suggest_links("domain/notes.md")]
    assert found == [
        (
            "HAUPTSTRASSE-OFFICE",
            "no document matches 'HAUPTSTRASSE-OFFICE': links name a file, not a title; "
            "domain/strasse.md is called 'Hauptstraße Office': "
            "link it as [[domain/strasse.md|HAUPTSTRASSE-OFFICE]]",
        ),
        (
            "istanbul ödeme merkezi",
            "no document matches 'istanbul ödeme merkezi': links name a file, not a title; "
            "domain/istanbul.md is called 'İstanbul Ödeme Merkezi': "
            "link it as [[domain/istanbul.md|the hub]]",
        ),
        (
            "Istanbul Hub.md",
            "no document matches 'Istanbul Hub.md': links name a file, not a title; "
            "domain/istanbul.md is called 'Istanbul Hub': "
            "link it as [our hub](domain/istanbul.md)",
        ),
        ("Nowhere", "no document matches 'Nowhere'; fix the target or remove the link"),
    ]
    write_files(
        {
            "domain/notes.md": (
                "# Notes\n\nSee [[domain/strasse.md|HAUPTSTRASSE-OFFICE]], "
                "[[domain/istanbul.md|the hub]]\nand [our hub](domain/istanbul.md).\n"
            ),
        }
    )
    api.index()
    assert api.suggest_links("domain/notes.md") == []


def test_a_dismissal_follows_its_documents_when_they_are_renamed(
    write_files: WriteFiles, api: Briefd
) -> None:
    """A file moved as it is (git mv) keeps what was dismissed for it and about it; a new
    document that only mentions the same name is suggested as before."""
    root = write_files(
        {
            "domain/refunds.md": "# Refund policy\n\nAfter Settlement runs.\n",
            "domain/settlement.md": "# Settlement\n\nThe refund policy waits.\n",
        }
    )
    api.index()
    with TestClient(create_app(api, service_config(token=None))) as http:
        for doc_path, target in (
            ("domain/refunds.md", "domain/settlement.md"),
            ("domain/settlement.md", "domain/refunds.md"),
        ):
            body = {"doc_path": doc_path, "target": target}
            assert http.post("/api/links/suggestions/dismiss", json=body).status_code == 200
    assert api.suggest_links() == []
    (root / "domain" / "refunds.md").rename(root / "domain" / "refund-policy.md")
    (root / "domain" / "settlement.md").rename(root / "domain" / "payouts.md")
    write_files({"domain/notes.md": "# Notes\n\nSettlement and refund policy.\n"})
    api.index()
    assert [(s.doc_path, s.target) for s in api.suggest_links()] == [
        ("domain/notes.md", "domain/payouts.md"),
        ("domain/notes.md", "domain/refund-policy.md"),
    ]


def test_a_list_cut_by_limit_says_how_many_there_are(write_files: WriteFiles, api: Briefd) -> None:
    """Five suggestions asked with limit=2: REST's total and the MCP tool's text and
    structured total say there are five, and how to get the rest; a whole list says no more; an
    offset past the end says there are five, not that every mention is linked."""
    write_files(
        {
            **{f"domain/topic-{n}.md": f"# Topic {n}\n\nText.\n" for n in range(1, 6)},
            "domain/notes.md": "# Notes\n\nTopic 1, Topic 2, Topic 3, Topic 4 and Topic 5.\n",
        }
    )
    api.index()
    with TestClient(create_app(api, service_config(token=None))) as http:
        cut = http.get("/api/links/suggestions", params={"limit": 2}).json()
        whole = http.get("/api/links/suggestions", params={"limit": 5}).json()
    assert (len(cut["suggestions"]), cut["total"]) == (2, 5)
    assert (len(whole["suggestions"]), whole["total"]) == (5, 5)

    async def main(url: str) -> list[tuple[str, object]]:
        async with (
            httpx2.AsyncClient(timeout=30) as client,
            Client(streamable_http_client(url, http_client=client)) as mcp,
        ):
            out = []
            for limit, offset in ((2, 0), (5, 0), (2, 9)):
                args = {"limit": limit, "offset": offset}
                result = await mcp.call_tool("suggest_links", args)
                text = result.content[0].text  # type: ignore[union-attr]
                out.append((text, (result.structured_content or {})["total"]))
            return out

    with serving(create_app(api, service_config(token=None))) as base:
        (cut_text, cut_total), (whole_text, whole_total), (past_text, past_total) = anyio.run(
            main, base + "/mcp"
        )
    assert cut_total == whole_total == past_total == 5
    assert cut_text.splitlines()[-1] == (
        "[2 of 5 suggestions shown: call suggest_links with limit=5 (or a doc_path) for the rest]"
    )
    assert len(whole_text.splitlines()) == 5 and "shown" not in whole_text
    # past the end the list is not said to be empty: there are five, from offset 0
    assert past_text == (
        "No link suggestions from offset=9: there are 5; call suggest_links with offset=0 "
        "(or a smaller offset) to read them"
    )


def test_a_name_with_sharp_s_is_found_written_with_ss() -> None:
    """ "Hauptstraße" in capitals is HAUPTSTRASSE, and Swiss German writes Hauptstrasse: both
    name the document, as a link [[hauptstrasse-office]] reaches it."""
    office = doc("domain/strasse.md", ("Hauptstraße Office", "Großkunden"), "")
    for body, mention in (
        ("## HAUPTSTRASSE OFFICE\n", "HAUPTSTRASSE OFFICE"),
        ("Die Hauptstrasse Office hat offen.\n", "Hauptstrasse Office"),
        ("Alle GROSSKUNDEN zahlen.\n", "GROSSKUNDEN"),
        ("Die HAUPTSTRAẞE OFFICE.\n", "HAUPTSTRAẞE OFFICE"),
    ):
        found = unlinked_mentions([doc("domain/x.md", ("X",), body)], [office])
        assert [(s.target, s.mention) for s in found] == [("domain/strasse.md", mention)]


def test_a_name_with_ss_is_found_written_with_sharp_s(write_files: WriteFiles, api: Briefd) -> None:
    """A Swiss page is called "Grosskunden" (Swiss German writes no ß), a German one writes
    "Großkunden" or in capitals "GROẞKUNDEN": search finds either by the other, but the
    mention was not suggested (only a name's ß was also looked for as ss, not the reverse)."""
    write_files(
        {
            "domain/grosskunden.md": "---\ntitle: Grosskunden\n---\n# Grosskunden\n\nZürich.\n",
            "domain/hauptsitz.md": "# Hauptsitz\n\nIn Berlin.\n\nAlle Großkunden zahlen monatlich.\n",
            "domain/vertrag.md": "# Vertrag\n\nFÜR GROẞKUNDEN GILT DAS.\n",
        }
    )
    api.index()
    found = [(s.doc_path, s.target, s.mention, s.line) for s in api.suggest_links()]
    assert found == [
        ("domain/hauptsitz.md", "domain/grosskunden.md", "Großkunden", 5),
        ("domain/vertrag.md", "domain/grosskunden.md", "GROẞKUNDEN", 3),
    ]


def test_a_name_in_the_text_of_a_link_to_elsewhere_is_no_mention(
    write_files: WriteFiles, api: Briefd
) -> None:
    """A link's text is linked already, to what its writer chose: the name inside a wikilink's
    or a markdown link's text (not only right after its bracket), an image's alt text or a
    reference-style link is no mention; the name in the prose after them is."""
    write_files(
        {
            "domain/settlement.md": "# Settlement\n\nMoney moves.\n",
            "domain/lifecycle.md": "# Lifecycle\n\nStates.\n",
            "domain/notes.md": (
                "# Notes\n\n"
                "See [[lifecycle|how settlement works]] and [the Settlement runbook](https://x/r).\n"
                "![a settlement diagram](flow.png), [our settlement rules][rules].\n"
                "Then Settlement runs.\n\n"
                "[rules]: lifecycle.md\n"
            ),
        }
    )
    api.index()
    found = [(s.target, s.mention, s.line) for s in api.suggest_links("domain/notes.md")]
    assert found == [("domain/settlement.md", "Settlement", 5)]


def test_a_link_to_a_heading_its_document_lacks_is_a_broken_link(
    write_files: WriteFiles, api: Briefd
) -> None:
    """`briefd links --check` fails on a link to a missing heading, so suggest_links names it
    (target with its fragment; dismissed by that); a link to a heading that exists, written
    relative with ../ and an anchor, is fine, and one into a scope not requested is not named."""
    write_files(
        {
            "domain/refunds.md": "# Refunds\n\n## Partial refunds\n\nAllowed.\n",
            "projects/pay/notes.md": "# Pay notes\n\n## Setup\n\nDone.\n",
            "domain/sub/notes.md": (
                "# Notes\n\nSee [partial](../refunds.md#partial-refunds), "
                "[[refunds#Full refunds]]\nand [setup](../../projects/pay/notes.md#nope).\n"
            ),
        }
    )
    api.index()
    found = [(s.kind, s.target, s.line, s.detail) for s in api.suggest_links("domain/sub/notes.md")]
    assert found == [
        (
            "broken-link",
            "refunds#Full refunds",
            3,
            "domain/refunds.md has no heading or anchor '#Full refunds'; link one of its "
            "headings, or drop '#Full refunds'",
        )
    ]
    every = api.suggest_links("domain/sub/notes.md", scopes=("all",))
    assert [s.target for s in every] == ["refunds#Full refunds", "../../projects/pay/notes.md#nope"]
    with TestClient(create_app(api, service_config(token=None))) as http:
        body = {"doc_path": "domain/sub/notes.md", "target": "refunds#Full refunds"}
        assert http.post("/api/links/suggestions/dismiss", json=body).json()["suggestions"] == []


def test_a_name_several_documents_share_is_suggested_once_for_the_nearest(
    write_files: WriteFiles, api: Briefd
) -> None:
    """Each project has an "Overview": a plan mentioning it is told to link its own project's
    (the others named in the detail), not every project's; a plan that links one of them, and
    an overview using its own name, are told nothing."""
    write_files(
        {
            **{
                f"projects/{p}/overview.md": f"# Overview\n\nThe overview of {p}.\n"
                for p in ("alpha", "beta", "gamma")
            },
            "projects/beta/plan.md": "# Beta plan\n\nRead the overview first.\n",
            "projects/gamma/plan.md": "# Gamma plan\n\nSee [[overview]]; the overview is short.\n",
        }
    )
    api.index()
    found = [(s.doc_path, s.target, s.detail) for s in api.suggest_links(scopes=("all",))]
    assert found == [
        (
            "projects/beta/plan.md",
            "projects/beta/overview.md",
            "mentions 'overview' without linking projects/beta/overview.md; add "
            "[[projects/beta/overview.md]] (nearest of the documents so called; also "
            "projects/alpha/overview.md, projects/gamma/overview.md)",
        )
    ]


def test_a_link_by_a_title_keeps_its_heading_and_may_start_in_its_folder(
    write_files: WriteFiles, api: Briefd
) -> None:
    """The link the suggestion writes keeps the heading the broken one named, and a target
    written ./name.md is a file name too."""
    write_files(
        {
            "domain/refund-policy.md": (
                "---\naliases: [refunds]\n---\n# Refund policy\n\n## Partial refunds\n\nOK.\n"
            ),
            "domain/notes.md": (
                "# Notes\n\n[partial](./refunds.md#partial-refunds), [[Refunds#Partial refunds]].\n"
            ),
        }
    )
    api.index()
    found = [s.detail.rsplit(": ", 1)[-1] for s in api.suggest_links("domain/notes.md")]
    assert found == [
        "link it as [partial](domain/refund-policy.md#partial-refunds)",
        "link it as [[domain/refund-policy.md#Partial refunds|Refunds]]",
    ]
    write_files(
        {
            "domain/notes.md": (
                "# Notes\n\n[partial](domain/refund-policy.md#partial-refunds), "
                "[[domain/refund-policy.md#Partial refunds|Refunds]].\n"
            )
        }
    )
    api.index()
    assert api.suggest_links("domain/notes.md") == []


def test_a_file_outside_every_scope_is_named_as_there_but_not_indexed(
    write_files: WriteFiles, api: Briefd
) -> None:
    """``archive/old.md`` is in the knowledge folder but in no ``scopes:`` rule: asking for it
    says so, and which setting reads it, as the link check does — not "paths are relative to
    the repository root", which sent the user hunting for a spelling mistake."""
    write_files({"domain/retries.md": "# Retry policy\n\nRetries.\n", "archive/old.md": "# Old\n"})
    api.index()
    said = (
        "archive/old.md exists but is outside every scope (not indexed); add its folder to "
        "'scopes' in briefd.yaml to read it"
    )
    for ask in (
        lambda: api.suggest_links("archive/old.md"),
        lambda: api.document("archive/old.md"),
    ):
        with pytest.raises(NotFoundError) as raised:
            ask()
        assert str(raised.value) == said
    with pytest.raises(NotFoundError) as typo:
        api.document("archive/olds.md")  # no such file: the hints stay as they were
    assert "exists" not in str(typo.value)


def test_a_name_in_japanese_or_chinese_prose_is_a_mention() -> None:
    """Japanese and Chinese put no spaces around a word: a title mentioned inside a sentence
    stood between two letters, was taken for part of a longer word and never suggested."""
    refunds = doc("domain/退款规则.md", ("退款规则",), "# 退款规则\n")
    policy = doc("domain/返金.md", ("返金ポリシー",), "# 返金ポリシー\n")
    guide = doc(
        "conventions/guide.md",
        ("Guide",),
        "请参阅退款规则了解详情。\n詳しくは返金ポリシーを参照してください。\n",
    )
    found = unlinked_mentions([guide], [refunds, policy, guide])
    assert [(s.target, s.mention, s.line) for s in found] == [
        ("domain/退款规则.md", "退款规则", 3),
        ("domain/返金.md", "返金ポリシー", 4),
    ]
    linked = doc("x.md", ("X",), "见[[退款规则]]和[退款规则](domain/退款规则.md)。\n")
    assert unlinked_mentions([linked], [refunds]) == []


def test_a_japanese_or_chinese_title_of_two_characters_is_a_name() -> None:
    """ "返金" (refunds) and "结算" (settlement) are whole titles, two characters each: every
    name shorter than four characters was left out (for "PSP", "API"), so no mention of them
    was ever suggested; a wide character counts two, as a terminal shows it."""
    refunds = doc("domain/返金.md", ("返金",), "# 返金\n")
    settlement = doc("domain/结算.md", ("结算",), "# 结算\n")
    psp = doc("domain/psp.md", ("PSP",), "# PSP\n")
    guide = doc(
        "conventions/guide.md",
        ("Guide",),
        "部分返金も可能です。\n每天结算一次。\nOur PSP settles daily.\n",
    )
    found = unlinked_mentions([guide], [refunds, settlement, psp, guide])
    assert [(s.target, s.mention, s.line) for s in found] == [
        ("domain/返金.md", "返金", 3),
        ("domain/结算.md", "结算", 4),
    ]


def test_a_long_run_of_letters_on_one_line_holds_no_suggestions(
    write_files: WriteFiles, api: Briefd
) -> None:
    """A hex dump or a hash list on one line (21,000 letters, digits, dots and dashes with no
    space) is blanked for addresses in time linear in its length: the user part of an e-mail
    address and a URL's scheme were tried at every one of its letters, each read to the run's
    end (7 s for this document, minutes for a 100 KB line), and the suggestions of every
    document waited for it."""
    dump = "0f" * 7_000 + "a." * 1_750 + "b-" * 1_750
    write_files(
        {
            "domain/settlement.md": "# Settlement\n\nMoney moves.\n",
            "domain/firmware.md": f"# Firmware\n\n{dump}\n\nThe Settlement reads it.\n",
        }
    )
    api.index()
    started = time.perf_counter()
    found = [(s.target, s.mention, s.line) for s in api.suggest_links("domain/firmware.md")]
    elapsed = time.perf_counter() - started
    assert found == [("domain/settlement.md", "Settlement", 5)]
    assert elapsed < 2, f"{elapsed:.1f} s"  # ~0.01 s here


def test_suggestions_past_the_largest_limit_are_read_with_an_offset(
    write_files: WriteFiles, api: Briefd
) -> None:
    """1,205 broken links and limit at most 1,000: the note asked for limit=1000 again, the
    very call it ended, so 205 were never reachable. An offset reads the next page, REST and
    MCP alike, and the note names it; the pages together are the whole list, in its order."""
    lines = "\n".join(f"- see [[nowhere-{n:04d}]]" for n in range(1205))
    write_files({"domain/index.md": f"# Index\n\n{lines}\n"})
    api.index()
    whole = [(s.doc_path, s.target) for s in api.suggest_links(limit=100_000)]
    assert len(whole) == 1205
    with TestClient(create_app(api, service_config(token=None))) as http:
        pages = [
            http.get("/api/links/suggestions", params={"limit": 1000, "offset": at}).json()
            for at in (0, 1000)
        ]
    assert [(len(p["suggestions"]), p["total"]) for p in pages] == [(1000, 1205), (205, 1205)]
    read = [(s["doc_path"], s["target"]) for p in pages for s in p["suggestions"]]
    assert read == whole

    async def main(url: str) -> list[tuple[str, int]]:
        async with (
            httpx2.AsyncClient(timeout=30) as client,
            Client(streamable_http_client(url, http_client=client)) as mcp,
        ):
            out = []
            for offset in (0, 1100):  # the tool lists at most 100 a call
                args = {"limit": 100, "offset": offset}
                result = await mcp.call_tool("suggest_links", args)
                text = result.content[0].text  # type: ignore[union-attr]
                out.append((text, len((result.structured_content or {})["suggestions"])))
            return out

    with serving(create_app(api, service_config(token=None))) as base:
        (first, first_count), (second, second_count) = anyio.run(main, base + "/mcp")
    assert (first_count, second_count) == (100, 100)
    assert first.splitlines()[-1] == (
        "[100 of 1205 suggestions shown: call suggest_links with offset=100, limit=100 "
        "(or a doc_path) for the next]"
    )
    assert second.splitlines()[-1] == (
        "[1101-1200 of 1205 suggestions shown: call suggest_links with offset=1200, limit=5 "
        "(or a doc_path) for the next]"
    )
    assert second.splitlines()[0].startswith(
        "- domain/index.md:1103 broken-link: no document matches 'nowhere-1100'"
    )


def test_the_tool_lists_at_most_a_hundred_and_never_asks_for_more(
    write_files: WriteFiles, api: Briefd
) -> None:
    """An MCP client hands every byte to the model: 1,000 suggestions were 116 KB of text and
    216 KB of JSON (on 3,000 documents), and a list of 150 cut at 20 told the model to call
    again with limit=150. The tool takes at most 100 and names the next page's offset."""
    lines = "\n".join(f"- see [[nowhere-{n:04d}]]" for n in range(150))
    write_files({"domain/index.md": f"# Index\n\n{lines}\n"})
    api.index()

    async def main(url: str) -> list[CallToolResult]:
        async with (
            httpx2.AsyncClient(timeout=30) as client,
            Client(streamable_http_client(url, http_client=client)) as mcp,
        ):
            return [
                await mcp.call_tool("suggest_links", args)
                for args in ({}, {"limit": 1000}, {"limit": 100, "offset": 100})
            ]

    with serving(create_app(api, service_config(token=None))) as base:
        first, over, last = anyio.run(main, base + "/mcp")
    assert first.content[0].text.splitlines()[-1] == (  # type: ignore[union-attr]
        "[20 of 150 suggestions shown: call suggest_links with offset=20, limit=100 "
        "(or a doc_path) for the next]"
    )
    assert over.is_error
    assert over.content[0].text == (  # type: ignore[union-attr]
        "suggest_links: limit: Input should be less than or equal to 100"
    )
    assert len((last.structured_content or {})["suggestions"]) == 50


def test_a_path_copied_decomposed_names_the_document_it_spells(
    write_files: WriteFiles, api: Briefd
) -> None:
    """A doc_path or target copied from a macOS file name comes decomposed (NFD: "o" and a
    combining diaeresis): suggest_links said "no document 'domain/ödeme-süreci.md' …; did you
    mean domain/ödeme-süreci.md?" and dismissing one was refused the same way, as
    get_document finds it; either is the document it spells."""
    payment = "domain/ödeme-süreci.md"
    write_files(
        {
            payment: "---\ntitle: Ödeme süreci\n---\n# Ödeme süreci\n\nİade politikası bkz.\n",
            "domain/iade.md": "---\ntitle: İade Politikası\n---\n# İade\n\nÖDEME SÜRECİ ile.\n",
        }
    )
    api.index()
    typed = unicodedata.normalize("NFD", payment)
    with TestClient(create_app(api, service_config(token=None))) as http:
        found = http.get("/api/links/suggestions", params={"doc_path": typed})
        dismissed = http.post(
            "/api/links/suggestions/dismiss", json={"doc_path": "domain/iade.md", "target": typed}
        )
        after = http.get("/api/links/suggestions", params={"doc_path": "domain/iade.md"})
    assert found.status_code == 200, found.json()["detail"]
    assert [(s["doc_path"], s["target"], s["mention"]) for s in found.json()["suggestions"]] == [
        (payment, "domain/iade.md", "İade politikası")
    ]
    assert dismissed.status_code == 200, dismissed.json()
    assert after.json()["suggestions"] == []


def test_suggestions_hold_up_no_search_while_they_read_every_document(
    write_files: WriteFiles, api: Briefd
) -> None:
    """O4: suggestions read and search the text of every document in their scopes (seconds over
    a 5,000-document knowledge base) and did so under the server's lock: every agent's search,
    bundle and document waited for them (a search sent meanwhile answered after 70 s). They
    read on a connection of their own now, so REST and the MCP tool answer while a request
    holds the lock."""
    write_files(
        {
            "domain/settlement.md": "# Settlement\n\nMoney moves.\n",
            "domain/notes.md": "# Notes\n\nThe Settlement runs daily.\n",
        }
    )
    api.index()
    expected = [("domain/notes.md", "domain/settlement.md")]

    async def by_mcp(url: str) -> list[tuple[str, str]]:
        async with (
            httpx2.AsyncClient(timeout=30) as client,
            Client(streamable_http_client(url, http_client=client)) as mcp,
        ):
            result = await mcp.call_tool("suggest_links", {"scopes": ["all"]})
            found = (result.structured_content or {})["suggestions"]
            return [(s["doc_path"], s["target"]) for s in found]

    answers: list[list[tuple[str, str]]] = []

    def ask(base: str) -> None:
        rest = httpx2.get(base + "/api/links/suggestions", params={"scopes": "all"}, timeout=30)
        answers.append([(s["doc_path"], s["target"]) for s in rest.json()["suggestions"]])
        answers.append(anyio.run(by_mcp, base + "/mcp"))

    app = create_app(api, service_config(token=None))
    # a search (or a long index update) holds the lock
    with serving(app) as base, app.state.briefd.lock:
        asking = threading.Thread(target=ask, args=(base,))
        asking.start()
        asking.join(20)
        assert not asking.is_alive(), "the suggestions waited for the lock"
    assert answers == [expected, expected]
