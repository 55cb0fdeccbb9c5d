from __future__ import annotations

from pathlib import Path

from briefd.api import Briefd
from briefd.bundles import BundleRequest
from briefd.graph.resolve import Catalog, resolve
from briefd.model import Heading, Link
from briefd.retrieval.search import SearchRequest
from tests.conftest import WriteFiles

CATALOG = Catalog.build(
    [
        (
            "domain/refunds.md",
            (Heading(1, "Refunds", None, 1), Heading(2, "Partial refunds", "partial", 5)),
        ),
        ("domain/settlement.md", (Heading(2, "Cutoff times", "cutoff", 3),)),
        ("projects/a/refunds.md", ()),
        ("domain/adr/0002-transactional-outbox.md", (Heading(2, "Why not CDC", None, 9),)),
    ]
)


def _link(
    target: str, fragment: str | None = None, kind: str = "wiki", source: str = "domain/x.md"
) -> Link:
    return Link(source, "S", 1, target, fragment, None, kind)  # type: ignore[arg-type]


def test_by_file_name_heading_anchor_and_slug() -> None:
    assert resolve(_link("settlement", "cutoff"), CATALOG).status == "ok"
    assert resolve(_link("settlement", "Cutoff times"), CATALOG).status == "ok"
    ok = resolve(
        _link(
            "../domain/adr/0002-transactional-outbox.md",
            "why-not-cdc",
            "markdown",
            "conventions/y.md",
        ),
        CATALOG,
    )
    assert (ok.target_path, ok.status) == ("domain/adr/0002-transactional-outbox.md", "ok")
    assert resolve(_link("Transactional Outbox"), CATALOG).status == "broken"
    assert (
        resolve(_link("0002 transactional outbox"), CATALOG).target_path
        == "domain/adr/0002-transactional-outbox.md"
    )


def test_ambiguous_name_prefers_nearest_and_says_so() -> None:
    near = resolve(_link("refunds", source="projects/a/notes.md"), CATALOG)
    assert (near.target_path, near.status) == ("projects/a/refunds.md", "ambiguous")
    assert near.detail == "chose projects/a/refunds.md; also matches domain/refunds.md"


def test_broken_and_bad_anchor() -> None:
    broken = resolve(_link("legacy-settlement-batch"), CATALOG)
    assert (broken.status, broken.detail) == (
        "broken",
        "no document matches 'legacy-settlement-batch'",
    )
    bad = resolve(_link("domain/settlement", "nope"), CATALOG)
    assert (bad.status, bad.detail) == (
        "bad-anchor",
        "domain/settlement.md has no heading or anchor '#nope'",
    )


def test_document_view_has_links_backlinks_and_findings(
    api: Briefd, write_files: WriteFiles
) -> None:
    write_files(
        {
            "domain/a.md": "# A\n\n## One {#dup}\n\nSee [[b]] and [[b#Nope]] and [[gone]].\n\n## Two {#dup}\n\nx\n",
            "domain/b.md": "# B\n\nBack to [A](a.md#one).\n",
            "domain/c.md": "# C\n\nNobody links here.\n",
        }
    )
    api.index()
    view = api.document("domain/a.md")
    assert [(r.link.target, r.target_path, r.status) for r in view.links] == [
        ("b", "domain/b.md", "ok"),
        ("b", "domain/b.md", "bad-anchor"),
        ("gone", None, "broken"),
    ]
    assert [(r.link.source_path, r.link.line, r.link.section) for r in view.backlinks] == [
        ("domain/b.md", 3, "B")
    ]
    found = api.link_findings()
    assert [r.link.target for r in found.broken] == ["gone"]
    assert [r.detail for r in found.unknown_anchors] == [
        "domain/b.md has no heading or anchor '#Nope'"
    ]
    assert found.duplicate_anchors == (("domain/a.md", "dup", (3, 7)),)
    assert found.orphans == ("domain/c.md",)


