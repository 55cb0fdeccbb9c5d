"""``briefd links`` as a CI check on a knowledge repository (K5, I7): ``--check`` exits 1 on
broken links and unknown anchors, and 0 on ambiguous links, duplicate anchors and orphans."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from briefd.api import Briefd
from briefd.settings import Settings
from tests.cli.test_cli import briefd


def _knowledge(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return root


def _indexed(tmp_path: Path, files: dict[str, str]) -> tuple[Path, str]:
    source = _knowledge(tmp_path / "knowledge", files)
    db = str(tmp_path / "index.db")
    result = briefd("--db", db, "index", "--source", str(source), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return tmp_path, db


def test_check_fails_on_broken_links_and_unknown_anchors(tmp_path: Path) -> None:
    cwd, db = _indexed(
        tmp_path,
        {
            "domain/a.md": "# A\n\nSee [[nowhere]] and [[b#No Such Heading]].\n",
            "domain/b.md": "# B\n\nBack to [[a]].\n",
        },
    )
    plain = briefd("--db", db, "links", cwd=cwd)
    assert plain.returncode == 0, plain.stderr  # the default stays a report
    checked = briefd("--db", db, "links", "--check", cwd=cwd)
    assert checked.returncode == 1
    assert checked.stdout == plain.stdout  # the same findings, printed as before
    assert "domain/a.md:3 nowhere (no document matches 'nowhere')" in checked.stdout
    assert checked.stderr == (
        "error: links check failed: 1 broken link, 1 unknown anchor; fix them or the "
        "documents they point to\n"
    )
    as_json = briefd("--db", db, "links", "--check", "--json", cwd=cwd)
    assert as_json.returncode == 1
    found = json.loads(as_json.stdout)  # stdout stays the JSON alone
    assert [r["link"]["target"] for r in found["broken"]] == ["nowhere"]
    assert [r["link"]["fragment"] for r in found["unknown_anchors"]] == ["No Such Heading"]


def test_check_passes_on_orphans_ambiguity_and_duplicate_anchors(tmp_path: Path) -> None:
    cwd, db = _indexed(
        tmp_path,
        {
            "domain/a.md": "# A\n\n## One {#x}\n\n## Two {#x}\n\nSee [[c]].\n",
            "domain/c.md": "# C\n",
            "conventions/c.md": "# Other C\n",
            "domain/lonely.md": "# Lonely\n",
        },
    )
    checked = briefd("--db", db, "links", "--check", cwd=cwd)
    assert checked.returncode == 0, checked.stderr
    assert checked.stderr == ""
    assert "ambiguous links: 1" in checked.stdout
    assert "duplicate anchors: 1" in checked.stdout
    assert "domain/lonely.md" in checked.stdout  # an orphan: reported, not failed


def test_a_link_to_a_file_outside_every_scope_says_so(tmp_path: Path) -> None:
    """The root README.md is not indexed: the link is still broken for briefd, but its
    author learns the file exists. Adding or removing only that file (no document changes)
    updates the finding on the next ``briefd index``."""
    cwd, db = _indexed(tmp_path, {"domain/a.md": "# A\n\nSee [the readme](../README.md).\n"})
    source = tmp_path / "knowledge"
    missing = "domain/a.md:3 ../README.md (no document matches '../README.md')"
    assert missing in briefd("--db", db, "links", cwd=cwd).stdout
    (source / "README.md").write_text("# The knowledge repository\n", encoding="utf-8")
    again = briefd("--db", db, "index", "--source", str(source), cwd=cwd)
    assert again.returncode == 0, again.stderr
    checked = briefd("--db", db, "links", "--check", cwd=cwd)
    assert checked.returncode == 1  # briefd cannot follow it: still a broken link
    assert (
        "domain/a.md:3 ../README.md (README.md exists but is outside every scope (not indexed); "
        "link to an indexed document, or add its folder to 'scopes' in briefd.yaml)"
    ) in checked.stdout
    (source / "README.md").unlink()
    assert briefd("--db", db, "index", "--source", str(source), cwd=cwd).returncode == 0
    assert missing in briefd("--db", db, "links", cwd=cwd).stdout


def test_links_inside_html_comments_are_not_links(tmp_path: Path) -> None:
    """A commented-out link (``<!-- [[old]] -->``, a comment block, a comment running over two
    lines of a paragraph) is not shown by any renderer: it is neither reported broken, which
    failed ``--check``, nor followed; the links beside it are, at their own lines."""
    cwd, db = _indexed(
        tmp_path,
        {
            "domain/a.md": (
                "# A\n\n"
                "See [[b]] <!-- and [[gone]] --> and [b](b.md).\n\n"
                "<!--\nTODO: [[draft]]\n\n[old](old.md)\n-->\n\n"
                "Text <!-- [[half\nway]] [x](x.md) --> then [[b#Two]].\n\n"
                "Code `<!--` is no comment: [[b]].\n"
            ),
            "domain/b.md": "# B\n\n## Two\n",
        },
    )
    checked = briefd("--db", db, "links", "--check", cwd=cwd)
    assert checked.returncode == 0, checked.stdout
    assert "broken links: 0" in checked.stdout
    doc = json.loads(briefd("--db", db, "doc", "domain/a.md", "--json", cwd=cwd).stdout)
    got = [(r["link"]["line"], r["link"]["target"], r["link"]["fragment"]) for r in doc["links"]]
    assert got == [(3, "b", None), (3, "b.md", None), (12, "b", "Two"), (14, "b", None)]


def test_links_inside_obsidian_comments_are_not_links(tmp_path: Path) -> None:
    """A link inside an Obsidian comment (``%% [[old]] %%`` on a line, or a ``%%`` block over
    several lines and paragraphs) is not rendered by Obsidian, but was reported broken
    (failing ``--check``) and listed among the document's links; the links beside it count,
    and ``%%`` in a code span or block starts no comment."""
    cwd, db = _indexed(
        tmp_path,
        {
            "domain/a.md": (
                "# A\n\n"
                "See [[b]] %% and [[gone]] %% and [b](b.md).\n\n"
                "%%\nTODO: [[draft]]\n\n[old](old.md)\n%%\n\n"
                "Code `%%` is no comment: [[b#Two]].\n\n"
                "```\n%%\n```\n\n"
                "Then [[b]].\n"
            ),
            "domain/b.md": "# B\n\n## Two\n",
        },
    )
    checked = briefd("--db", db, "links", "--check", cwd=cwd)
    assert checked.returncode == 0, checked.stdout
    assert "broken links: 0" in checked.stdout
    doc = json.loads(briefd("--db", db, "doc", "domain/a.md", "--json", cwd=cwd).stdout)
    got = [(r["link"]["line"], r["link"]["target"], r["link"]["fragment"]) for r in doc["links"]]
    assert got == [(3, "b", None), (3, "b.md", None), (11, "b", "Two"), (17, "b", None)]


def test_a_link_out_of_the_knowledge_folder_says_so(tmp_path: Path) -> None:
    """Knowledge kept in a code repository links the repository's own files
    (``../../CONTRIBUTING.md``): briefd cannot follow such a link, and "no document matches"
    read as a typo of a file its author can open; the report says where the link leads."""
    (tmp_path / "CONTRIBUTING.md").write_text("# Contributing\n", encoding="utf-8")
    cwd, db = _indexed(
        tmp_path,
        {
            "domain/a.md": (
                "---\ndepends_on: ../../CONTRIBUTING.md\n---\n# A\n\n"
                "See [how](../../CONTRIBUTING.md#setup) and [[../../CONTRIBUTING]].\n"
            ),
        },
    )
    checked = briefd("--db", db, "links", "--check", cwd=cwd)
    assert checked.returncode == 1  # still broken for briefd
    said = (
        "'../../CONTRIBUTING.md' leads out of the knowledge folder (to ../CONTRIBUTING.md from "
        "its root), where briefd reads nothing; link to an indexed document, or move the file in"
    )
    assert f"domain/a.md:2 ../../CONTRIBUTING.md ({said})" in checked.stdout
    assert f"domain/a.md:6 ../../CONTRIBUTING.md ({said})" in checked.stdout
    assert "domain/a.md:6 ../../CONTRIBUTING ('../../CONTRIBUTING' leads out" in checked.stdout
    assert "no document matches" not in checked.stdout


def test_a_wikilink_in_a_table_cell_with_its_pipe_escaped_is_its_target(tmp_path: Path) -> None:
    r"""In a table the ``|`` of ``[[target|text]]`` would end the cell, so Obsidian writes
    ``[[target\|text]]``: the name was read with the backslash (``b\``), a broken link that
    failed ``--check``, and the document it names lost its backlink."""
    cwd, db = _indexed(
        tmp_path,
        {
            "domain/a.md": (
                "# A\n\n| topic | see |\n|---|---|\n"
                "| rules | [[b\\|the rules]] |\n| limits | [[b#Two\\|the second]] |\n"
            ),
            "domain/b.md": "# B\n\n## Two\n\ntext\n",
        },
    )
    checked = briefd("--db", db, "links", "--check", cwd=cwd)
    assert checked.returncode == 0, checked.stdout
    doc = json.loads(briefd("--db", db, "doc", "domain/b.md", "--json", cwd=cwd).stdout)
    got = [
        (r["link"]["line"], r["link"]["target"], r["link"]["fragment"], r["link"]["display"])
        for r in doc["backlinks"]
    ]
    assert got == [(5, "b", None, "the rules"), (6, "b", "Two", "the second")]


def test_a_wikilink_to_an_attachment_is_no_broken_link(tmp_path: Path) -> None:
    """An Obsidian vault embeds its images and PDFs by wikilink (``![[diagram.png]]``,
    ``[[spec.pdf]]``). briefd indexes Markdown only, so each was "no document matches" and
    failed ``--check``, where a Markdown link to the same file is left alone; a name with a dot
    that is a document's (``[[release-1.2]]``) stays a link."""
    cwd, db = _indexed(
        tmp_path,
        {
            "domain/a.md": (
                "# A\n\n![[diagram.png]] ![[Flow Chart.PNG|300]] [[spec.pdf|the spec]] "
                "[[board.canvas]] [[release-1.2]] ![pic](diagram.png)\n"
            ),
            "domain/release-1.2.md": "# Release 1.2\n",
        },
    )
    checked = briefd("--db", db, "links", "--check", cwd=cwd)
    assert checked.returncode == 0, checked.stdout
    assert "broken links: 0" in checked.stdout
    doc = json.loads(briefd("--db", db, "doc", "domain/a.md", "--json", cwd=cwd).stdout)
    assert [(r["link"]["target"], r["target_path"]) for r in doc["links"]] == [
        ("release-1.2", "domain/release-1.2.md")
    ]


