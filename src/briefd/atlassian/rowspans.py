"""Cells merged over rows (``rowspan``) for the Atlassian HTML → Markdown conversion
(:mod:`briefd.atlassian.convert`): Markdown tables have no merged cells, so a merged cell is
copied into each row it covers; and the tag class the conversion's soup is built of."""

from __future__ import annotations

import copy
from typing import Any

from bs4 import Tag

COPIED = 20_000  # nodes copied into the rows merged cells cover, at most


class Tagged(Tag):
    """A tag whose ``find_parent(name)`` walks up its parents comparing names: bs4 builds a
    filter for each call, and markdownify asks every tag whether it is in a ``<pre>`` — a
    fifth of the time of a large page."""

    def find_parent(self, name: Any = None, attrs: Any = None, **kwargs: Any) -> Tag | None:
        if isinstance(name, str) and not attrs and not kwargs:
            return next((parent for parent in self.parents if parent.name == name), None)
        return super().find_parent(name, attrs, **kwargs)


def span(cell: Tag) -> int:
    """How many columns a cell spans, as markdownify reads ``colspan`` (1 to 1000)."""
    colspan = cell.get("colspan")
    return max(1, min(1000, int(colspan))) if isinstance(colspan, str) and colspan.isdigit() else 1


def rowspans(tags: dict[str, list[Tag]]) -> None:
    """A cell merged down over rows (``rowspan``) copied into each row it covers: Markdown
    tables have no merged cells, and markdownify wrote the cell in its first row only, so
    every cell after it in the rows below moved one column left, under another heading.
    Innermost tables first, so that a copied cell holds its nested table's copies too; up to
    :data:`COPIED` nodes, then an empty cell (tables merged in merged cells doubled a level:
    1 KB of 16 nested ones took 17 s to 3.6 MB of Markdown, 20 hours)."""
    cells = tags.get("td", []) + tags.get("th", [])
    if not any(_count(cell.attrs.get("rowspan")) > 1 for cell in cells):
        return  # (a walk of each table for one took a twentieth of a page of tables' time)
    left = [COPIED]
    for table in reversed(tags.get("table", [])):
        below: dict[int, tuple[int, Tag]] = {}  # column → (rows still covered, cell)
        for row in _own_rows(table):
            below = _merged_into(row, below, left)


def _merged_into(
    row: Tag, below: dict[int, tuple[int, Tag]], budget: list[int]
) -> dict[int, tuple[int, Tag]]:
    """``row`` with copies of the cells merged down into it (``below``) where they sit (empty
    ones once ``budget`` nodes are copied); what stays merged down into the next row."""
    column = 0
    started: dict[int, tuple[int, Tag]] = {}
    for cell in [*row.find_all(["td", "th"], recursive=False), None]:
        while column in below:
            left, merged = below.pop(column)
            size = sum(1 for _ in merged.descendants)
            budget[0] -= size
            copied = copy.copy(merged) if budget[0] >= 0 else Tagged(name=merged.name)
            copied.attrs.pop("rowspan", None)
            if cell is None:
                row.append(copied)
            else:
                cell.insert_before(copied)
            if left > 1:
                started[column] = (left - 1, merged)
            column += span(merged)
        if cell is None:
            return started
        rows = _count(cell.get("rowspan"))
        if rows > 1:
            started[column] = (rows - 1, cell)
        column += span(cell)
    return started


def _own_rows(table: Tag) -> list[Tag]:
    """A table's rows, not those of a table nested in one of its cells."""
    rows: list[Tag] = []
    for child in table.find_all(["thead", "tbody", "tfoot", "tr"], recursive=False):
        rows += [child] if child.name == "tr" else child.find_all("tr", recursive=False)
    return rows


def _count(value: object) -> int:
    """``rowspan`` as a number of rows (1 to 1000; 0, "all the rest", as 1)."""
    return max(1, min(1000, int(value))) if isinstance(value, str) and value.isdigit() else 1
