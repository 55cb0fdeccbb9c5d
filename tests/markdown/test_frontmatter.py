from __future__ import annotations

from briefd.markdown.document import parse_document
from briefd.markdown.frontmatter import split_front_matter
from briefd.tokens import count_tokens


def test_recognised_keys() -> None:
    split = split_front_matter(
        "---\ntitle: Refunds\ntags: [payments, refunds]\naliases: [give money back]\n"
        "refs: ['services/refunds/**']\n---\n# Heading\n"
    )
    fm = split.front_matter
    assert (fm.title, fm.tags, fm.aliases, fm.refs) == (
        "Refunds",
        ("payments", "refunds"),
        ("give money back",),
        ("services/refunds/**",),
    )
    assert split.body == "# Heading\n"
    assert split.body_start_line == 7
    assert split.problems == ()


def test_bad_yaml_is_reported_and_body_still_indexed() -> None:
    text = "---\ntitle: [unclosed\ntags: a\n---\n# Real title\n\nBody text.\n"
    doc = parse_document("domain/bad.md", text, "domain", "h", count_tokens)
    assert doc.title == "Real title"
    assert doc.problems == (
        "front matter is not valid YAML at line 3 (expected ',' or ']', but got ':'); "
        "indexed without front matter",
    )
    assert [c.content for c in doc.chunks] == ["Body text."]


def test_wrong_types_are_ignored_with_a_problem() -> None:
    split = split_front_matter("---\ntitle: {a: 1}\ntags: 5\n---\nx\n")
    assert split.front_matter.title is None
    assert split.problems == (
        "front matter 'title' must be a string; ignored",
        "front matter 'tags' must be a list of strings; ignored",
    )


def test_title_falls_back_to_h1_then_file_name() -> None:
    assert (
        parse_document("domain/a.md", "# From H1\n", "domain", "h", count_tokens).title == "From H1"
    )
    assert (
        parse_document("domain/file-name.md", "text\n", "domain", "h", count_tokens).title
        == "file-name"
    )