def test_doc_shows_the_relations_its_front_matter_declares(tmp_path: Path) -> None:
    """``briefd doc`` shows "a document with its front matter": tags were shown, but not
    ``depends_on``/``parent``… nor ``always``; its links from them were plain links, and a
    backlink from another document's front matter read ``b.md:2 ()``."""
    cwd, db = _indexed(
        tmp_path,
        {
            "domain/a.md": (
                "---\ntags: [pay]\ndepends_on:\n  - b\n  - c\nparent: b\nalways: true\n---\n"
                "# A\n\nSee [[b]].\n"
            ),
            "domain/b.md": "---\nrelated: [[a]]\n---\n# B\n",
            "domain/c.md": "# C\n",
        },
    )
    shown = briefd("--db", db, "doc", "domain/a.md", cwd=cwd).stdout
    head = shown.split("\n\n", 1)[0].splitlines()
    assert head[1:] == ["title: A", "tags: pay", "depends_on: b, c", "parent: b", "always: true"]
    links = shown.split("links (4):\n", 1)[1].split("backlinks", 1)[0].splitlines()
    assert links == [
        "  line 3: depends_on: b → domain/b.md",
        "  line 3: depends_on: c → domain/c.md",
        "  line 6: parent: b → domain/b.md",
        "  line 11: b → domain/b.md",
    ]
    assert shown.endswith("backlinks (1):\n  domain/b.md:2 (front matter: related)\n")


