"""Inline ``data:`` URIs in the text chunks are made of (K4): their payload elided.

A base64 image pasted into a note (``![diagram](data:image/png;base64,iVBOR…)``, an HTML
``<img src="data:…">``, a link's target) is tens of kilobytes of letters that no one searches
for: a 60 KB image made 160 chunks (57,000 tokens) that crowded search results. The chunk text
keeps the alt text, the media type and the size, ``data:image/png;base64,… (60 KB elided)``:
inside a Markdown link's parentheses the size reads as the link's title, so the link stays one,
and a link that has a title holds the size inside it (``![x](data:…,… "Logo (3 KB elided)")``).
A base64 payload wrapped over several lines (``base64 -w 76`` pasted into an ``<img src="…">``)
is elided as one: its first line holds the marker and what followed the payload on its last
line, the lines after it are ``GONE``, left out of the chunk text (``shown``). So chunks' lines,
headings and anchors are those of the file, whose text a document read whole
(``get_document``) still serves as it is.
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
# a base64 payload running to the end of its line, and the lines it may wrap onto
_WRAPPED_START = re.compile(rf"{_HEAD}(?P<payload>[A-Za-z0-9+/=]*)[ \t]*$", re.IGNORECASE)
_BASE64_LINE = re.compile(r"[ \t>]*(?P<payload>[A-Za-z0-9+/=]*)(?P<rest>.*)")
_CLOSERS = ")\"'"  # what ends a wrapped payload: a link's or url()'s ")", an attribute's quote
GONE = "\x00"  # a line whose text an elided payload took (left out of the chunk text)


def elided_lines(lines: Sequence[str]) -> list[str]:
    """``lines`` with every long data URI payload replaced by a marker, line for line; the
    lines a wrapped payload took after its first are ``GONE``."""
    result = list(lines)
    for index, line in enumerate(lines):
        if result[index] == GONE or "data:" not in line.casefold():
            continue
        last = _wrapped_until(lines, index)
        if last == index:
            result[index] = elided(line)
            continue
        payload = "".join(_payload_part(lines[i]) for i in range(index + 1, last + 1))
        rest = _BASE64_LINE.fullmatch(lines[last])
        assert rest is not None  # _wrapped_until matched it
        result[index] = elided(line.rstrip(" \t") + payload + rest["rest"])
        result[index + 1 : last + 1] = [GONE] * (last - index)
    return result


def shown(text: str) -> str:
    """A chunk's text without the lines an elided payload took."""
    return "\n".join(line for line in text.split("\n") if line != GONE) if GONE in text else text


def _wrapped_until(lines: Sequence[str], index: int) -> int:
    """The last line of the base64 payload that starts at the end of line ``index`` and wraps
    onto the lines after it, closed by ``)`` or a quote; ``index`` when there is none."""
    start = _WRAPPED_START.search(lines[index])
    if start is None or not start["base64"]:
        return index
    for last in range(index + 1, len(lines)):
        line = _BASE64_LINE.fullmatch(lines[last])
        if line is None or not (line["payload"] or line["rest"]):  # a blank line
            return index
        rest = line["rest"].lstrip(" \t")
        if rest and rest[0] in _CLOSERS:
            return last
        if rest:
            return index
    return index


def _payload_part(line: str) -> str:
    match = _BASE64_LINE.fullmatch(line)
    return match["payload"] if match is not None else ""


def elided(text: str) -> str:
    """``text`` with every data URI payload of ``_SHORT`` characters or more elided."""
    return _DATA_URI.sub(_marker, text)


def _marker(match: re.Match[str]) -> str:
    payload = match["payload"]
    size = len(payload) * 3 // 4 - payload.count("=") if match["base64"] else len(payload)
    title = match["title"]
    if title is None or match.string[max(0, match.start() - 2) : match.start()] != "](":
        return f"{match['head']}… ({size_said(size)} elided){title or ''}"
    said = f"{size_said(size)} elided"  # the link's one title holds the size
    inside = f", {said}" if title.endswith(")") else f" ({said})"
    return f"{match['head']}…{title[:-1]}{inside}{title[-1]}"


def size_said(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{round(size / 1024)} KB"
    return f"{size / (1024 * 1024):.1f} MB"
