from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from briefd.markdown.document import parse_document
from briefd.tokens import count_tokens

WORDS = st.sampled_from(
    [
        "payment",
        "capture",
        "refund",
        "settlement",
        "ledger",
        "retry",
        "idempotency",
        "acquirer",
        "webhook",
        "ödeme",
        "işlem",
        "taksit",
        "iade",
        "3-D",
        "Secure",
        "`code`",
        "**bold**",
        "42",
        "EUR",
    ]
)


@st.composite
def paragraph(draw: st.DrawFn) -> str:
    lines = draw(st.lists(st.lists(WORDS, min_size=1, max_size=18), min_size=1, max_size=6))
    return "\n".join(" ".join(line) for line in lines)


@st.composite
def code_block(draw: st.DrawFn) -> str:
    body = draw(
        st.lists(
            st.sampled_from(["# comment not a heading", "## also not", "x = 1"]),
            min_size=1,
            max_size=8,
        )
    )
    return "```bash\n" + "\n".join(body) + "\n```"


@st.composite
def heading(draw: st.DrawFn) -> str:
    level = draw(st.integers(1, 4))
    words = draw(st.lists(WORDS, min_size=1, max_size=4))
    anchor = draw(st.sampled_from(["", " {#anchor-x}"]))
    return "#" * level + " Heading " + " ".join(words) + anchor


@st.composite
def markdown_document(draw: st.DrawFn) -> str:
    blocks = draw(
        st.lists(st.one_of(paragraph(), code_block(), heading()), min_size=1, max_size=25)
    )
    front = draw(st.sampled_from(["", "---\ntitle: Doc\ntags: [a]\n---\n"]))
    return front + "\n\n".join(blocks) + "\n"


def _words_outside_headings(text: str) -> list[str]:
    words: list[str] = []
    in_code = False
    lines = text.split("\n")
    if text.startswith("---\n"):
        end = lines.index("---", 1)
        lines = lines[end + 1 :]
    for line in lines:
        if line.startswith("```"):
            in_code = not in_code
        is_heading = (
            not in_code
            and line.lstrip().startswith("#")
            and line.split(" ")[0] in ("#", "##", "###")
        )
        if not is_heading:
            words += line.split()
    return words


def _uncarried(content: str) -> str:
    """A chunk's text without the headings of empty sections carried into it (the lines
    before its first blank line, when they are all headings)."""
    head, _, rest = content.partition("\n\n")
    lines = head.split("\n")
    carried = rest and all(line.split(" ")[0] in ("#", "##", "###") for line in lines)
    return rest if carried else content


@settings(max_examples=150, deadline=None)
@given(markdown_document())
def test_chunks_cover_text_in_order_within_limit(text: str) -> None:
    doc = parse_document("domain/x.md", text, "domain", "h", count_tokens, 60, 100)
    covered = [w for chunk in doc.chunks for w in _uncarried(chunk.content).split()]
    words = _words_outside_headings(text)
    if words or not doc.headings:
        assert covered == words
    else:  # a stub: headings and nothing under them is its outline, in parts within the limit
        assert doc.chunks and all(c.content.startswith("#") for c in doc.chunks)
    assert all(chunk.tokens <= 100 for chunk in doc.chunks)
    assert all(count_tokens(chunk.content) == chunk.tokens for chunk in doc.chunks)
    assert [c.position for c in doc.chunks] == list(range(len(doc.chunks)))
    assert len({c.id for c in doc.chunks}) == len(doc.chunks)


@settings(max_examples=100, deadline=None)
@given(markdown_document())
def test_no_heading_is_taken_from_code(text: str) -> None:
    doc = parse_document("domain/x.md", text, "domain", "h", count_tokens)
    for chunk in doc.chunks:
        for part in chunk.heading_path:
            assert "comment not a heading" not in part and part != "also not"
    assert all(h.text.startswith("Heading") for h in doc.headings)


def test_sections_breadcrumbs_lines_and_anchor() -> None:
    text = (
        "---\ntitle: Retry\n---\n"  # lines 1-3
        "# Retry policy\n"  # 4
        "\n"
        "Intro.\n"  # 6
        "\n"
        "## Retry Policy {#retry-policy}\n"  # 8
        "\n"
        "Soft declines only.\n"  # 10
        "\n"
        "```bash\n# not a heading\n```\n"  # 12-14
        "\n"
        "### Backoff\n"  # 16
        "2s, 8s, 30s.\n"  # 17
        "## Empty\n"  # 18
        "## Last\n"  # 19
        "Done.\n"
    )
    doc = parse_document("domain/retry.md", text, "domain", "h", count_tokens)
    assert doc.title == "Retry"
    got = [(c.heading, c.heading_path, c.anchor, c.start_line, c.end_line) for c in doc.chunks]
    assert got == [
        ("Retry policy", ("Retry policy",), None, 4, 6),  # not the title: a heading as any
        ("Retry Policy", ("Retry policy", "Retry Policy"), "retry-policy", 8, 14),
        ("Backoff", ("Retry policy", "Retry Policy", "Backoff"), None, 16, 17),
        ("Last", ("Retry policy", "Last"), None, 18, 20),  # from the empty one over it
    ]
    assert doc.chunks[1].content == "Soft declines only.\n\n```bash\n# not a heading\n```"
    assert doc.chunks[3].content == "## Empty\n\nDone."