def test_a_markdown_link_whose_text_wraps_is_a_link(tmp_path: Path) -> None:
    """Hard-wrapped prose wraps a link's text (``the [retry\\npolicy](retry.md)``), which
    CommonMark and GitHub read as one link; briefd read none: the linked document was an
    orphan, without the backlink, and a broken one was never reported."""
    cwd, db = _indexed(
        tmp_path,
        {
            "domain/a.md": (
                "# A\n\nCaptures follow the [retry\npolicy](retry.md#Backoff) and the [old\n"
                "rules](old-rules.md); a blank line ends one: [no\n\nlink](retry.md).\n"
            ),
            "domain/retry.md": "# Retry\n\n## Backoff\n\ntext\n",
        },
    )
    shown = briefd("--db", db, "links", cwd=cwd).stdout
    assert "domain/a.md:4 old-rules.md (no document matches 'old-rules.md')" in shown
    assert "domain/retry.md" not in shown.split("orphans", 1)[1]
    doc = json.loads(briefd("--db", db, "doc", "domain/retry.md", "--json", cwd=cwd).stdout)
    assert [
        (r["link"]["line"], r["link"]["fragment"], r["link"]["display"], r["status"])
        for r in doc["backlinks"]
    ] == [(3, "Backoff", "retry policy", "ok")]


def test_a_heading_named_by_its_html_anchor_or_rendered_slug(tmp_path: Path) -> None:
    """Headings give themselves a stable name in HTML (``## Limits <a name="limits"></a>``,
    ``## <a id="fees"></a> Fees <sup>beta</sup>``), and GitHub's slug drops the tags
    (``#fees-beta``): each such link was an unknown anchor failing ``--check``, and the
    context's linked section was the document's first instead of the one named."""
    cwd, db = _indexed(
        tmp_path,
        {
            "domain/a.md": (
                "# A\n\nSee [limits](b.md#limits), [fees](b.md#fees), [beta](b.md#fees-beta) "
                "and [[b#FEES]].\n"
            ),
            "domain/b.md": (
                '# B\n\n## Intro\n\nFirst.\n\n## Limits <a name="limits"></a>\n\nAt most 3.\n\n'
                '## <a id="fees"></a> Fees <sup>beta</sup>\n\nTwo percent.\n'
            ),
        },
    )
    checked = briefd("--db", db, "links", "--check", cwd=cwd)
    assert checked.returncode == 0, checked.stdout
    assert "unknown anchors: 0" in checked.stdout
    context = briefd("--db", db, "context", "domain/a.md", "--mode", "manifest", cwd=cwd)
    items = json.loads(context.stdout)["items"]
    linked = [(i["location"]["start_line"], i["reasons"]) for i in items if i["tier"] == "linked"]
    assert sorted(linked) == [
        (7, ["linked from domain/a.md:3"]),
        (11, ["linked from domain/a.md:3"]),
    ]


