"""Link extraction (K5): wikilinks in all four shapes and relative Markdown links.

Pure. Code blocks and inline code spans are masked first, so ``[[x]]`` in an example is not
a link. Each link keeps its provenance: source path, enclosing section, line.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from urllib.parse import unquote

from briefd.model import Heading, Link

_WIKI = re.compile(r"\[\[([^\[\]|#\n]*)(?:#([^\[\]|\n]*))?(?:\|([^\[\]\n]*))?\]\]")
# destination: <in angle brackets, spaces allowed> (as editors write a file name with spaces)
# or bare; then an optional "title"
_MARKDOWN = re.compile(
    r"(?<!!)\[([^\[\]\n]*)\]\(\s*(?:<([^<>\n]+)>|([^)\s<>]+))(?:\s+[\"'(][^)]*[\"')])?\s*\)"
)
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_DOC_SUFFIXES = (".md", ".markdown")


def extract_links(
    doc_path: str,
    lines: Sequence[str],
    first_line: int,
    headings: Sequence[Heading],
    code_ranges: Sequence[tuple[int, int]],
    title: str,
) -> tuple[Link, ...]:
    """Every link in file lines ``first_line``.. of ``doc_path`` outside code."""
    section_lines = [h.line for h in headings if h.level <= 3]
    section_names = [h.text for h in headings if h.level <= 3]
    in_code = _line_mask(code_ranges)
    links: list[Link] = []
    for number in range(first_line, len(lines) + 1):
        if number in in_code:
            continue
        text = _CODE_SPAN.sub(lambda m: " " * len(m.group(0)), lines[number - 1])
        if "[" not in text:
            continue
        at = bisect.bisect_right(section_lines, number) - 1
        section = section_names[at] if at >= 0 else title
        links.extend(_wikilinks(doc_path, section, number, text))
        links.extend(_markdown_links(doc_path, section, number, text))
    return tuple(links)


def _line_mask(ranges: Sequence[tuple[int, int]]) -> set[int]:
    return {line for start, end in ranges for line in range(start, end + 1)}


def _wikilinks(doc_path: str, section: str, line: int, text: str) -> list[Link]:
    found = []
    for match in _WIKI.finditer(text):
        target, fragment, display = (g.strip() if g else None for g in match.groups())
        if not target and not fragment:
            continue
        found.append(Link(doc_path, section, line, target or "", fragment or None, display, "wiki"))
    return found


def _markdown_links(doc_path: str, section: str, line: int, text: str) -> list[Link]:
    found = []
    for match in _MARKDOWN.finditer(text):
        display, href = match.group(1).strip(), (match.group(2) or match.group(3)).strip()
        if _SCHEME.match(href) or href.startswith("//"):
            continue
        path, _, fragment = href.partition("#")
        path = unquote(path)
        if path and not path.lower().endswith(_DOC_SUFFIXES):
            continue
        found.append(
            Link(
                doc_path,
                section,
                line,
                path,
                unquote(fragment) or None,
                display or None,
                "markdown",
            )
        )
    return found