def test_links_resolve_again_when_target_appears(api: Briefd, write_files: WriteFiles) -> None:
    write_files({"domain/a.md": "# A\n\n[[later]]\n"})
    api.index()
    assert api.document("domain/a.md").links[0].status == "broken"
    write_files({"domain/later.md": "# Later\n"})
    api.index()
    assert api.document("domain/a.md").links[0].target_path == "domain/later.md"


def test_a_relative_link_whose_file_was_renamed_is_broken_not_another_file(
    api: Briefd, write_files: WriteFiles, tmp_path: Path
) -> None:
    """``[refunds](../refunds/overview.md)`` names a path: after its file is renamed the link
    is broken (as on GitHub), not resolved to whichever ``overview.md`` is left (here the
    linking document itself, "ambiguous", which ``briefd links --check`` let through)."""
    write_files(
        {
            "domain/payments/overview.md": "# Payments\n\n## Flow\n\n"
            "[refunds](../refunds/overview.md), [root](domain/refunds/overview.md), "
            "[name](guide.md)\n",
            "domain/refunds/overview.md": "# Refunds\n\n## Rules\n\nx\n",
            "conventions/overview.md": "# Conventions\n\n[guide](guide.md)\n",
            "conventions/guide.md": "# Guide\n\ny\n",
        }
    )
    api.index()
    links = api.document("domain/payments/overview.md").links
    assert [(r.target_path, r.status) for r in links] == [
        ("domain/refunds/overview.md", "ok"),  # from its folder
        ("domain/refunds/overview.md", "ok"),  # from the repository root, as Obsidian writes it
        ("conventions/guide.md", "ok"),  # a file name alone: found anywhere
    ]
    old = tmp_path / "knowledge/domain/refunds/overview.md"
    old.rename(old.with_name("index.md"))
    api.index()
    links = api.document("domain/payments/overview.md").links
    assert [(r.target_path, r.status) for r in links] == [
        (None, "broken"),
        (None, "broken"),
        ("conventions/guide.md", "ok"),
    ]
    assert links[0].detail == "no document matches '../refunds/overview.md'"
    assert api.link_findings().ambiguous == ()


def test_a_repeated_heading_answers_to_githubs_numbered_slug() -> None:
    payments = (
        Heading(1, "Payments", None, 1),
        Heading(2, "Overview", None, 3),
        Heading(2, "Card payments", None, 9),
        Heading(3, "Overview", None, 11),
        Heading(3, "Overview", None, 20),
    )
    catalog = Catalog.build([("domain/payments.md", payments)])

    def status(fragment: str) -> str:
        link = _link("../domain/payments.md", fragment, "markdown", "conventions/y.md")
        return resolve(link, catalog).status

    assert [status("overview"), status("overview-1"), status("overview-2")] == ["ok"] * 3
    assert status("overview-3") == "bad-anchor"  # there are three, numbered up to 2
    assert status("card-payments-1") == "bad-anchor"


def test_relations_written_as_unquoted_wikilinks_are_links(
    api: Briefd, write_files: WriteFiles
) -> None:
    """`depends_on: [[b]]` without quotes is YAML for a list in a list (`- [[c]]` one level
    more): the relation is read, resolved and reported like any link, not dropped with a
    warning."""
    write_files(
        {
            "domain/a.md": "---\ndepends_on: [[b#Rules]]\nrelated:\n  - [[c|C]]\n  - [[gone]]\n"
            "---\n# A\n\nx\n",
            "domain/b.md": "# B\n\n## Rules\n\ny\n",
            "domain/c.md": "# C\n\nz\n",
        }
    )
    api.index()
    view = api.document("domain/a.md")
    assert view.problems == ()
    assert [(r.link.display, r.link.target, r.link.fragment, r.status) for r in view.links] == [
        ("depends_on", "b", "Rules", "ok"),
        ("related", "c", None, "ok"),
        ("related", "gone", None, "broken"),
    ]
    assert [(r.link.source_path, r.link.line) for r in api.link_findings().broken] == [
        ("domain/a.md", 3)
    ]