def test_an_obsidian_block_reference_names_its_block(tmp_path: Path) -> None:
    """``[[b#^limits-2]]`` links to the block that ends `` ^limits-2`` (Obsidian): every such
    link was an unknown anchor failing ``--check``, and the context's linked section was the
    document's first instead of the block's. A block id nobody wrote is still reported."""
    cwd, db = _indexed(
        tmp_path,
        {
            "domain/a.md": "# A\n\nSee [[b#^limits-2]], and [[b#^gone]].\n",
            "domain/b.md": (
                "# B\n\n## Intro\n\nFirst. ^intro\n\n## Limits\n\n| limit | value |\n"
                "|---|---|\n| daily | 3 |\n\n^limits-2\n"
            ),
        },
    )
    checked = briefd("--db", db, "links", "--check", cwd=cwd)
    assert checked.returncode == 1
    assert "unknown anchors: 1\n" in checked.stdout, checked.stdout
    assert "domain/b.md has no heading or anchor '#^gone'" in checked.stdout
    assert "^limits-2" not in checked.stdout
    context = briefd("--db", db, "context", "domain/a.md", "--mode", "manifest", cwd=cwd)
    items = json.loads(context.stdout)["items"]
    linked = [i["location"]["start_line"] for i in items if i["tier"] == "linked"]
    assert 7 in linked, items  # the Limits section (the unknown block brings the first, 3)


def test_a_block_after_a_line_separator_is_the_block_linked(tmp_path: Path) -> None:
    """A paragraph pasted from a web page holds U+2028 (LINE SEPARATOR) or U+0085: block ids
    were found on lines counted with str.splitlines, which ends a line there too, so every
    block after it was that many lines further down: ``[[b#^cap-3]]`` brought the next
    section."""
    cwd, db = _indexed(
        tmp_path,
        {
            "domain/a.md": "# A\n\nSee [[b#^cap-3]].\n",
            "domain/b.md": (
                "# B\n\n## Intro\n\nPasted\u2028from\u2028a page\u0085here.\n\n"
                "## Limits\n\nThree a day. ^cap-3\n\n## Fees\n\nTwo percent.\n\nNo more.\n"
            ),
        },
    )
    context = briefd("--db", db, "context", "domain/a.md", "--mode", "manifest", cwd=cwd)
    items = json.loads(context.stdout)["items"]
    linked = [i["location"]["start_line"] for i in items if i["tier"] == "linked"]
    assert linked == [7], items  # the Limits section, lines 7-9; not Fees (11-15)


def test_links_to_a_superseded_document_are_reported_but_do_not_fail_the_check(
    tmp_path: Path,
) -> None:
    """A current document that still links to the old ADR sends its readers to the replaced
    text; the old ADR's own links, and the new one's ``supersedes`` and links to it, are
    history and not reported."""
    cwd, db = _indexed(
        tmp_path,
        {
            "domain/adr-1.md": "# ADR 1\n\nRetry five times; see [[guide]].\n",
            "domain/adr-2.md": (
                "---\nsupersedes: adr-1.md\n---\n# ADR 2\n\nRetry three times (was [[adr-1]]).\n"
            ),
            "domain/guide.md": "# Guide\n\nRetries: [ADR 1](adr-1.md#adr-1) and [[adr-2]].\n",
        },
    )
    checked = briefd("--db", db, "links", "--check", cwd=cwd)
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.endswith(
        "links to superseded documents: 1\n"
        "  domain/guide.md:3 links to domain/adr-1.md, superseded by domain/adr-2.md\n"
    ), checked.stdout
    data = json.loads(briefd("--db", db, "links", "--json", cwd=cwd).stdout)
    assert [r["link"]["source_path"] for r in data["to_superseded"]] == ["domain/guide.md"]


def test_an_obsidian_nested_heading_link_names_the_subheading(tmp_path: Path) -> None:
    """Obsidian links a subheading through its headings, ``[[b#Limits#Daily]]``: an unknown
    anchor failing ``--check``, and the context's linked section the document's first. A
    chain the headings do not make (Daily is not under Fees) is still reported."""
    cwd, db = _indexed(
        tmp_path,
        {
            "domain/a.md": "# A\n\nSee [[b#Limits#Daily]], and [[b#Fees#Daily]].\n",
            "domain/b.md": "# B\n\n## Fees\n\nTwo.\n\n## Limits\n\n### Daily\n\nThree.\n",
        },
    )
    checked = briefd("--db", db, "links", "--check", cwd=cwd)
    assert "unknown anchors: 1\n" in checked.stdout, checked.stdout
    assert "domain/b.md has no heading or anchor '#Fees#Daily'" in checked.stdout
    context = briefd("--db", db, "context", "domain/a.md", "--mode", "manifest", cwd=cwd)
    items = json.loads(context.stdout)["items"]
    assert 9 in [i["location"]["start_line"] for i in items if i["tier"] == "linked"], items


