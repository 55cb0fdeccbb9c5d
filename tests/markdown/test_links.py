from __future__ import annotations

import time

from briefd.markdown.document import parse_document
from briefd.tokens import count_tokens

TEXT = """# Title

See [[retry-policy]], [[idempotency|keys]], [[refunds#Partial refunds]] and
[[settlement#cutoff|the cutoff]] or [outbox](../domain/adr/0002-outbox.md#why).

## Code

`[[not-a-link]]` and [site](https://example.org/x.md) and ![img](pic.md)

```
[[also-not]] [x](y.md)
```

Same page [[#Code]] and [up](#title).
"""


def test_four_wikilink_shapes_and_markdown_links_with_provenance() -> None:
    doc = parse_document("projects/a/notes.md", TEXT, "projects/a", "h", count_tokens)
    got = [(ln.kind, ln.target, ln.fragment, ln.display, ln.section, ln.line) for ln in doc.links]
    assert got == [
        ("wiki", "retry-policy", None, None, "Title", 3),
        ("wiki", "idempotency", None, "keys", "Title", 3),
        ("wiki", "refunds", "Partial refunds", None, "Title", 3),
        ("wiki", "settlement", "cutoff", "the cutoff", "Title", 4),
        ("markdown", "../domain/adr/0002-outbox.md", "why", "outbox", "Title", 4),
        ("wiki", "", "Code", None, "Code", 14),
        ("markdown", "", "title", "up", "Code", 14),
    ]


def test_angle_bracket_destinations_may_hold_spaces() -> None:
    """CommonMark's `<…>` destination, as editors (Obsidian) write a file name with spaces."""
    text = (
        '# T\n\n[a](<Retry Policy.md>) [b](<../domain/fees (old).md#Card fees> "title") '
        "[c](<plain.md>) [d](with%20space.md)\n"
    )
    doc = parse_document("domain/t.md", text, "domain", "h", count_tokens)
    assert [(ln.target, ln.fragment, ln.display) for ln in doc.links] == [
        ("Retry Policy.md", None, "a"),
        ("../domain/fees (old).md", "Card fees", "b"),
        ("plain.md", None, "c"),
        ("with space.md", None, "d"),
    ]


def test_reference_style_links_are_links_where_they_are_used() -> None:
    """``[text][label]``, ``[label][]`` and ``[label]`` with ``[label]: path.md`` (as GitHub
    READMEs write them) are relative Markdown links too: they were not read, so a document
    linked only so was an orphan and a broken one never reported. Each is a link at the line
    and section it is used in; images, code, wikilinks and undefined labels are not."""
    text = (
        "# T\n\nSee [the rules][rules] and [Glossary][].\n\n## More\n\n"
        "Also [GLOSSARY], ![pic][rules], `[rules]`, [[wiki]], [x][undefined] and [web].\n\n"
        "[rules]: ../domain/rules.md#Cut-off\n"
        '[glossary]: <Glossary Terms.md> "the terms"\n'
        "[web]: https://example.org/x.md\n"
    )
    doc = parse_document("conventions/t.md", text, "conventions", "h", count_tokens)
    got = [(ln.kind, ln.target, ln.fragment, ln.display, ln.section, ln.line) for ln in doc.links]
    assert got == [
        ("markdown", "../domain/rules.md", "Cut-off", "the rules", "T", 3),
        ("markdown", "Glossary Terms.md", None, "Glossary", "T", 3),
        ("markdown", "Glossary Terms.md", None, "GLOSSARY", "More", 7),  # as written
        ("wiki", "wiki", None, None, "More", 7),
    ]


def test_a_code_span_in_a_label_or_a_links_text_is_read_as_written() -> None:
    """K5: Node's API docs link ``[`fs.open()`][]`` with ``[`fs.open()`]: fs.md#fsopen…``
    below. Code spans were blanked before labels were read, so every such label was the same
    blank and every such link took the file's first one's target (http.md: 164 links to one
    errors.md section, buffer.md none at all). A code span inside a label or a link's text
    is part of it; one around brackets still makes no link."""
    text = (
        "# T\n\nOpen with [`c.open()`][], read with [`b.read()`][] or [`b.read()`]; see\n"
        "[the `c` module](c.md#api) and [`C`][c-doc]. Not links: `[x](y.md)` and `[`.\n\n"
        "[`b.read()`]: b.md#from\n"
        "[`c.open()`]: c.md\n"
        "[c-doc]: c.md#top\n"
        "[`web()`]: https://example.org/web.md\n"
    )
    doc = parse_document("domain/a.md", text, "domain", "h", count_tokens)
    got = [(ln.target, ln.fragment, ln.display, ln.line) for ln in doc.links]
    assert got == [
        ("c.md", None, "`c.open()`", 3),
        ("b.md", "from", "`b.read()`", 3),
        ("b.md", "from", "`b.read()`", 3),
        ("c.md", "api", "the `c` module", 4),
        ("c.md", "top", "`C`", 4),
    ]


