"""Runs of spaces, line breaks and paragraph marks in what :mod:`briefd.atlassian.convert`
makes of a page, read in time linear in their length: patterns with runs of ``\\s*`` side by
side, tried from every place in a run, cost a table cell of 20,000 spaces 6-28 s."""

from __future__ import annotations

import re

from bs4 import BeautifulSoup
from bs4.element import NavigableString

PARAGRAPH = "\ue002"  # where a paragraph in a table cell starts or ends, until convert_td
# a run of spaces, line breaks and paragraph marks in a cell (one with a mark is one <br>): its
# alternatives differ in their first character, so each character is read once
_SPACE_RUN = re.compile(r"[\t ]{2,}")
CELL_RUN = re.compile("(?:\\s|<br>|\ue002)+")


def blank_tail_cut(code: str) -> str:
    """``code`` without the blank lines after it (from the first line break after its last
    text, not its last line's spaces), in time linear in its length."""
    cut = code.find("\n", len(code.rstrip(" \t\n")))
    return code if cut < 0 else code[:cut]


def cell_ends_cut(text: str) -> str:
    """A cell's text without the spaces, line breaks and paragraph marks at its ends."""
    runs = list(CELL_RUN.finditer(text))
    start = runs[0].end() if runs and runs[0].start() == 0 else 0
    end = runs[-1].start() if runs and runs[-1].end() == len(text) else len(text)
    return text[start : max(start, end)]


def paragraph_break(run: re.Match[str]) -> str:
    """A run in a cell: one ``<br>`` where a paragraph starts or ends in it, else as it is."""
    return "<br>" if PARAGRAPH in run.group() else run.group()


def spaces_collapsed(soup: BeautifulSoup) -> None:
    """Each run of spaces and tabs outside ``<pre>`` made one space, as markdownify makes it:
    before it does, since its pattern for line breaks among spaces tries a run without one
    from every place in it (a paragraph of 20,000 spaces: 4.7 s). The Markdown is the same."""
    for text in soup.find_all(string=_SPACE_RUN):
        if type(text) is NavigableString and text.find_parent("pre") is None:
            text.replace_with(_SPACE_RUN.sub(" ", text))
