"""Obsidian block ids (K5): ``[[note#^id]]`` links to the block whose line ends `` ^id``.

Pure, and apart from :mod:`briefd.markdown.links`: the index reads them from a stored body, on
paths (the hook's) that never load the model dataclasses."""

from __future__ import annotations

import bisect
import re
from itertools import accumulate

# an Obsidian block id: `` ^id`` ending a paragraph's or list item's line, or alone on the line
# after a table or quote; ``[[note#^id]]`` links to that block
_BLOCK_ID = re.compile(r"(?:^|[ \t])\^([A-Za-z0-9-]+)[ \t]*$", re.MULTILINE)


def block_ids(body: str, first_line: int = 1) -> dict[str, int]:
    """The block ids ``body`` (its first line is file line ``first_line``) defines, each with
    the file line it ends (the first, when an id is written twice)."""
    found: dict[str, int] = {}
    if "^" not in body:
        return found
    # lines end at \n only, as the chunker and the parser count them: splitlines also ends one
    # at U+2028, U+0085… (text pasted from a web page), and every block after was lines off
    starts = [0, *accumulate(len(line) + 1 for line in body.split("\n"))]
    for match in _BLOCK_ID.finditer(body):
        line = bisect.bisect_right(starts, match.start()) - 1 + first_line
        found.setdefault(match.group(1), line)
    return found