def test_a_headings_html_is_out_of_its_text_and_its_html_anchor_is_its_anchor() -> None:
    """GitHub renders ``## Refund window <span class="badge">new</span>`` as "Refund window
    new"; briefd showed the tags in every hit's breadcrumb (and indexed "span class badge").
    Text that only looks like a tag (``List<String>``, no HTML element) is the heading's own."""
    text = (
        '# Payments <a id="pay"></a>\n\nIntro.\n\n'
        '## Refund window <span class="badge">new</span> <!-- since 2024 -->\n\nThirty days.\n\n'
        "### Limits<br>per day <sup>1</sup>\n\nFive.\n\n"
        "## Returns a List<String>, Result<Data> or Option<T> {#returns}\n\nNames.\n"
    )
    doc = parse_document("domain/pay.md", text, "domain", "h", count_tokens)
    assert doc.title == "Payments"
    got = [(c.heading, c.heading_path, c.anchor) for c in doc.chunks]
    assert got == [
        ("Payments", (), "pay"),
        ("Refund window new", ("Refund window new",), None),
        ("Limits per day 1", ("Refund window new", "Limits per day 1"), None),
        (
            "Returns a List<String>, Result<Data> or Option<T>",
            ("Returns a List<String>, Result<Data> or Option<T>",),
            "returns",
        ),
    ]


def test_oversized_section_splits_on_paragraphs_with_stable_ids() -> None:
    para = " ".join(["settlement"] * 150)
    text = "# T\n\n## Long\n\n" + "\n\n".join([para] * 8) + "\n"
    first = parse_document("domain/long.md", text, "domain", "h", count_tokens)
    again = parse_document(
        "domain/long.md", text + "\n## New\n\nMore.\n", "domain", "h", count_tokens
    )
    long_parts = [c for c in first.chunks if c.heading == "Long"]
    assert len(long_parts) >= 2
    assert all(c.tokens <= 800 for c in long_parts)
    assert [c.id for c in long_parts] == [c.id for c in again.chunks if c.heading == "Long"]
    assert long_parts[0].start_line == 3
    assert long_parts[1].start_line > long_parts[0].end_line


def test_duplicate_headings_get_distinct_ids() -> None:
    text = "# T\n\n## Notes\n\na\n\n## Notes\n\nb\n"
    doc = parse_document("domain/d.md", text, "domain", "h", count_tokens)
    assert len({c.id for c in doc.chunks}) == 2


def test_a_document_of_only_headings_is_one_outline_chunk() -> None:
    text = "# Onboarding wombats\n\n## Checklist\n\n## Contacts\n"
    doc = parse_document("projects/a/stub.md", text, "projects/a", "h", count_tokens)
    assert [c.content for c in doc.chunks] == ["# Onboarding wombats\n## Checklist\n## Contacts"]
    assert (doc.chunks[0].start_line, doc.chunks[0].end_line) == (1, 6)
    assert parse_document("projects/a/empty.md", "", "projects/a", "h", count_tokens).chunks == ()


def test_a_long_outline_is_parts_within_the_limit_covering_every_heading() -> None:
    """A table of contents of 3,000 headings was one section of ~30,000 tokens, past the
    800-token maximum every other section keeps."""
    headings = [f"## Topic {i} wombat ledger" for i in range(3000)]
    text = "# Index\n\n" + "\n\n".join(headings) + "\n"
    doc = parse_document("domain/toc.md", text, "domain", "h", count_tokens)
    assert len(doc.chunks) > 30 and all(c.tokens <= 800 for c in doc.chunks)
    assert all(count_tokens(c.content) == c.tokens for c in doc.chunks)
    lines = [line for c in doc.chunks for line in c.content.split("\n")]
    assert lines == ["# Index", *headings]
    assert len({c.id for c in doc.chunks}) == len(doc.chunks)
    spans = [(c.start_line, c.end_line) for c in doc.chunks]
    assert spans[0][0] == 1 and spans[-1][1] == len(text.split("\n"))  # as before: the end
    assert all(a[1] + 1 == b[0] for a, b in itertools.pairwise(spans))  # in order, no gap
    second = doc.chunks[1]
    assert second.heading == second.content.split("\n")[0].removeprefix("## ")


def test_an_outline_keeps_setext_headings() -> None:
    text = "Payments\n====\n\nRefunds\n----\n\nChargebacks\n----\n"
    doc = parse_document("domain/setext.md", text, "domain", "h", count_tokens)
    assert [c.content for c in doc.chunks] == ["# Payments\n## Refunds\n## Chargebacks"]


def test_a_heading_right_over_another_is_in_the_next_sections_text() -> None:
    """An overloaded signature written as two headings in a row (the Node.js docs'
    ``util.inspect(object[, options])`` over ``util.inspect(object[, showHidden…])``): the first
    section has no text and was in no chunk, its words in no search. Its heading now opens the
    next section's text, and the chunk's lines start at it; a parent heading the next
    section's breadcrumb holds is not repeated, and a section with text is left as it was."""
    text = (
        "# Util\n\n"
        "## `util.inspect(object[, options])`\n\n"
        "## `util.inspect(object[, showHidden[, depth]])`\n\n"
        "Returns a string representation of `object`.\n\n"
        "## Parent\n\n"
        "### Child\n\n"
        "Child text.\n\n"
        "## Trailing empty\n"
    )
    doc = parse_document("api/util.md", text, "api", "h", count_tokens)
    by_heading = {c.heading: c for c in doc.chunks}
    overloaded = by_heading["util.inspect(object[, showHidden[, depth]])"]  # as the text reads
    assert overloaded.content == (
        "## util.inspect(object[, options])\n\nReturns a string representation of `object`."
    )
    assert (overloaded.start_line, overloaded.end_line) == (3, 7)
    assert "util.inspect(object[, options])" not in by_heading
    child = by_heading["Child"]
    assert child.heading_path == ("Parent", "Child") and child.content == "Child text."
    assert [c.heading for c in doc.chunks] == [
        "util.inspect(object[, showHidden[, depth]])",
        "Child",
    ]
