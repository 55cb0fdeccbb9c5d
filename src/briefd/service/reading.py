"""Reading a long document in parts (I1, I2): ``get_document`` with ``max_tokens`` answers
whole sections from ``start_line`` while they fit, and says where the rest starts. An agent's
client refuses or sets aside a tool answer past its own limit (Claude Code: 25,000 tokens, or
50,000 characters moved to a file), so a reference page of 35,000 tokens is read part by part.
The budget is the answer as the client receives it: the text, and each section's and link's
fields. Pure: what things cost is passed in."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from briefd.errors import QueryError
from briefd.model import Chunk, DocumentView, ResolvedLink


@dataclass(frozen=True, slots=True)
class Part:
    """The file lines a part of a document shows, and the line the next part starts at (None:
    this part reaches the end)."""

    start_line: int
    end_line: int
    last_line: int
    next_start_line: int | None
    tokens: int  # what the part's text, sections and links cost
    sections: int  # the document's sections, all parts
    links: int  # the links written in the document, all parts
    backlinks: int = 0  # the links to the document, all parts (a part lists some or none)


@dataclass(frozen=True, slots=True)
class Costs:
    """What an answer's parts cost in tokens: text, a section's fields, a link's fields."""

    text: Callable[[str], int]
    section: Callable[[Chunk], int]
    link: Callable[[ResolvedLink], int]


BACKLINKS_SHARE = 4  # a document in parts lists backlinks in at most 1/4 of its first part


def read_within(
    view: DocumentView,
    start_line: int | None,
    max_tokens: int | None,
    fields: Callable[[DocumentView], int],
    costs: Costs,
) -> tuple[DocumentView, Part | None]:
    """:func:`read_part` within ``max_tokens`` for the whole answer, ``fields`` being what the
    document's other fields cost. A document read in parts lists its backlinks in its first
    part only, as many as fit a quarter of ``max_tokens`` (front-matter relations such as
    ``supersedes`` first, then one per linking document, then the rest): a page linked 300
    times (Node's errors.md) spent the whole budget on them in every part, whose text was then
    one line."""
    if max_tokens is None:  # the rest, whole, its backlinks with it
        shown, part = read_part(view, start_line, None, costs)
        return shown, None if part is None else replace(part, backlinks=len(view.backlinks))
    shown, part = read_part(view, start_line, max(max_tokens - fields(view), 1), costs)
    if part is None or not view.backlinks:
        return shown, part
    first = start_line is None or start_line == view.body_start_line
    room = max_tokens // BACKLINKS_SHARE if first else 0
    listed = replace(view, backlinks=_backlinks_within(view.backlinks, room, costs.link))
    budget = max(max_tokens - fields(listed), 1)
    # a part even when the whole text fits once backlinks are cut: it says how many there are
    shown, part = read_part(listed, start_line, budget, costs, as_part=True)
    assert part is not None
    return shown, replace(part, backlinks=len(view.backlinks))


def _backlinks_within(
    backlinks: Sequence[ResolvedLink], budget: int, cost: Callable[[ResolvedLink], int]
) -> tuple[ResolvedLink, ...]:
    """The backlinks that fit ``budget``, in their order: relations first, then the first
    link of each linking document, then the others."""
    seen: set[str] = set()
    ranked: list[tuple[int, int]] = []  # (rank, index)
    for index, r in enumerate(backlinks):
        first_of_source = r.link.source_path not in seen
        seen.add(r.link.source_path)
        ranked.append((0 if r.link.kind == "relation" else 1 if first_of_source else 2, index))
    kept, used = [], 0
    for _, index in sorted(ranked):
        tokens = cost(backlinks[index])
        if used + tokens <= budget:
            kept.append(index)
            used += tokens
    return tuple(backlinks[index] for index in sorted(kept))