def test_unclosed_comment_openers_cost_one_pass() -> None:
    """Each ``<!--`` without a ``-->`` in its paragraph was looked for its closing to the
    paragraph's end: 20,000 such lines (a log pasted into a note) took 24-45 s to parse."""
    text = "# Log\n\n" + "x <!-- [[a]]\n" * 20_000 + "\n[[b]] <!-- [[c]] --> [[d]]\n"
    started = time.process_time()  # CPU time: a loaded machine (CI's other jobs) adds none
    doc = parse_document("domain/log.md", text, "domain", "h", count_tokens)
    assert time.process_time() - started < 5
    assert [link.target for link in doc.links][-2:] == ["b", "d"]
    assert len(doc.links) == 20_002


def test_a_40000_letter_word_in_a_shortcode_is_read_in_linear_time() -> None:
    """A shortcode's argument names were tried from every letter of a long word (an unquoted
    hash or token pasted as an argument): 11 CPU-s for 40,000 letters, growing with their
    square, and ``briefd index`` waited on it (17 s for a 20,000-letter one on a loaded machine)."""
    word = "Q" * 40_000
    text = f'# Notes\n\nSee {{{{< relref path="fees.md" version={word} >}}}} for the rules.\n'
    started = time.process_time()  # CPU time: a loaded machine (CI's other jobs) adds none
    doc = parse_document("domain/notes.md", text, "domain", "h", count_tokens)
    assert time.process_time() - started < 2
    assert [(ln.kind, ln.target) for ln in doc.links] == [("markdown", "fees.md")]


def test_a_heading_with_80000_spaces_in_it_is_read_in_linear_time() -> None:
    """A heading's ``{#anchor}`` was looked for from each space of a run in it: 5 CPU-s for
    80,000 spaces, growing with their square, ``briefd index`` waiting on it."""
    text = "# Fees" + " " * 80_000 + "card {#card-fees}\n\nTwo percent.\n"
    started = time.process_time()  # CPU time: a loaded machine (CI's other jobs) adds none
    doc = parse_document("domain/fees.md", text, "domain", "h", count_tokens)
    assert time.process_time() - started < 2
    assert [(h.text, h.anchor) for h in doc.headings] == [("Fees card", "card-fees")]


def test_hugo_ref_and_relref_shortcodes_are_links() -> None:
    """A Hugo site links pages with ``ref``/``relref``: those were no links (the shortcode's
    spaces are no Markdown destination), so related context and ``briefd links`` missed them.
    Escaped shortcodes (``{{</* … */>}}``) and ones in code spans stay text."""
    text = (
        '# Refunds\n\nSee [the fees]({{< ref "fees.md#card-fees" >}}) and\n'
        '{{< relref `../ops/settlement` >}}, [payouts]({{% relref "payouts" %}}#timing),\n'
        '[tabs]({{< relref path="/conventions/tabs.md" lang="en" >}}), {{</* ref "shown.md" */>}}\n'
        'and `{{< ref "code.md" >}}`; [guide](../conventions/guide.mdx).\n'
    )
    doc = parse_document("domain/refunds.md", text, "domain", "h", count_tokens)
    got = [(ln.kind, ln.target, ln.fragment, ln.display, ln.line) for ln in doc.links]
    assert got == [
        ("markdown", "fees.md", "card-fees", "the fees", 3),
        ("markdown", "../ops/settlement", None, None, 4),
        ("markdown", "payouts", "timing", "payouts", 4),
        ("markdown", "/conventions/tabs.md", None, "tabs", 5),
        ("markdown", "../conventions/guide.mdx", None, "guide", 6),
    ]