def test_a_markdown_link_with_parentheses_in_its_destination_or_title(tmp_path: Path) -> None:
    """CommonMark (and GitHub) take balanced parentheses in a bare destination
    (``[old fees](fees_(2023).md)``, ``fees%20(2023).md``) and in a title (``"ADR (draft)"``);
    briefd cut the destination at the first ``)`` or gave up on the title, so the link was not
    read at all: its document an orphan, a broken one never reported."""
    cwd, db = _indexed(
        tmp_path,
        {
            "domain/a.md": (
                "# A\n\n[old fees](fees_(2023).md), [same](fees_%282023%29.md#Card), "
                '[draft](adr.md "ADR (draft)") and [gone](gone_(1).md).\n'
            ),
            "domain/fees_(2023).md": "# Fees\n\n## Card\n\ntext\n",
            "domain/adr.md": "# ADR\n",
        },
    )
    shown = briefd("--db", db, "links", cwd=cwd).stdout
    assert "broken links: 1\n  domain/a.md:3 gone_(1).md (no document matches" in shown
    assert "orphans (no inbound links): 1\n  domain/a.md\n" in shown


def test_doc_says_a_link_naming_its_own_document_whole_is_to_itself(tmp_path: Path) -> None:
    """A link naming the document itself (``[[a]]``, ``[here](a.md)``, ``related: a``) was
    shown ``→ its own section`` as ``[[#Heading]]`` is, as if it named one of its sections."""
    cwd, db = _indexed(
        tmp_path,
        {"domain/a.md": "---\nrelated: a\n---\n# A\n\n## Two\n\n[[a]], [here](a.md), [[#Two]].\n"},
    )
    shown = briefd("--db", db, "doc", "domain/a.md", cwd=cwd).stdout
    links = shown.split("links (4):\n", 1)[1].split("backlinks", 1)[0].splitlines()
    assert links == [
        "  line 2: related: a → itself",
        "  line 8: a → itself",
        "  line 8: a.md → itself",
        "  line 8: #Two → its own section",
    ]


def test_an_image_or_brackets_inside_a_link_text_keep_it_a_link(tmp_path: Path) -> None:
    """A diagram that links to its design document (``[![flow](flow.png)](design.md)``) or a
    link text holding brackets (``[see [1]](notes.md)``) is a link for CommonMark and GitHub;
    briefd read none: the document an orphan, a broken one never reported."""
    cwd, db = _indexed(
        tmp_path,
        {
            "domain/a.md": ("# A\n\n[![the flow](flow.png)](design.md) and [see [1]](gone.md).\n"),
            "domain/design.md": "# Design\n",
        },
    )
    shown = briefd("--db", db, "links", cwd=cwd).stdout
    assert "broken links: 1\n  domain/a.md:3 gone.md (no document matches 'gone.md')" in shown
    assert "orphans (no inbound links): 1\n  domain/a.md\n" in shown


def test_a_path_link_off_only_in_letter_case_names_the_file(tmp_path: Path) -> None:
    """``[policy](../Refund-Policy.md)`` for ``domain/refund-policy.md`` opens on macOS, where
    it was written, but reaches nothing for git, GitHub and briefd: "no document matches"
    read as a missing file; the report names the file the link misspells (if the linking
    document's readers may see it)."""
    cwd, db = _indexed(
        tmp_path,
        {
            "domain/refund-policy.md": "# Refund policy\n\n## Late refunds\n\nRules.\n",
            "domain/rules/cards.md": (
                "# Cards\n\nSee [policy](../Refund-Policy.md#late-refunds), "
                "[[Domain/Refund-Policy]] and [gone](../gone.md).\n"
                "[hidden](../../projects/b/Secret.md)\n"
            ),
            "projects/b/secret.md": "# Secret\n\nOnly project b's readers see this.\n",
        },
    )
    checked = briefd("--db", db, "links", "--check", cwd=cwd)
    assert checked.returncode == 1  # still broken: git and GitHub tell the files apart
    case = (
        "differs only in letter case, which git, GitHub and briefd tell apart (a macOS or "
        "Windows editor does not); spell the link as the file is named"
    )
    out = checked.stdout
    assert (
        "domain/rules/cards.md:3 ../Refund-Policy.md (no document matches "
        f"'../Refund-Policy.md': domain/refund-policy.md {case})"
    ) in out
    assert (
        "domain/rules/cards.md:3 Domain/Refund-Policy (no document matches "
        f"'Domain/Refund-Policy': domain/refund-policy.md {case})"
    ) in out
    assert "domain/rules/cards.md:3 ../gone.md (no document matches '../gone.md')" in out
    # another project's document is never named to the readers of this one
    hidden = "../../projects/b/Secret.md"
    assert f"domain/rules/cards.md:4 {hidden} (no document matches '{hidden}')" in out


