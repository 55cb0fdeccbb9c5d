"""Blocks over the chunk limit split into well-formed parts (K4): fenced code is closed and
reopened, tables repeat their header, HTML comments and ``<pre>`` close and reopen."""

from __future__ import annotations

import hashlib
from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from briefd.api import Briefd
from briefd.bundles import BundleRequest
from briefd.markdown.document import parse_document
from briefd.model import Chunk
from briefd.tokens import count_tokens
from tests.conftest import EXAMPLE, EXAMPLE_TR, WriteFiles

MD = MarkdownIt("commonmark").enable("table")


def _chunks(text: str, heading: str, target: int = 500, limit: int = 800) -> list[Chunk]:
    doc = parse_document("domain/code.md", text, "domain", "h", count_tokens, target, limit)
    return [c for c in doc.chunks if c.heading == heading]


def _fence_code(markdown: str) -> str:
    """The code of every fenced block in ``markdown``, as the parser reads it, concatenated."""
    return "".join(t.content for t in MD.parse(markdown) if t.type == "fence")


def _next_heading_survives(content: str) -> bool:
    """A bundle writes the next section after a chunk: it must not end up inside the chunk's
    code, comment or table."""
    tokens = MD.parse(content + "\n\n## Next section\n")
    return any(t.type == "inline" and t.content == "Next section" for t in tokens)


def _python(lines: int, blank_every: int = 0) -> list[str]:
    return [
        ""
        if blank_every and n % blank_every == blank_every - 1
        else f"    payouts[{n}] = compute_value(x_{n}, settlement)  # line {n}"
        for n in range(lines)
    ]


def test_a_300_line_python_block_splits_into_complete_fences() -> None:
    code = _python(300)
    text = "# Payouts\n\n## Settlement code\n\n```python\n" + "\n".join(code) + "\n```\n"
    parts = _chunks(text, "Settlement code")  # code on lines 6-305, closing fence on 306
    assert len(parts) > 5
    file_lines = text.split("\n")
    for part in parts:
        lines = part.content.split("\n")
        assert lines[0] == "```python" and lines[-1] == "```"
        assert sum(line.startswith("```") for line in lines) == 2
        assert lines[1:-1] == file_lines[max(part.start_line, 6) - 1 : min(part.end_line, 305)]
        assert part.tokens == count_tokens(part.content) <= 800
        assert _next_heading_survives(part.content)
    assert [line for part in parts for line in part.content.split("\n")[1:-1]] == code
    assert parts[0].start_line == 3 and parts[-1].end_line == 306
    assert all(a.end_line + 1 == b.start_line for a, b in pairwise(parts))
    assert len({part.id for part in parts}) == len(parts)


def test_code_is_cut_at_blank_lines_when_it_has_them() -> None:
    code = _python(300, blank_every=8)
    text = "## Settlement code\n\n```python\n" + "\n".join(code) + "\n```\n"
    parts = _chunks(text, "Settlement code")
    assert len(parts) > 5
    assert all(part.content.endswith("\n\n```") for part in parts[:-1])  # a blank code line
    assert _fence_code("\n\n".join(part.content for part in parts)) == "\n".join(code) + "\n"


def test_tilde_and_long_backtick_fences_round_trip_with_the_fence_inside() -> None:
    example = ["````python", *[f"print({n})  # settlement {n}" for n in range(10)], "````", ""]
    nested = ["```bash", *[f"echo {n}  # payout {n}" for n in range(10)], "```", ""]
    for opener, closer, inner in (
        ("~~~markdown", "~~~", example * 10),
        ("````md", "````", nested * 10),
    ):
        text = f"## Example\n\n{opener}\n" + "\n".join(inner) + f"\n{closer}\n"
        parts = _chunks(text, "Example", target=120, limit=200)
        assert len(parts) > 3
        for part in parts:
            lines = part.content.split("\n")
            assert (lines[0], lines[-1]) == (opener, closer)
            assert part.tokens <= 200 and _next_heading_survives(part.content)
            assert [t.type for t in MD.parse(part.content)] == ["fence"]  # one block, no leak
        assert _fence_code("\n\n".join(p.content for p in parts)) == "\n".join(inner) + "\n"


