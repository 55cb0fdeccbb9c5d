"""From file text to a :class:`Document`: front matter, structure, chunks and links."""

from __future__ import annotations

import posixpath
import re
import unicodedata

from briefd.markdown.blobs import found
from briefd.markdown.chunk import TokenCounter, chunk_document
from briefd.markdown.datauri import elided_lines
from briefd.markdown.frontmatter import split_front_matter
from briefd.markdown.links import extract_links
from briefd.markdown.mdx import is_mdx, without_mdx_code
from briefd.markdown.parse import parse_structure
from briefd.model import Document, FrontMatter, Link


def parse_document(
    path: str,
    text: str,
    scope: str,
    content_hash: str,
    count: TokenCounter,
    target_tokens: int = 500,
    max_tokens: int = 800,
) -> Document:
    """Parse one Markdown file; problems (bad front matter…) are recorded, never raised."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")  # as the parser
    # composed (NFC), as queries are read: "İ" or "ü" written decomposed (a combining mark
    # after the letter, as macOS and some exports write) would split the word in two
    text = unicodedata.normalize("NFC", text)
    split = split_front_matter(text)
    if is_mdx(path):  # its imports, exports and {/* comments */} are no text of the page
        text = without_mdx_code(text, split.body_start_line)
        split = split_front_matter(text)
    structure = parse_structure(split.body, split.body_start_line)
    lines = text.split("\n")
    first_h1 = next((h.text for h in structure.headings if h.level == 1), None)
    stem = posixpath.splitext(posixpath.basename(path))[0]
    title = split.front_matter.title or first_h1 or stem
    chunks = chunk_document(
        path, lines, structure, title, split.body_start_line, count, target_tokens, max_tokens
    )
    comments = tuple((h.start, h.end) for h in structure.html if h.opener == "<!--")
    hidden = structure.code_ranges + comments
    links = extract_links(path, lines, split.body_start_line, structure.headings, hidden, title)
    links += relation_links(path, split.front_matter, lines[: split.body_start_line - 1])
    return Document(
        path=path,
        scope=scope,
        title=title,
        front_matter=split.front_matter,
        content_hash=content_hash,
        body=split.body,
        body_start_line=split.body_start_line,
        headings=structure.headings,
        chunks=chunks,
        links=links,
        problems=split.problems + tuple(b.problem() for b in found(elided_lines(lines))),
    )


def relation_links(path: str, front_matter: FrontMatter, head: list[str]) -> tuple[Link, ...]:
    """The front matter's relations as links of kind ``relation``: the relation is the
    display text, the section is empty and the line is the key's line in the file."""
    found = []
    for relation, target in front_matter.relations:
        key = re.compile(rf"^\s*[\"']?{relation}[\"']?\s*[:=]")  # YAML, TOML or JSON
        line = next((n for n, text in enumerate(head, start=1) if key.match(text)), 1)
        name, _, fragment = target.partition("#")
        found.append(
            Link(path, "", line, name.strip(), fragment.strip() or None, relation, "relation")
        )
    return tuple(found)
