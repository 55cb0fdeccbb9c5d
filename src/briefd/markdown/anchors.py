"""HTML anchors outside headings (K5): ``<a name="old-heading"></a>`` or ``<a id="limits">``
on a line of its own, ``<h2 id="custom">``, ``<div id="faq">`` — the names a ``#fragment``
reaches on GitHub besides the headings' slugs. Teams keep one where a heading used to be, so
links to its old name still land; a link to it is no unknown anchor.

Pure. Code blocks and code spans are skipped (an example of HTML is no anchor), as are HTML
comments."""

from __future__ import annotations

import re

from briefd.markdown.links import code_spans_blanked, comments_blanked
from briefd.markdown.parse import code_ranges

# ``<a name=…>`` (the name only an ``a`` element gives) or any element's ``id=…``
_HTML_ID = re.compile(
    r"""<(?:a\s[^<>]*?(?<![\w-])name|[A-Za-z][A-Za-z0-9-]*\s[^<>]*?(?<![\w-])id)"""
    r"""\s*=\s*["']?([^"'\s<>]+)""",
    re.IGNORECASE,
)


def html_ids(body: str, first_line: int = 1) -> dict[str, int]:
    """The anchor names HTML tags in ``body`` (its first line is file line ``first_line``)
    give outside code, each with its file line (the first, when a name is given twice)."""
    found: dict[str, int] = {}
    if "<" not in body:
        return found
    code = {n for start, end in code_ranges(body, first_line) for n in range(start, end + 1)}
    lines = [
        "" if n in code else code_spans_blanked(text)
        for n, text in enumerate(body.split("\n"), first_line)
    ]
    for n, text in enumerate(comments_blanked("\n".join(lines)).split("\n"), first_line):
        if "<" in text:
            for name in _HTML_ID.findall(text):
                found.setdefault(name, n)
    return found