def test_a_fence_in_a_list_item_reopens_at_the_item_indentation() -> None:
    code = [f"   psql -c 'select settle({n})'" for n in range(120)]
    text = (
        "## Steps\n\n1. Run the migration:\n\n   ```bash\n"
        + "\n".join(code)
        + "\n   ```\n\n2. Check the ledger.\n"
    )
    parts = _chunks(text, "Steps", target=200, limit=300)
    assert len(parts) > 3
    for part in parts[1:-1]:
        lines = part.content.split("\n")
        assert (lines[0], lines[-1]) == ("   ```bash", "   ```")
    for part in parts:
        assert part.tokens <= 300 and _next_heading_survives(part.content)
    code_read = _fence_code("\n\n".join(part.content for part in parts))
    assert code_read == "".join(line[3:] + "\n" for line in code)


def test_a_long_table_repeats_its_header_and_separator_in_every_part() -> None:
    header, separator = "| id | batch | amount |", "|---:|---|---|"
    rows = [f"| {n} | settlement batch {n} | {n * 7} EUR |" for n in range(200)]
    text = "## Fees\n\n" + "\n".join([header, separator, *rows]) + "\n"
    parts = _chunks(text, "Fees")
    assert len(parts) > 2
    for part in parts:
        lines = part.content.split("\n")
        assert lines[:2] == [header, separator]
        assert part.tokens == count_tokens(part.content) <= 800
        assert [t.type for t in MD.parse(part.content)].count("thead_open") == 1
    assert [line for part in parts for line in part.content.split("\n")[2:]] == rows
    assert all(a.end_line + 1 == b.start_line for a, b in pairwise(parts))


def test_html_comments_and_pre_blocks_close_and_reopen() -> None:
    history = [f"  - version: v{n}.0.0\n    description: settlement change {n}" for n in range(80)]
    steps = [f"{n}. If X is a payout, LOAD_PAYOUT(X + {n})" for n in range(80)]
    text = (
        "## History\n\n<!-- YAML\nchanges:\n"
        + "\n".join(history)
        + "\n-->\n\n## Algorithm\n\n<pre>\n"
        + "\n".join(steps)
        + "\n</pre>\n"
    )
    comments = _chunks(text, "History", target=200, limit=300)
    pre = _chunks(text, "Algorithm", target=200, limit=300)
    assert len(comments) > 2 and len(pre) > 2
    assert all(p.content.startswith("<!--") and p.content.endswith("-->") for p in comments)
    assert all(p.content.startswith("<pre>") and p.content.endswith("</pre>") for p in pre)
    assert all(_next_heading_survives(p.content) for p in comments + pre)


def test_a_fence_the_document_never_closes_is_closed_in_every_part() -> None:
    code = [f"x_{n} = settle({n})" for n in range(200)]
    parts = _chunks("## Tail\n\n```python\n" + "\n".join(code) + "\n", "Tail", 100, 150)
    assert len(parts) > 5
    assert all(p.content.startswith("```python\n") and p.content.endswith("\n```") for p in parts)
    assert [line for p in parts for line in p.content.split("\n")[1:-1]] == code


def _runbook(words: int) -> str:
    """A month-end runbook: prose of ``words`` words, then a SQL block whose first statement
    is one line longer than a part."""
    columns = ", ".join(f"payouts.batch_{n}_amount" for n in range(40))
    prose = " ".join(["Settlement"] + ["reconciles"] * words)
    return (
        "# Month-end settlement\n\n## Close the ledger\n\n"
        f"{prose} the ledger before the report runs.\n\n"
        f"```sql\nSELECT {columns} FROM payouts WHERE closed;\n"
        "UPDATE ledger SET closed = true;\nCOMMIT;\n```\n\nThen tell finance.\n"
    )


def test_a_cut_inside_a_fence_never_leaves_an_empty_block() -> None:
    """A part used to end on the opening fence of a block whose first line is longer than a
    part (``"```sql\\n```"``: an empty block, its code only in the next part): the opening
    line now goes with the first piece of that line, and every part cut inside the block
    closes it and the next reopens it with the same info string. No part starts with a
    closing fence alone either, and no code is lost."""
    for words in range(60):  # moves where the part before the code fills up
        text = _runbook(words)
        code = _fence_code(text).split()
        for target, limit in ((40, 80), (100, 150)):
            chunks = _chunks(text, "Close the ledger", target, limit)
            for chunk in chunks:
                lines = chunk.content.split("\n")
                fences = [t for t in MD.parse(chunk.content) if t.type == "fence"]
                assert all(t.content.strip() and t.info == "sql" for t in fences), chunk.content
                assert lines[:2] != ["```sql", "```"], chunk.content
                assert lines.count("```") == len(fences) <= 1, chunk.content
                assert chunk.tokens == count_tokens(chunk.content) <= limit
            joined = "\n\n".join(chunk.content for chunk in chunks)
            assert _fence_code(joined).split() == code, (words, target)