def test_a_file_name_with_spaces_linked_in_angle_brackets_is_no_orphan(
    api: Briefd, write_files: WriteFiles
) -> None:
    write_files(
        {
            "domain/Retry Policy.md": "# Retry policy\n\n## Soft declines\n\nx\n",
            "domain/index.md": "# Index\n\n[Retries](<Retry Policy.md#soft-declines>) and "
            "[gone](<Old Name.md>).\n",
        }
    )
    api.index()
    found = api.link_findings()
    assert found.orphans == ("domain/index.md",)
    assert [(r.link.target, r.status) for r in found.broken] == [("Old Name.md", "broken")]
    backlinks = api.document("domain/Retry Policy.md").backlinks
    assert [(r.link.source_path, r.link.fragment, r.status) for r in backlinks] == [
        ("domain/index.md", "soft-declines", "ok")
    ]


def test_a_file_outside_every_scope_is_named_as_such() -> None:
    """The root README.md is found by the scan but not indexed: a link to it is no typo."""
    catalog = Catalog.build([("domain/x.md", ())], outside=["README.md", "notes/Retry Plan.md"])
    outside = (
        " exists but is outside every scope (not indexed); link to an indexed document, or add "
        "its folder to 'scopes' in briefd.yaml"
    )
    readme = [_link("../README.md", kind="markdown"), _link("README"), _link("/README.md")]
    for link in [*readme, _link("notes/Retry Plan"), _link("retry plan")]:
        found = resolve(link, catalog)
        assert (found.target_path, found.status) == (None, "broken")
        path = "README.md" if link in readme else "notes/Retry Plan.md"
        assert found.detail == path + outside, link
    assert resolve(_link("READMEE"), catalog).detail == "no document matches 'READMEE'"
    assert resolve(_link("README"), CATALOG).detail == "no document matches 'README'"


def test_a_path_spelled_exactly_wins_over_one_composed_otherwise() -> None:
    """Both spellings of ``café.md`` in one folder (NFC and NFD, possible on Linux): a path
    link reaches the one it spells byte for byte; a name link is ambiguous between them."""
    nfc, nfd = "domain/caf\u00e9.md", "domain/cafe\u0301.md"
    catalog = Catalog.build([(nfc, ()), (nfd, ())])
    assert resolve(_link("caf\u00e9.md", kind="markdown"), catalog).target_path == nfc
    assert resolve(_link("cafe\u0301.md", kind="markdown"), catalog).target_path == nfd
    assert resolve(_link("domain/cafe\u0301"), catalog).target_path == nfd
    assert resolve(_link("caf\u00e9"), catalog).status == "ambiguous"


def test_names_and_headings_match_caseless_in_turkish_and_german(
    api: Briefd, write_files: WriteFiles
) -> None:
    """lower() makes "İade" "i̇ade" (i and a combining dot) and keeps ß: [[İade Politikası]],
    the title as Turkish writes it, reached no iade-politikası.md."""
    write_files(
        {
            "domain/iade-politikası.md": "# İade Politikası\n\n## Süre\n\n14 gün.\n\n"
            "## Şifre Sıfırlama Adımları\n\nE-posta.\n",
            "domain/straßen-größe.md": "# Straßen Größe\n\n## Größe der Straße\n\nGroß.\n",
            "domain/links.md": "# Links\n\n[[İade Politikası]] [[IADE POLITIKASI]] "
            "[[iade politikasi]] [[STRASSEN GRÖSSE#GRÖSSE DER STRASSE]] "
            "[[iade-politikası#ŞİFRE SIFIRLAMA ADIMLARI]]\n",
        }
    )
    api.index()
    view = api.document("domain/links.md")
    assert [(r.target_path, r.status) for r in view.links] == [
        ("domain/iade-politikası.md", "ok"),
        ("domain/iade-politikası.md", "ok"),
        ("domain/iade-politikası.md", "ok"),
        ("domain/straßen-größe.md", "ok"),
        ("domain/iade-politikası.md", "ok"),
    ]
    context = api.compile_bundle(BundleRequest("links", max_tokens=2000, target="domain/links.md"))
    linked = [i.heading_path[-1] for i in context.items if i.tier == "linked"]
    assert "Şifre Sıfırlama Adımları" in linked and "Größe der Straße" in linked


