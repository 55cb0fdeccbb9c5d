"""Cutting inside fenced code, tables and raw HTML without breaking Markdown (K4).

A chunk part that starts inside a fenced code block reopens it (the same fence string and
info string, the indentation of its list item or block quote) and a part that ends inside
one closes it, so every part is a complete fenced block; an HTML comment or ``<pre>`` block
is closed and reopened the same way; a part that starts inside a table repeats the table's
header and separator rows.

Where a cut may fall: such a block is kept whole when it fits, else cut at its blank lines,
else between lines, but never between an opening line and the first inner line, the last
inner line and the closing line, or a table's separator and its first row. Blank lines
inside stay with the line before them, so the parts give back every inner line.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from briefd.markdown.parse import Fence, HtmlBlock, Structure

Atom = tuple[int, int]  # an inclusive line range no cut falls inside
Run = tuple[Atom, ...]  # consecutive atoms, kept in one part when they fit

_CONTAINER = re.compile(r"[ \t>]*(?:(?:[-+*]|\d{1,9}[.)])[ \t]+[ \t>]*)*")
_MARKER = re.compile(r"[-+*]|\d{1,9}[.)]")


@dataclass(frozen=True, slots=True)
class Wrap:
    """A fence, HTML block or table in a section, and the lines a part cut inside it gets."""

    start: int  # the opening line (fence, ``<!--``, ``<pre>``), or the table's header row
    end: int  # the closing line (or the last line of an unclosed block), or the last row
    body: int  # the first line a part can start at inside it
    head: str  # the reopening line, or the table's header and separator rows
    tail: str  # the closing line; "" for a table
    indent: str  # what its inner lines start with inside a list item or block quote
    closed: bool  # its last line closes it (always true for a table)
    head_tokens: int  # tokens the head adds to a part, its line break included
    tail_tokens: int
    atoms: Run

    def open_after(self, line: int) -> bool:
        """A part ending at ``line`` (and not the block's last line) needs the tail."""
        return bool(self.tail) and self.start <= line < self.end

    def extra_tokens(self, start: int, end: int) -> int:
        """Tokens head and tail add to a part holding lines ``start``..``end`` of it."""
        head = self.head_tokens if start >= self.body else 0
        return head + (self.tail_tokens if self.open_after(end) else 0)


def wraps_within(
    structure: Structure,
    lines: Sequence[str],
    start: int,
    end: int,
    count: Callable[[str], int],
    target: int,
) -> tuple[Wrap, ...]:
    """The fences, HTML blocks and tables that begin in ``start``..``end``, in line order."""
    found: list[Wrap] = [
        _fence_wrap(fence, lines, min(fence.end, end), count, target)
        for fence in structure.fences
        if start <= fence.start <= end
    ]
    found += [
        _html_wrap(block, lines, min(block.end, end), count)
        for block in structure.html
        if start <= block.start <= end
    ]
    for table_start, table_end in structure.tables:
        if start <= table_start <= end:
            table = _table_wrap(lines, table_start, min(table_end, end), count, target)
            if table is not None:
                found.append(table)
    return tuple(sorted(found, key=lambda wrap: wrap.start))


def containing(wraps: Sequence[Wrap], line: int) -> Wrap | None:
    index = bisect.bisect_right(wraps, line, key=lambda wrap: wrap.start) - 1
    if index >= 0 and wraps[index].end >= line:
        return wraps[index]
    return None


def between(wraps: Sequence[Wrap], last: int, first: int) -> Wrap | None:
    """The block a cut falls inside when one part ends at line ``last`` and the next starts at
    line ``first``; None when the cut is outside every one."""
    wrap = containing(wraps, first)
    if wrap is not None and wrap.start <= last and wrap.body <= first:
        return wrap
    return None


def runs(lines: Sequence[str], start: int, end: int, wraps: Sequence[Wrap]) -> list[Run]:
    """The lines ``start``..``end`` as runs: each non-blank line alone, each fence, HTML block
    and table there as one run of its atoms."""
    result: list[Run] = []
    line = start
    while line <= end:
        wrap = containing(wraps, line)
        if wrap is not None and wrap.start == line and wrap.end <= end:
            result.append(wrap.atoms)
            line = wrap.end + 1
            continue
        if not is_blank(lines[line - 1]):
            result.append(((line, line),))
        line += 1
    return result


def smaller(lines: Sequence[str], run: Run) -> list[Run]:
    """``run`` cut before each atom that follows a blank line; atom by atom without one."""
    cut: list[list[Atom]] = []
    for atom in run:
        if not cut or is_blank(lines[atom[0] - 2]):
            cut.append([])
        cut[-1].append(atom)
    if len(cut) == 1:
        return [(atom,) for atom in run]
    return [tuple(atoms) for atoms in cut]


def is_blank(line: str) -> bool:
    """Blank, also inside a block quote (a bare ``>``)."""
    return not line.strip(" \t>")


def _fence_wrap(
    fence: Fence, lines: Sequence[str], end: int, count: Callable[[str], int], target: int
) -> Wrap:
    opener = continuation(lines[fence.start - 1]).rstrip()
    at = opener.find(fence.markup)
    tail = opener[:at] + fence.markup
    head = opener if count(opener) + count(tail) + 2 <= target // 4 else tail  # huge info string
    closed = fence.closed and end == fence.end
    return _enclosing(lines, fence.start, end, (head, tail, opener[:at]), closed, count)


def _html_wrap(
    block: HtmlBlock, lines: Sequence[str], end: int, count: Callable[[str], int]
) -> Wrap:
    opener = continuation(lines[block.start - 1])
    prefix = opener[: opener.find("<")]
    lines_added = (prefix + block.opener, prefix + block.closer, prefix)
    return _enclosing(
        lines, block.start, end, lines_added, block.closed and end == block.end, count
    )


def _enclosing(
    lines: Sequence[str],
    start: int,
    end: int,
    added: tuple[str, str, str],
    closed: bool,
    count: Callable[[str], int],
) -> Wrap:
    """A block with an opening and a closing line: a fence or an HTML block. ``added``: the
    reopening line, the closing line and the indent of the inner lines."""
    head, tail, indent = added
    atoms = _inner_atoms(lines, start, end, closed)
    head_tokens, tail_tokens = count(head) + 1, count(tail) + 1
    return Wrap(start, end, start + 1, head, tail, indent, closed, head_tokens, tail_tokens, atoms)


def _inner_atoms(lines: Sequence[str], start: int, end: int, closed: bool) -> Run:
    """One atom per inner line with the blank lines after it; the opening line goes with the
    first inner line, the closing line with the last."""
    last_inner = end - 1 if closed else end
    filled = [n for n in range(start + 1, last_inner + 1) if not is_blank(lines[n - 1])]
    starts = [start, *filled[1:]]
    ends = [n - 1 for n in starts[1:]] + [end]
    return tuple(zip(starts, ends, strict=True))


def _table_wrap(
    lines: Sequence[str], start: int, end: int, count: Callable[[str], int], target: int
) -> Wrap | None:
    """None for a table without rows to cut between, or whose header is too big to repeat."""
    if end < start + 2:
        return None
    head = continuation(lines[start - 1]) + "\n" + lines[start]
    head_tokens = count(head) + 1
    if head_tokens > target // 4:
        return None
    first: Atom = (start, start + 2)  # header, separator and first row stay together
    rows = tuple((n, n) for n in range(start + 3, end + 1))
    return Wrap(start, end, start + 2, head, "", "", True, head_tokens, 0, (first, *rows))


def continuation(line: str) -> str:
    """``line`` with the list markers in its container prefix (``- ``, ``1. ``, ``> * ``) turned
    into spaces: it continues the list item instead of starting a new one."""
    found = _CONTAINER.match(line)
    prefix = found.group() if found else ""
    blanked = _MARKER.sub(lambda marker: " " * len(marker.group()), prefix)
    return blanked + line[len(prefix) :]
