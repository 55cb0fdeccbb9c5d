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

_ANCHOR = re.compile(r"\s*\{#([^\s{}]+)\}\s*$")


@dataclass(frozen=True, slots=True)
class Structure:
    headings: tuple[Heading, ...]  # H1–H6, in order
    heading_spans: tuple[tuple[int, int], ...]  # lines each heading occupies (setext: two)
    code_ranges: tuple[tuple[int, int], ...]
    blocks: tuple[tuple[int, int], ...]  # every top-level block, headings included


@functools.cache
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table")


def parse_structure(body: str, first_line: int = 1) -> Structure:
    """Parse ``body`` whose first line is file line ``first_line``."""
    tokens = _parser().parse(body)
    offset = first_line
    headings: list[Heading] = []
    spans: list[tuple[int, int]] = []
    code: list[tuple[int, int]] = []
    blocks: list[tuple[int, int]] = []
    for index, token in enumerate(tokens):
        if token.map is None:
            continue
        start, end = token.map[0] + offset, token.map[1] - 1 + offset
        if token.type == "heading_open":
            headings.append(_heading(token, tokens[index + 1], start))
            spans.append((start, end))
        elif token.type in ("fence", "code_block"):
            code.append((start, end))
        if token.level == 0 and token.nesting != -1:
            blocks.append((start, end))
    return Structure(tuple(headings), tuple(spans), tuple(code), tuple(blocks))


def _heading(token: Token, inline: Token, line: int) -> Heading:
    level = int(token.tag[1])
    raw = inline.content
    anchor = None
    found = _ANCHOR.search(raw)
    if found:
        anchor = found.group(1)
    text = _plain_text(inline.children or [])
    text = _ANCHOR.sub("", text).strip()
    return Heading(level=level, text=text or raw.strip(), anchor=anchor, line=line)


def _plain_text(children: list[Token]) -> str:
    parts = []
    for child in children:
        if child.type in ("text", "code_inline", "html_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "image":
            parts.append(_plain_text(child.children or []))
    return re.sub(r"\s+", " ", "".join(parts))


def slugify(text: str) -> str:
    """GitHub-style heading slug, as relative Markdown links use in their ``#fragment``."""
    lowered = text.strip().lower()
    kept = re.sub(r"[^\w\- ]", "", lowered)
    return kept.replace(" ", "-")