def test_a_chinese_paragraph_is_cut_after_its_sentences() -> None:
    """K4: a paragraph without spaces over a part (Chinese, Japanese) was cut every few
    hundred characters wherever that fell, mid-word, in parts of half the target; it is cut
    after the last sentence mark that fits, in parts near the target, losing nothing."""
    rule = "第{}条规则规定退款必须在三十天内完成处理，否则客户可以申请仲裁。"
    text = "".join(rule.format(n) for n in range(200))
    parts = _chunks(f"# 退款\n\n## 规则\n\n{text}\n", "规则")
    assert "".join(part.content for part in parts) == text
    assert all(part.content.endswith("仲裁。") for part in parts)
    assert all(count_tokens(part.content) <= 500 for part in parts)
    assert len(parts) <= -(-count_tokens(text) // 400)  # no half-empty parts


def test_japanese_without_a_sentence_end_is_cut_after_a_clause() -> None:
    clause = "返金は三十日以内に処理され、"
    text = clause * 120 + "完了する。"
    parts = _chunks(f"# 返金\n\n## 規則\n\n{text}\n", "規則", target=200, limit=300)
    # the short last piece joins the part before it, after a blank line, as any cut line's
    assert "".join(part.content.replace("\n\n", "") for part in parts) == text
    assert all(part.content.endswith("、") for part in parts[:-1])


def test_a_megabyte_line_is_counted_once_and_word_by_word_once_per_word() -> None:
    """K4, O4: a 2 MB one-line paragraph took 12 s to chunk: the section, its block and its
    run were each counted whole (seconds apiece) and every one of its 300K words was counted
    on its own. Each long text is counted once and each distinct word once; the parts are
    those the word-by-word cut always made (within the target, nothing lost)."""
    words = [f"w{n}x{n * 7 % 13}" for n in range(400)]
    line = " ".join(words[(n * 31) % 400] for n in range(60_000))
    counted: list[str] = []

    def count(text: str) -> int:
        counted.append(text)
        return count_tokens(text)

    doc = parse_document("big.md", f"# Big\n\n{line}\n", "domain", "h", count)
    assert " ".join(c.content for c in doc.chunks) == line
    assert all(c.tokens == count_tokens(c.content) <= 500 for c in doc.chunks)
    long_texts = [text for text in counted if len(text) >= 20_000]
    assert long_texts and len(long_texts) == len(set(long_texts))
    words_counted = [text for text in counted if " " not in text]
    assert sorted(words_counted) == sorted(set(words))


def test_example_knowledge_chunks_are_unchanged() -> None:
    """No example document has a block over the limit, so its chunks are byte for byte the
    ones the chunker made before split parts were wrapped (digest taken then). If the example
    documents change on purpose, recompute the digest (last: the H1s of currency-and-rounding.md
    and both overview.md, which differ from their front-matter titles, joined their sections'
    heading paths, changing those chunks' ids and nothing else)."""
    digest = hashlib.sha256()
    count = 0
    for root in (EXAMPLE, EXAMPLE_TR):
        for path in sorted(root.rglob("*.md")):
            rel = path.relative_to(root).as_posix()
            text = path.read_text(encoding="utf-8")
            for c in parse_document(rel, text, "domain", "h", count_tokens).chunks:
                count += 1
                digest.update(
                    f"{rel}\0{c.id}\0{c.start_line}\0{c.end_line}\0{c.content}\0".encode()
                )
    assert count == 427
    assert digest.hexdigest() == "68b62bd6e434f5493f20af967dff968e7200a0beeace1caac6bbbc1554d118bb"


def test_a_bundle_of_split_code_stays_markdown(api: Briefd, write_files: WriteFiles) -> None:
    code = "\n".join(_python(300))
    write_files(
        {
            "domain/payouts.md": "# Payouts\n\n## Settlement code\n\n```python\n"
            + code
            + "\n```\n\n## Schedule\n\nPayouts settle daily; compute_value runs first.\n",
        }
    )
    api.index()
    bundle = api.compile_bundle(
        BundleRequest("compute_value x_0 settlement payouts", max_tokens=4000)
    )
    assert len(bundle.items) >= 3 and not any(item.truncated for item in bundle.items)
    tokens = MD.parse(bundle.text)
    quotes = [t for t in tokens if t.type == "blockquote_open" and t.level == 0]
    assert len(quotes) == len(bundle.items)  # every "> path · …" attribution line is no code
    fences = [t for t in tokens if t.type == "fence"]
    assert len(fences) == sum(1 for item in bundle.items if "```python" in item.content)
    assert all(t.info == "python" for t in fences)


# Property: random documents with long fences (in list items and block quotes too), tables
# and prose, split hard (target 60, limit 100).

CODE_LINES = st.sampled_from(["x = 1", "    return settle(x)", "# not a heading", "", "ödeme()"])


@st.composite
def fenced(draw: st.DrawFn) -> str:
    fence = draw(st.sampled_from(["```", "~~~", "````"]))
    info = draw(st.sampled_from(["", "python", "bash"]))
    extra = ["```"] if fence != "```" else []  # an inner fence line that does not close it
    body = draw(st.lists(st.one_of(CODE_LINES, st.sampled_from(extra or ["x"])), max_size=60))
    lines = [fence + info, *body, fence]
    container = draw(st.sampled_from(["", "list", "quote"]))
    if container == "list":
        return "- Step:\n\n" + "\n".join("  " + line if line else "" for line in lines)
    if container == "quote":
        return "\n".join("> " + line if line else ">" for line in lines)
    return "\n".join(lines)


@st.composite
def table(draw: st.DrawFn) -> str:
    rows = draw(st.lists(st.integers(0, 999), min_size=1, max_size=40))
    return "\n".join(["| id | fee |", "|---|---|", *(f"| {n} | {n} EUR |" for n in rows)])


PROSE = st.sampled_from(["Settlement runs daily.", "## Section", "### Sub {#sub}", "Refunds."])
DOCUMENT = st.lists(st.one_of(fenced(), table(), PROSE), min_size=1, max_size=8).map(
    lambda blocks: "# Doc\n\n" + "\n\n".join(blocks) + "\n"
)


@settings(max_examples=150, deadline=None)
@given(DOCUMENT)
def test_split_parts_are_well_formed_and_lose_nothing(text: str) -> None:
    doc = parse_document("domain/x.md", text, "domain", "h", count_tokens, 60, 100)
    for chunk in doc.chunks:
        assert chunk.tokens == count_tokens(chunk.content) <= 100
        assert _next_heading_survives(chunk.content)
        assert chunk.start_line <= chunk.end_line
    joined = "\n\n".join(chunk.content for chunk in doc.chunks)
    assert _fence_code(joined) == _fence_code(text)
    assert _rows(joined) == [line for line in text.split("\n") if "EUR" in line]
    for chunk in doc.chunks:  # every row sits under a header the parser reads as one
        assert _table_cells(chunk.content) == _rows(chunk.content)
    assert len({c.id for c in doc.chunks}) == len(doc.chunks)


def _rows(markdown: str) -> list[str]:
    return [line for line in markdown.split("\n") if "EUR" in line]


def _table_cells(markdown: str) -> list[str]:
    """Each table body row the parser reads, written back as its source line."""
    tokens = MD.parse(markdown)
    cells = [t.content for t in tokens if t.type == "inline" and "EUR" in t.content]
    return [f"| {cell.split()[0]} | {cell} |" for cell in cells]


LONG_LINE = st.lists(st.sampled_from(["settle(x)", "ödeme", "a" * 50, "x=1;"]), max_size=40)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(LONG_LINE.map(" ".join), min_size=1, max_size=20),
    st.sampled_from(["```", "~~~~"]),
    st.sampled_from(["", "  ", "> "]),
)
def test_code_lines_longer_than_a_part_keep_the_block_intact(
    code: list[str], fence: str, indent: str
) -> None:
    lines = [indent + line for line in [fence + "py", *code, fence]]
    intro = "- Step:\n\n" if indent == "  " else ""
    text = "## Code\n\n" + intro + "\n".join(lines) + "\n"
    for target, limit in ((20, 40), (60, 100)):
        for chunk in _chunks(text, "Code", target, limit):
            assert chunk.tokens <= limit
            assert _next_heading_survives(chunk.content)