def test_a_bundle_brings_the_repeated_heading_a_numbered_slug_names(
    api: Briefd, write_files: WriteFiles
) -> None:
    """`briefd links` resolved #genel-bakış-1 to the second "Genel bakış", but the bundle's
    linked section was the first one."""
    write_files(
        {
            "domain/tekrar.md": "# Tekrar\n\n## Genel Bakış\n\nBirinci bölüm.\n\n"
            "## Genel bakış\n\nİkinci bölüm.\n",
            "domain/kaynak.md": "# Kaynak\n\nBkz [ikinci](tekrar.md#genel-bakış-1).\n",
        }
    )
    api.index()
    assert [r.status for r in api.document("domain/kaynak.md").links] == ["ok"]
    context = api.compile_bundle(
        BundleRequest("kaynak", max_tokens=1000, target="domain/kaynak.md")
    )
    linked = [(i.heading_path[-1], i.content) for i in context.items if i.tier == "linked"]
    assert linked == [("Genel bakış", "İkinci bölüm.")]


def test_a_link_to_a_heading_inside_a_section_brings_that_section(
    api: Briefd, write_files: WriteFiles
) -> None:
    """#daily-cap names an H4 inside "Limits" (sections are cut at H1-H3): the link is ok, but
    search's related hit and the context's linked section were the document's first section
    ("Intro"); the section that holds the heading comes."""
    write_files(
        {
            "domain/rules.md": "# Rules\n\n## Intro\n\nIntro text.\n\n## Limits\n\n"
            "Limits apply.\n\n#### Daily cap\n\nThe daily cap is 10,000 EUR.\n\n"
            "## Appendix\n\nNothing.\n",
            "domain/hub.md": "# Hub\n\n## Zebra\n\nZebra. See [[rules#Daily cap]].\n",
        }
    )
    api.index()
    assert [r.status for r in api.document("domain/hub.md").links] == ["ok"]
    hits = api.search(SearchRequest("zebra")).hits
    assert [(h.heading, h.related_to is not None) for h in hits] == [
        ("Zebra", False),
        ("Limits", True),
    ]
    context = api.compile_bundle(BundleRequest("zebra", max_tokens=1000, target="domain/hub.md"))
    assert [i.heading_path[-1] for i in context.items if i.tier == "linked"] == ["Limits"]


def test_a_link_to_a_heading_whose_text_is_all_in_its_subsection_brings_the_subsection(
    api: Briefd, write_files: WriteFiles
) -> None:
    """#beta-gamma names an H2 with no text of its own: its text is under the H3 after it.
    The link is ok, but search's related hit and the context's linked section were the section
    before it ("Alpha", which ends above that heading); the H3's section comes, also for
    GitHub's numbered slug of a repeated heading."""
    write_files(
        {
            "domain/ref.md": "# Ref\n\n## Alpha\n\nAlpha body.\n\n## Beta Gamma\n\n"
            "### beta.call()\n\nBeta call body.\n\n## Delta\n\nDelta body.\n\n"
            "## Beta Gamma\n\n### beta.again()\n\nAgain body.\n",
            "domain/hub.md": "# Hub\n\n## Zebra\n\nZebra: see [beta](ref.md#beta-gamma).\n\n"
            "## Yak\n\nYak: see [again](ref.md#beta-gamma-1).\n",
        }
    )
    api.index()
    assert [r.status for r in api.document("domain/hub.md").links] == ["ok", "ok"]
    for query, linked in (("zebra", "beta.call()"), ("yak", "beta.again()")):
        hits = api.search(SearchRequest(query)).hits
        assert [(h.heading, h.related_to is not None) for h in hits] == [
            (query.title(), False),
            (linked, True),
        ]
    context = api.compile_bundle(BundleRequest("zebra", max_tokens=1000, target="domain/hub.md"))
    assert [i.heading_path[-1] for i in context.items if i.tier == "linked"] == [
        "beta.call()",
        "beta.again()",
    ]


