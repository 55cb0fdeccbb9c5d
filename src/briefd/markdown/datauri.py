"""Inline ``data:`` URIs in the text chunks are made of (K4): their payload elided.

A base64 image pasted into a note (``![diagram](data:image/png;base64,iVBOR…)``, an HTML
``<img src="data:…">``, a link's target) is tens of kilobytes of letters that no one searches
for: a 60 KB image made 160 chunks (57,000 tokens) that crowded search results. The chunk text
keeps the alt text, the media type and the size, ``data:image/png;base64,… (60 KB elided)``:
inside a Markdown link's parentheses the size reads as the link's title, so the link stays one,
and a link that has a title holds the size inside it (``![x](data:…,… "Logo (3 KB elided)")``).
Each line is elided on its own, so chunks' lines, headings and anchors are those of the file,
whose text a document read whole (``get_document``) still serves as it is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# data:[<media type>][;<parameter>=<value>…][;base64],<payload>; a payload shorter than
# _SHORT (``data:,Hello``, a 1-pixel GIF in an example) is left as written.
_SHORT = 64
_HEAD = (
    r"(?P<head>\bdata:(?:[A-Za-z0-9.+-]+/[A-Za-z0-9.+-]+)?"
    r"(?:;[A-Za-z0-9.+-]+=[A-Za-z0-9.+%-]+)*(?P<base64>;base64)?,)"
)
# a Markdown link's title after its destination: "…", '…' or (…), then the link's ")"
_TITLE = (
    r"""(?P<title>[ \t]+(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|\((?:[^()\\\n]|\\.)*\)))"""
    r"(?=[ \t]*\))"
)
_DATA_URI = re.compile(
    rf"{_HEAD}(?P<payload>[A-Za-z0-9+/=%._~-]{{{_SHORT},}})(?:{_TITLE})?", re.IGNORECASE
)


def elided_lines(lines: Sequence[str]) -> list[str]:
    """``lines`` with every long data URI payload replaced by a marker, line for line."""
    return [elided(line) if "data:" in line.casefold() else line for line in lines]


def elided(text: str) -> str:
    """``text`` with every data URI payload of ``_SHORT`` characters or more elided."""
    return _DATA_URI.sub(_marker, text)


def _marker(match: re.Match[str]) -> str:
    payload = match["payload"]
    size = len(payload) * 3 // 4 - payload.count("=") if match["base64"] else len(payload)
    title = match["title"]
    if title is None or match.string[max(0, match.start() - 2) : match.start()] != "](":
        return f"{match['head']}… ({_size(size)} elided){title or ''}"
    said = f"{_size(size)} elided"  # the link's one title holds the size
    inside = f", {said}" if title.endswith(")") else f" ({said})"
    return f"{match['head']}…{title[:-1]}{inside}{title[-1]}"


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{round(size / 1024)} KB"
    return f"{size / (1024 * 1024):.1f} MB"