def test_a_link_from_the_top_of_the_code_repository_reaches_the_document(
    tmp_path: Path,
) -> None:
    """Knowledge kept in a code repository's ``docs/``: ``[fees](/docs/domain/fees.md)`` is a
    link GitHub follows (a leading ``/`` is the repository's top), and ``[[docs/domain/fees]]``
    one an Obsidian vault opened there writes; both were broken for briefd and failed
    ``briefd links --check``. A path from the knowledge folder's own root still resolves."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    docs = _knowledge(
        tmp_path / "docs",
        {
            "domain/fees.md": "# Fees\n\n## Late fees {#late}\n\n5 EUR.\n",
            "domain/refunds.md": (
                "# Refunds\n\nSee [late fees](/docs/domain/fees.md#late), "
                "[[docs/domain/fees#Late fees]] and [fees](/domain/fees.md).\n"
            ),
        },
    )
    db = str(tmp_path / "index.db")
    assert briefd("--db", db, "index", "--source", str(docs), cwd=tmp_path).returncode == 0
    checked = briefd("--db", db, "links", "--check", "--json", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout
    assert json.loads(checked.stdout)["broken"] == []
    shown = briefd("--db", db, "doc", "domain/refunds.md", cwd=tmp_path).stdout
    assert "line 3: /docs/domain/fees.md#late → domain/fees.md\n" in shown
    assert "line 3: docs/domain/fees#Late fees → domain/fees.md\n" in shown
    assert "line 3: /domain/fees.md → domain/fees.md\n" in shown


def test_a_link_from_the_top_of_the_code_repository_to_its_other_files_says_so(
    tmp_path: Path,
) -> None:
    """``[readme](/README.md)`` in a code repository's ``docs/`` names the repository's
    README, which briefd does not read: "no document matches '/README.md'" read as a typo,
    where ``../../README.md`` said where it leads. A path the knowledge's own top folders
    start is still read from the knowledge root."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "README.md").write_text("# The service\n", encoding="utf-8")
    docs = _knowledge(
        tmp_path / "docs",
        {
            "domain/refunds.md": (
                "# Refunds\n\nSee [readme](/README.md), [runbook](/services/pay/RUNBOOK.md) "
                "and [gone](/domain/gone.md).\n"
            ),
        },
    )
    db = str(tmp_path / "index.db")
    assert briefd("--db", db, "index", "--source", str(docs), cwd=tmp_path).returncode == 0
    out = briefd("--db", db, "links", cwd=tmp_path).stdout
    leads = "leads out of the knowledge folder (to {} from its root), where briefd reads nothing"
    assert f"domain/refunds.md:3 /README.md ('/README.md' {leads.format('../README.md')}" in out
    runbook = "/services/pay/RUNBOOK.md"
    assert f"'{runbook}' {leads.format('../services/pay/RUNBOOK.md')}" in out
    assert "domain/refunds.md:3 /domain/gone.md (no document matches '/domain/gone.md')" in out


def test_a_link_to_a_file_the_index_skipped_says_why(tmp_path: Path) -> None:
    """A link to a file of a scope that ``briefd index`` skipped (saved as UTF-16 by
    PowerShell, a Git LFS pointer, past index.max_file_bytes) said "no document matches",
    read as a typo, although the file is there; it now names the file and why it is not
    indexed. Adding or fixing only that file updates the finding on the next run."""
    cwd, db = _indexed(tmp_path, {"domain/a.md": "# A\n\nSee [[notes]] and [[gone]].\n"})
    source = tmp_path / "knowledge"
    out = briefd("--db", db, "links", cwd=cwd).stdout
    assert "domain/a.md:3 notes (no document matches 'notes')" in out
    (source / "domain/notes.md").write_bytes("# Notes\n".encode("utf-16"))
    assert briefd("--db", db, "index", "--source", str(source), cwd=cwd).returncode == 0
    out = briefd("--db", db, "links", cwd=cwd).stdout
    assert (
        "domain/a.md:3 notes (domain/notes.md exists but is not indexed: UTF-16 text (it starts "
        "with a UTF-16 byte order mark), not UTF-8; save it as UTF-8)"
    ) in out
    assert "domain/a.md:3 gone (no document matches 'gone')" in out
    (source / "domain/notes.md").write_text("# Notes\n", encoding="utf-8")
    assert briefd("--db", db, "index", "--source", str(source), cwd=cwd).returncode == 0
    out = briefd("--db", db, "links", cwd=cwd).stdout
    assert "notes" not in out.split("ambiguous links")[0]