def test_a_document_linked_by_reference_style_links_is_no_orphan(
    api: Briefd, write_files: WriteFiles
) -> None:
    write_files(
        {
            "domain/index.md": "# Index\n\nSee [the rules][r] and [old][].\n\n"
            "[r]: rules.md#cut-off\n[old]: ../domain/old-rules.md\n",
            "domain/rules.md": "# Rules\n\n## Cut-off\n\nx\n",
        }
    )
    api.index()
    found = api.link_findings()
    assert found.orphans == ("domain/index.md",)
    assert [(r.link.target, r.link.line, r.detail) for r in found.broken] == [
        ("../domain/old-rules.md", 3, "no document matches '../domain/old-rules.md'")
    ]
    backlinks = api.document("domain/rules.md").backlinks
    assert [(r.link.source_path, r.link.fragment, r.status) for r in backlinks] == [
        ("domain/index.md", "cut-off", "ok")
    ]


def test_a_name_two_files_share_but_for_case_reaches_the_one_spelled_exactly(
    api: Briefd, write_files: WriteFiles
) -> None:
    """``domain/Refunds.md`` beside ``domain/refunds.md`` (two files on Linux): ``[[refunds]]``
    reaches refunds.md, the file it spells letter for letter, not Refunds.md because capitals
    sort first (the lower-case file was an orphan, the linking one linked itself); the link
    stays ambiguous, naming the other file."""
    write_files(
        {
            "domain/Refunds.md": "# Refund rules\n\nSee [[refunds]] for the old text.\n",
            "domain/refunds.md": "# Old refunds\n\nSuperseded by [[Refunds]].\n",
        }
    )
    api.index()
    upper = api.document("domain/Refunds.md").links[0]
    assert (upper.target_path, upper.status) == ("domain/refunds.md", "ambiguous")
    assert upper.detail == "chose domain/refunds.md; also matches domain/Refunds.md"
    lower = api.document("domain/refunds.md").links[0]
    assert lower.target_path == "domain/Refunds.md"
    assert api.link_findings().orphans == ()


def test_a_hugo_ref_to_a_page_bundle_resolves_once_the_bundle_appears(
    api: Briefd, write_files: WriteFiles
) -> None:
    """``{{< ref "/domain/payouts" >}}`` names the section ``domain/payouts/_index.md``: an
    index run that adds it resolves the link again (its file name is no ``payouts``)."""
    write_files({"domain/a.md": '# A\n\nSee {{< ref "/domain/payouts" >}}.\n'})
    api.index()
    assert api.document("domain/a.md").links[0].status == "broken"
    write_files({"domain/payouts/_index.md": "# Payouts\n"})
    api.index()
    assert api.document("domain/a.md").links[0].target_path == "domain/payouts/_index.md"


def test_extensionless_paths_name_pages_and_bundles_and_mdx_is_a_document() -> None:
    catalog = Catalog.build(
        [
            ("domain/fees.md", ()),
            ("domain/payouts/index.md", ()),
            ("conventions/guide.mdx", ()),
        ]
    )
    found = {
        (target, kind): resolve(_link(target, kind=kind), catalog).target_path
        for target, kind in [
            ("fees", "markdown"),
            ("/domain/fees", "markdown"),
            ("payouts", "markdown"),
            ("../conventions/guide", "markdown"),
            ("../conventions/guide.mdx", "markdown"),
            ("guide", "wiki"),
        ]
    }
    assert found == {
        ("fees", "markdown"): "domain/fees.md",
        ("/domain/fees", "markdown"): "domain/fees.md",
        ("payouts", "markdown"): "domain/payouts/index.md",
        ("../conventions/guide", "markdown"): "conventions/guide.mdx",
        ("../conventions/guide.mdx", "markdown"): "conventions/guide.mdx",
        ("guide", "wiki"): "conventions/guide.mdx",
    }
