"""Markdown structure from a real CommonMark parser: headings, code ranges, block boundaries.

All line numbers are 1-based file lines (the body's offset after front matter is applied), and
ranges are inclusive. A ``#`` line inside fenced or indented code is never a heading, because
the parser says so, not a regular expression.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token

from briefd.model import Heading
from briefd.text import HTML_ELEMENTS, html_anchor_names

# (tried from the start of a run of spaces only, (?<!\s), the same matches: tried from each of
# 200,000 spaces in a heading, it took half a minute)
_ANCHOR = re.compile(r"(?<!\s)\s*\{#([^\s{}]+)\}\s*$")
_TAG_NAME = re.compile(r"</?([A-Za-z][A-Za-z0-9-]*)")
_RAW_HTML = re.compile(r"\s*<(!--|pre|script|style|textarea)(?=[\s>]|$)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Fence:
    """A fenced code block at any depth (inside list items and block quotes too)."""

    start: int  # the opening fence line
    end: int  # the closing fence line, or the last line an unclosed fence runs to
    markup: str  # the fence string as opened: ```, ~~~, ```` …
    closed: bool


@dataclass(frozen=True, slots=True)
class HtmlBlock:
    """An HTML block that runs to a closing string: a comment or ``<pre>``/``<script>``/…"""

    start: int
    end: int
    opener: str  # "<!--", "<pre>" …
    closer: str  # "-->", "</pre>" …
    closed: bool


@dataclass(frozen=True, slots=True)
class Structure:
    headings: tuple[Heading, ...]  # H1–H6, in order
    heading_spans: tuple[tuple[int, int], ...]  # lines each heading occupies (setext: two)
    code_ranges: tuple[tuple[int, int], ...]
    blocks: tuple[tuple[int, int], ...]  # every top-level block, headings included
    fences: tuple[Fence, ...]
    tables: tuple[tuple[int, int], ...]  # header, separator and rows; at any depth
    html: tuple[HtmlBlock, ...]


@functools.cache
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table")


@functools.cache
def _block_parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table").disable("inline")


def heading_text(line: str) -> str | None:
    """The text the index names a Markdown heading line by (``## `FEFO` and *expiry* rules ##``
    is "FEFO and expiry rules"), or None when ``line`` is no heading."""
    headings = parse_structure(line.strip()).headings
    return headings[0].text if headings else None


def code_ranges(body: str, first_line: int = 1) -> tuple[tuple[int, int], ...]:
    """The code blocks of ``body`` (fenced at any depth, indented) as :func:`parse_structure`
    finds them, without parsing inline text (half the work)."""
    return tuple(
        (token.map[0] + first_line, token.map[1] - 1 + first_line)
        for token in _block_parser().parse(body)
        if token.type in ("fence", "code_block") and token.map is not None
    )


def parse_structure(body: str, first_line: int = 1) -> Structure:
    """Parse ``body`` whose first line is file line ``first_line``: its blocks, and the inline
    text of its headings only (inline parsing every paragraph and table cell was half the
    time and most of the memory: 900,000 tokens for a table of 150,000 cells)."""
    env: dict[str, object] = {}  # the link reference definitions a heading's text may use
    tokens = _block_parser().parse(body, env)
    offset = first_line
    headings: list[Heading] = []
    spans: list[tuple[int, int]] = []
    code: list[tuple[int, int]] = []
    blocks: list[tuple[int, int]] = []
    fences: list[Fence] = []
    tables: list[tuple[int, int]] = []
    html: list[HtmlBlock] = []
    for index, token in enumerate(tokens):
        if token.map is None:
            continue
        start, end = token.map[0] + offset, token.map[1] - 1 + offset
        if token.type == "heading_open":
            headings.append(_heading(token, _inline(tokens[index + 1], env), start))
            spans.append((start, end))
        elif token.type in ("fence", "code_block"):
            code.append((start, end))
            if token.type == "fence":
                fences.append(_fence(token, start, end))
        elif token.type == "table_open":
            tables.append((start, end))
        elif token.type == "html_block" and (raw := _RAW_HTML.match(token.content)):
            html.append(_html_block(token.content, raw.group(1).lower(), start, end))
        if token.level == 0 and token.nesting != -1:
            blocks.append((start, end))
    return Structure(
        headings=tuple(headings),
        heading_spans=tuple(spans),
        code_ranges=tuple(code),
        blocks=tuple(blocks),
        fences=tuple(fences),
        tables=tuple(tables),
        html=tuple(html),
    )


def _fence(token: Token, start: int, end: int) -> Fence:
    """Closed when the lines are the opener, the content lines and one closing line."""
    content = token.content
    content_lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    return Fence(start, end, token.markup, closed=end - start - content_lines == 1)


def _html_block(content: str, tag: str, start: int, end: int) -> HtmlBlock:
    opener, closer = ("<!--", "-->") if tag == "!--" else (f"<{tag}>", f"</{tag}>")
    last = content.rstrip("\n").rsplit("\n", 1)[-1]
    return HtmlBlock(start, end, opener, closer, closed=closer in last.lower())


def _inline(token: Token, env: dict[str, object]) -> Token:
    """A block parse's inline token with its children, as the whole parse makes them."""
    parsed = _parser().parseInline(token.content, env)
    return parsed[0] if parsed else token


def _heading(token: Token, inline: Token, line: int) -> Heading:
    """A heading as a reader sees it: its ``{#anchor}`` and HTML tags (``<a name="x"></a>``,
    ``<span class="badge">new</span>``, ``<sup>``, comments) out of its text, as GitHub renders
    it; the name an ``<a name>``/``<a id>`` gives is its anchor when it has no ``{#anchor}``.
    Text that only looks like a tag (``List<String>``, ``Option<T>``: no HTML element) stays."""
    level = int(token.tag[1])
    raw = inline.content
    found = _ANCHOR.search(raw)
    anchor = found.group(1) if found else next(iter(html_anchor_names(raw)), None)
    text = _plain_text(inline.children or [])
    text = _ANCHOR.sub("", text).strip()
    return Heading(level=level, text=text or raw.strip(), anchor=anchor, line=line)


def _plain_text(children: list[Token]) -> str:
    parts = []
    for child in children:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type == "html_inline":
            parts.append(_shown_html(child.content))
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "image":
            parts.append(_plain_text(child.children or []))
    return re.sub(r"\s+", " ", "".join(parts))


def _shown_html(markup: str) -> str:
    """What an inline HTML piece of a heading shows: nothing for a tag of an HTML element or
    a comment (a line break: a space), the text itself for what only looks like a tag — no
    element (``<String>``), or a bare capitalised one, a type parameter (``Result<Data>``)."""
    tag = _TAG_NAME.match(markup)
    if tag is None:
        return "" if markup.startswith(("<!", "<?")) else markup
    name = tag.group(1)
    if name.lower() not in HTML_ELEMENTS or (name[0].isupper() and markup == f"<{name}>"):
        return markup
    return " " if name.lower() in ("br", "hr", "wbr") else ""