def test_doc_shows_each_backlink_of_a_line_once_with_the_heading_it_names(
    tmp_path: Path,
) -> None:
    """A line linking a document plainly and at a heading (``[[b]] and [[b#Limits]]``) was
    shown as two identical backlink lines in ``briefd doc``; each now says what it names, and
    a line linking it twice alike is shown once with its count."""
    cwd, db = _indexed(
        tmp_path,
        {
            "domain/a.md": "# A\n\nSee [[b]] and [[b#Limits]] here.\n",
            "domain/c.md": "# C\n\n[[b]], again [[b]].\n",
            "domain/b.md": "# B\n\n## Limits\n\nText.\n",
        },
    )
    shown = briefd("--db", db, "doc", "domain/b.md", cwd=cwd).stdout
    assert shown.endswith(
        "backlinks (4):\n"
        "  domain/a.md:3 (A)\n"
        "  domain/a.md:3 (A) → #Limits\n"
        "  domain/c.md:3 (C)  (2 links)\n"
    ), shown


def test_a_link_to_a_document_left_out_by_exclude_or_gitignore_says_by_what(
    tmp_path: Path,
) -> None:
    """A link to a file ``index.exclude`` or a ``.gitignore`` leaves out said "no document
    matches", read as a typo although the file is there; it now names the file and what
    leaves it out. Deleting that file alone brings "no document matches" back on the next
    run (the no-change check counts such files)."""
    (tmp_path / "briefd.yaml").write_text('index:\n  exclude: ["domain/drafts/**"]\n')
    cwd, db = _indexed(
        tmp_path,
        {
            "domain/a.md": "# A\n\nSee [[plan]], [[secret]] and [[gone]].\n",
            "domain/drafts/plan.md": "# Plan\n",
            "domain/.gitignore": "secret.md\n",
            "domain/secret.md": "# Secret\n",
        },
    )
    out = briefd("--db", db, "links", cwd=cwd).stdout
    assert (
        "domain/a.md:3 plan (domain/drafts/plan.md exists but is not indexed: left out by "
        "index.exclude ('domain/drafts/**'); remove that pattern to index it)"
    ) in out, out
    assert (
        "domain/a.md:3 secret (domain/secret.md exists but is not indexed: ignored by a "
        ".gitignore, and briefd indexes no file git ignores; change that pattern to index it)"
    ) in out, out
    assert "domain/a.md:3 gone (no document matches 'gone')" in out
    (tmp_path / "knowledge/domain/drafts/plan.md").unlink()
    source = str(tmp_path / "knowledge")
    assert briefd("--db", db, "index", "--source", source, cwd=cwd).returncode == 0
    out = briefd("--db", db, "links", cwd=cwd).stdout
    assert "domain/a.md:3 plan (no document matches 'plan')" in out, out


def test_a_document_in_a_folder_git_ignores_is_named_with_why(tmp_path: Path) -> None:
    """A folder a .gitignore ignores (``drafts/``, the usual way to keep drafts out) is not
    walked, so a link to a document in it was 'no document matches', and ``briefd doc`` on it
    'did you mean domain/a.md?', sending the user after a typo in a path that was right,
    while a file ignored by its own name already said what leaves it out."""
    cwd, db = _indexed(
        tmp_path,
        {
            "domain/a.md": "# A\n\nSee [the plan](drafts/plan.md) and [[plan]].\n",
            "domain/.gitignore": "drafts/\nbuild\n",
            "domain/drafts/plan.md": "# Plan\n",
            "domain/drafts/img/logo.png": "png",
            "domain/build/out/notes.md": "# Notes\n",
        },
    )
    why = (
        "exists but is not indexed: in {}, a folder a .gitignore ignores, and briefd indexes "
        "no file git ignores; change that pattern to index it"
    )
    shown = briefd("--db", db, "doc", "domain/drafts/plan.md", cwd=cwd)
    assert shown.stderr.strip() == (
        "error: domain/drafts/plan.md " + why.format("domain/drafts/")
    ), shown.stderr
    shown = briefd("--db", db, "doc", "domain/build/out/notes.md", cwd=cwd)
    assert shown.stderr.strip() == (
        "error: domain/build/out/notes.md " + why.format("domain/build/")
    ), shown.stderr
    out = briefd("--db", db, "links", cwd=cwd).stdout
    plan = "domain/drafts/plan.md " + why.format("domain/drafts/")
    assert f"domain/a.md:3 drafts/plan.md ({plan})" in out, out
    assert f"domain/a.md:3 plan ({plan})" in out, out


def test_asking_for_a_document_left_out_by_exclude_says_by_what(tmp_path: Path) -> None:
    """``briefd doc`` (get_document, suggest_links share its message) on a file index.exclude
    leaves out answered "did you mean domain/a.md?", sending the user to look for a typo in a
    path that was right; it now says the file is there and what leaves it out."""
    (tmp_path / "briefd.yaml").write_text('index:\n  exclude: ["domain/drafts/**"]\n')
    cwd, db = _indexed(tmp_path, {"domain/a.md": "# A\n", "domain/drafts/plan.md": "# Plan\n"})
    shown = briefd("--db", db, "doc", "domain/drafts/plan.md", cwd=cwd)
    assert shown.returncode != 0
    assert shown.stderr.strip() == (
        "error: domain/drafts/plan.md exists but is not indexed: left out by index.exclude "
        "('domain/drafts/**'); remove that pattern to index it"
    ), shown.stderr