def read_part(
    view: DocumentView,
    start_line: int | None,
    max_tokens: int | None,
    costs: Costs,
    as_part: bool = False,
) -> tuple[DocumentView, Part | None]:
    """The document from ``start_line`` (None: its first line) as far as whole sections fit
    ``max_tokens`` (a section that alone does not fit is cut between lines), its sections and
    links within those lines; the part is None when the whole document is shown."""
    lines = view.body.split("\n")
    first, last = view.body_start_line, view.body_start_line + len(lines) - 1
    start = first if start_line is None else start_line
    if not first <= start <= last:
        raise QueryError(
            f"start_line {start} is outside {view.path}, whose text is lines {first}-{last}; "
            f"give a line from a section's start_line, or leave it out to start at the top"
        )
    if max_tokens is None and start == first:
        return view, None
    reader = _Reader(view, lines, costs)
    if max_tokens is None:  # the rest, whole
        end, used = last, reader.cost(start, last)
    else:
        end, used = reader.whole_sections(start, max_tokens)
        if end < start:  # the first section alone is over the budget: as many lines as fit
            end, used = reader.lines(start, max_tokens)
    if start == first and end == last and not as_part:
        return view, None
    part = Part(
        start_line=start,
        end_line=end,
        last_line=last,
        next_start_line=end + 1 if end < last else None,
        tokens=used,
        sections=len(view.chunks),
        links=len(view.links),
    )
    shown = replace(
        view,
        body=reader.text(start, end),
        chunks=tuple(reader.sections(start, end)),
        links=tuple(reader.links(start, end)),
        body_start_line=start,
    )
    return shown, part


class _Reader:
    """One document's lines, sections and links by file line, and what spans of them cost."""

    def __init__(self, view: DocumentView, lines: Sequence[str], costs: Costs) -> None:
        self.view, self._lines, self.costs = view, lines, costs
        self.first = view.body_start_line
        self.last = self.first + len(lines) - 1
        self._sections = sorted(view.chunks, key=lambda c: c.start_line)
        self._link_cost: dict[int, int] = {}  # file line → the fields of the links on it
        for r in view.links:
            self._link_cost[r.link.line] = self._link_cost.get(r.link.line, 0) + costs.link(r)

    def text(self, start: int, end: int) -> str:
        return "\n".join(self._lines[start - self.first : end - self.first + 1])

    def sections(self, start: int, end: int) -> list[Chunk]:
        return [c for c in self._sections if c.end_line >= start and c.start_line <= end]

    def links(self, start: int, end: int) -> list[ResolvedLink]:
        return [r for r in self.view.links if start <= r.link.line <= end]

    def cost(self, start: int, end: int) -> int:
        """Lines ``start``–``end`` with the fields of their sections and links."""
        return (
            self.costs.text(self.text(start, end))
            + sum(self.costs.section(c) for c in self.sections(start, end))
            + sum(self._link_cost.get(line, 0) for line in range(start, end + 1))
        )

    def whole_sections(self, start: int, budget: int) -> tuple[int, int]:
        """The last line of the sections from ``start`` that fit ``budget`` together (start -
        1: not even the first), and their cost; the lines after the last section come with
        it."""
        end, used = start - 1, 0
        ahead = [c for c in self._sections if c.end_line >= start]
        for index, chunk in enumerate(ahead):
            upto = self.last if index == len(ahead) - 1 else chunk.end_line
            # its text as JSON escapes it (a section's indexed tokens are its raw text's)
            tokens = self.cost(max(start, end + 1), upto) + 1  # and the line break before
            if used + tokens > budget:
                break
            end, used = upto, used + tokens
        return end, used

    def lines(self, start: int, budget: int) -> tuple[int, int]:
        """The last line of the lines from ``start`` that fit ``budget`` (one at least), and
        their cost with the fields of the section they are in."""
        used = self.cost(start, start)
        end = start
        while end < self.last:
            line = end + 1
            tokens = self.costs.text(self.text(line, line)) + 1  # and its line break
            tokens += self._link_cost.get(line, 0)
            tokens += sum(self.costs.section(c) for c in self._sections if c.start_line == line)
            if used + tokens > budget:
                break
            end, used = line, used + tokens
        return end, used