def test_a_link_by_a_documents_title_says_which_document_and_how_to_link_it(
    tmp_path: Path,
) -> None:
    """A wikilink by a title (or a Markdown link by an alias) reaches no file, and `briefd
    links` said only "no document matches" where link suggestions named the document so
    called and a link that reaches it. It says so too, naming no other project's document."""
    cwd, db = _indexed(
        tmp_path,
        {
            "domain/retry.md": "---\ntitle: Retry policy\n---\n# Retry\n\nSoft declines.\n",
            "domain/fees.md": "# Fees\n\nSee [[Retry Policy]] and [[Nowhere]].\n",
            "projects/alpha/runbook.md": (
                "---\ntitle: Alpha runbook\naliases: [On call]\n---\n# Runbook\n\nPods.\n"
            ),
            "domain/notes.md": "# Notes\n\nSee [[Alpha Runbook]] and [call](On%20call.md).\n",
            "projects/alpha/notes.md": "# Notes\n\nSee [call](On%20call.md).\n",
        },
    )
    shown = briefd("--db", db, "links", cwd=cwd)
    assert shown.returncode == 0, shown.stderr
    broken = shown.stdout.split("broken links: 5\n", 1)[1].split("ambiguous links:")[0]
    assert broken.splitlines() == [
        "  domain/fees.md:3 Retry Policy (no document matches 'Retry Policy': links name a "
        "file, not a title; domain/retry.md is called 'Retry policy': link it as "
        "[[domain/retry.md|Retry Policy]])",
        "  domain/fees.md:3 Nowhere (no document matches 'Nowhere')",
        "  domain/notes.md:3 Alpha Runbook (no document matches 'Alpha Runbook')",
        "  domain/notes.md:3 On call.md (no document matches 'On call.md')",
        "  projects/alpha/notes.md:3 On call.md (no document matches 'On call.md': links "
        "name a file, not a title; projects/alpha/runbook.md is called 'On call': link it as "
        "[call](projects/alpha/runbook.md))",
    ]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_a_link_to_a_document_moved_since_says_where_it_went(tmp_path: Path) -> None:
    """K5, T5: `git mv` of a document broke every link to it, and `briefd links`, the dashboard
    and suggest_links said only "no document matches 'retry-policy'; fix the target or remove
    the link". They name where the index saw it go and the link that reaches it, after later
    edits of it too; --check still fails on the links until they are fixed."""
    cwd, db = _indexed(
        tmp_path,
        {
            "domain/retry-policy.md": "# Retrying soft declines\n\nUp to four times.\n",
            "domain/fees.md": "# Fees\n\nSee [[retry-policy]] and [[nowhere]].\n",
            "projects/x/runbook.md": "# Runbook\n\n[the retries](../../domain/retry-policy.md)\n",
        },
    )
    source = tmp_path / "knowledge"
    _git(source, "init", "-q", "-b", "main")
    _git(source, "add", "-A")
    _git(source, "-c", "user.name=A", "-c", "user.email=a@x", "commit", "-qm", "docs")
    (source / "domain/rules").mkdir()
    _git(source, "mv", "domain/retry-policy.md", "domain/rules/payment-retries.md")
    for _ in range(2):  # the move, then an edit of the moved document: the hint stays
        indexed = briefd("--db", db, "index", "--source", str(source), cwd=cwd)
        assert indexed.returncode == 0, indexed.stderr
        (source / "domain/rules/payment-retries.md").write_text(
            "# Retrying soft declines\n\nThree.\n"
        )

    shown = briefd("--db", db, "links", "--check", cwd=cwd)
    assert shown.returncode == 1
    broken = shown.stdout.split("broken links: 3\n", 1)[1].split("ambiguous links:")[0]
    moved = "domain/retry-policy.md was moved to domain/rules/payment-retries.md"
    assert broken.splitlines() == [
        f"  domain/fees.md:3 retry-policy (no document matches 'retry-policy': {moved}: link it"
        " as [[domain/rules/payment-retries.md|retry-policy]])",
        "  domain/fees.md:3 nowhere (no document matches 'nowhere')",
        "  projects/x/runbook.md:3 ../../domain/retry-policy.md (no document matches "
        f"'../../domain/retry-policy.md': {moved}: link it as "
        "[the retries](../../domain/rules/payment-retries.md))",
    ]
    with Briefd(Settings(source=source, db=Path(db)), embedder=None) as api:
        found = api.suggest_links(None, 20, ["all"])
    details = {(s.doc_path, s.target): s.detail for s in found if s.kind == "broken-link"}
    assert details[("domain/fees.md", "retry-policy")].endswith(
        f"{moved}: link it as [[domain/rules/payment-retries.md|retry-policy]]"
    )
    assert details[("domain/fees.md", "nowhere")] == (
        "no document matches 'nowhere'; fix the target or remove the link"
    )
