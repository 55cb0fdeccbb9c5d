"""Reading a long document in parts (I1, I2): ``get_document`` with ``max_tokens`` answers
whole sections from ``start_line`` while they fit, and says where the rest starts. An agent's
client refuses or sets aside a tool answer past its own limit (Claude Code: 25,000 tokens, or
50,000 characters moved to a file), so a reference page of 35,000 tokens is read part by part.
The budget is the answer as the client receives it: the text, and each section's and link's
fields. A line alone over the budget (a data-URI image, minified JSON, a one-line table)
comes in pieces cut between characters, each part saying the line and character the next
starts at. Pure: what things cost is passed in."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from briefd.errors import QueryError
from briefd.model import Chunk, DocumentView, ResolvedLink
from briefd.text import whole_characters


@dataclass(frozen=True, slots=True)
class Part:
    """The file lines a part of a document shows, and the line the next part starts at (None:
    this part reaches the end). A part cut inside a line starts at character ``start_char``
    of ``start_line`` and the next at ``next_start_char`` of ``next_start_line`` (its
    ``end_line``): that line's pieces join without a line break."""

    start_line: int
    end_line: int
    last_line: int
    next_start_line: int | None
    tokens: int  # what the part's text, sections and links cost
    sections: int  # the document's sections, all parts
    links: int  # the links written in the document, all parts
    backlinks: int = 0  # the links to the document, all parts (a part lists some or none)
    start_char: int = 0  # where in start_line the part starts (0: at its start)
    next_start_char: int | None = None  # where in next_start_line the next starts (None: 0)


@dataclass(frozen=True, slots=True)
class Costs:
    """What an answer's parts cost in tokens: text, a section's fields, a link's fields, and
    the fields of a part cut inside a line (``start_char``, ``next_start_char``)."""

    text: Callable[[str], int]
    section: Callable[[Chunk], int]
    link: Callable[[ResolvedLink], int]
    cut: int = 0


BACKLINKS_SHARE = 4  # a document in parts lists backlinks in at most 1/4 of its first part
# the text of a part gets at least 1/4 of max_tokens: a front matter of thousands of tags,
# aliases and refs (every part's fields) took it all, and each part was one character long
BODY_SHARE = 4


def read_within(
    view: DocumentView,
    start_line: int | None,
    max_tokens: int | None,
    fields: Callable[[DocumentView], int],
    costs: Costs,
    start_char: int = 0,
) -> tuple[DocumentView, Part | None]:
    """:func:`read_part` within ``max_tokens`` for the whole answer, ``fields`` being what the
    document's other fields cost. A document read in parts lists its backlinks in its first
    part only, as many as fit a quarter of ``max_tokens`` (front-matter relations such as
    ``supersedes`` first, then one per linking document, then the rest): a page linked 300
    times (Node's errors.md) spent the whole budget on them in every part, whose text was then
    one line. The text gets a quarter of ``max_tokens`` at least: fields over the rest (a
    front matter of thousands of tags) make the answer longer, never a part shorter."""
    if max_tokens is None:  # the rest, whole, its backlinks with it
        shown, part = read_part(view, start_line, None, costs, start_char=start_char)
        return shown, None if part is None else replace(part, backlinks=len(view.backlinks))
    least = max(max_tokens // BODY_SHARE, 1)
    budget = max(max_tokens - fields(view), least)
    shown, part = read_part(view, start_line, budget, costs, start_char=start_char)
    # whole only when the whole answer fits: a short glossary linked from thousands of
    # documents fitted the text's least share, and came with every backlink (250 KB)
    if not view.backlinks or (part is None and budget == max_tokens - fields(view)):
        return shown, part
    first = (start_line is None or start_line == view.body_start_line) and not start_char
    room = max_tokens // BACKLINKS_SHARE if first else 0
    listed = replace(view, backlinks=_backlinks_within(view.backlinks, room, costs.link))
    budget = max(max_tokens - fields(listed), least)
    # a part even when the whole text fits once backlinks are cut: it says how many there are
    shown, part = read_part(listed, start_line, budget, costs, True, start_char)
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
    start_char: int = 0,
) -> tuple[DocumentView, Part | None]:
    """The document from ``start_line`` (None: its first line) and ``start_char`` within it as
    far as whole sections fit ``max_tokens`` (a section that alone does not fit is cut between
    lines, a line that alone does not fit between characters), its sections and links within
    those lines; the part is None when the whole document is shown."""
    lines = view.body.split("\n")
    first, last = view.body_start_line, view.body_start_line + len(lines) - 1
    start = first if start_line is None else start_line
    if not first <= start <= last:
        raise QueryError(
            f"start_line {start} is outside {view.path}, whose text is lines {first}-{last}; "
            f"give a line from a section's start_line, or leave it out to start at the top"
        )
    if start_char and start_char >= len(lines[start - first]):
        raise QueryError(
            f"start_char {start_char} is past line {start} of {view.path}, which has "
            f"{len(lines[start - first])} characters; give a part's next_start_char, or 0"
        )
    if max_tokens is None and start == first and not start_char:
        return view, None
    reader = _Reader(view, lines, costs)
    span = reader.span(start, start_char, max_tokens)
    if span.whole(first, last) and not as_part:
        return view, None
    cut = span.end_char is not None
    part = Part(
        start_line=start,
        end_line=span.end,
        last_line=last,
        next_start_line=span.end if cut else span.end + 1 if span.end < last else None,
        tokens=span.used,
        sections=len(view.chunks),
        links=len(view.links),
        start_char=start_char,
        next_start_char=span.end_char,
    )
    shown = replace(
        view,
        body=reader.text(start, span.end, start_char, span.end_char),
        chunks=span.sections,
        links=span.links,
        body_start_line=start,
    )
    return shown, part


@dataclass(frozen=True, slots=True)
class _Span:
    """What a part holds: up to line ``end`` (up to character ``end_char`` of it, None: the
    whole line), what it costs, and the sections and links it lists."""

    start: int
    start_char: int
    end: int
    end_char: int | None
    used: int
    sections: tuple[Chunk, ...]
    links: tuple[ResolvedLink, ...]

    def whole(self, first: int, last: int) -> bool:
        return (self.start, self.start_char, self.end, self.end_char) == (first, 0, last, None)


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

    def text(self, start: int, end: int, start_char: int = 0, end_char: int | None = None) -> str:
        """Lines ``start``–``end``, from character ``start_char`` of the first up to
        ``end_char`` of the last (None: all of it)."""
        lines = self._lines[start - self.first : end - self.first + 1]
        if start_char or end_char is not None:
            lines = list(lines)
            lines[-1] = lines[-1][:end_char]
            lines[0] = lines[0][start_char:]
        return "\n".join(lines)

    def sections(self, start: int, end: int) -> list[Chunk]:
        return [c for c in self._sections if c.end_line >= start and c.start_line <= end]

    def links(self, start: int, end: int) -> list[ResolvedLink]:
        return [r for r in self.view.links if start <= r.link.line <= end]

    def cost(self, start: int, end: int, start_char: int = 0, budget: int | None = None) -> int:
        """Lines ``start``–``end`` (from character ``start_char``) with the fields of their
        sections and links (a line cut before is listed its links with its first piece). With
        ``budget``, a cost over it is some number over it (:meth:`within`)."""
        after = start + 1 if start_char else start
        fields = sum(self.costs.section(c) for c in self.sections(start, end))
        fields += sum(self._link_cost.get(line, 0) for line in range(after, end + 1))
        text = self.text(start, end, start_char)
        if budget is None:
            return fields + self.costs.text(text)
        return fields + self.within(text, budget - fields)

    def within(self, text: str, limit: int) -> int:
        """What ``text`` costs, or some number over ``limit`` when it is over: a text of
        twice ``limit`` characters or more is counted first in prefixes of at most half of it,
        ``limit`` characters long, then four times longer each, while they fit (a 1.2 MB line
        was counted whole by each part that met it)."""
        size = max(limit, 1)
        while 2 * size <= len(text):
            if (tokens := self.costs.text(text[:size])) > limit:
                return tokens
            size *= 4
        return self.costs.text(text)

    def whole_sections(self, start: int, budget: int) -> tuple[int, int]:
        """The last line of the sections from ``start`` that fit ``budget`` together (start -
        1: not even the first), and their cost; the lines after the last section come with
        it."""
        end, used = start - 1, 0
        ahead = [c for c in self._sections if c.end_line >= start]
        for index, chunk in enumerate(ahead):
            upto = self.last if index == len(ahead) - 1 else chunk.end_line
            # its text as JSON escapes it (a section's indexed tokens are its raw text's)
            tokens = self.cost(max(start, end + 1), upto, budget=budget - used - 1) + 1  # and \n
            if used + tokens > budget:
                break
            end, used = upto, used + tokens
        return end, used

    def span(self, start: int, start_char: int, budget: int | None) -> _Span:
        """What the part from ``start`` (character ``start_char``) holds within ``budget``
        (None: the rest, whole): whole sections while they fit, else whole lines, else a
        piece of the line."""
        if budget is None:
            used, end = self.cost(start, self.last, start_char), self.last
            after = start + 1 if start_char else start  # a cut line's links: in its first piece
            listed = tuple(self.links(after, end))
            return _Span(start, start_char, end, None, used, self._shown(start, end), listed)
        if not start_char:
            end, used = self.whole_sections(start, budget)
            if end < start:  # the first section alone is over the budget: as many lines as fit
                end, used = self.lines(start, budget)
            if end > start or used <= budget:
                listed = tuple(self.links(start, end))
                span = _Span(start, 0, end, None, used, self._shown(start, end), listed)
                return self._filled(span, budget)
        return self.piece(start, start_char, budget)

    def _filled(self, span: _Span, budget: int) -> _Span:
        """``span`` of whole lines, and when the line after it alone is over ``budget`` (it
        comes in pieces whichever part meets it), its first piece in the room left: a part
        from the top of a document whose third line is a 30,000-token paragraph held the title
        alone (46 tokens of 8,000), and only the next call began the paragraph."""
        line, room = span.end + 1, budget - span.used - 1  # and the line break before it
        if line > self.last or room < budget // 4:
            return span
        if self.within(self._lines[line - self.first], budget) <= budget:  # a part holds it
            return span
        piece = self.piece(line, 0, room)
        if piece.end_char is None:  # counted whole after all: the next part holds it
            return span
        held = {c.id for c in span.sections}
        sections = span.sections + tuple(c for c in piece.sections if c.id not in held)
        used = span.used + 1 + piece.used
        links = span.links + piece.links
        return _Span(span.start, 0, line, piece.end_char, used, sections, links)

    def _shown(self, start: int, end: int) -> tuple[Chunk, ...]:
        return tuple(self.sections(start, end))

    def piece(self, line: int, at: int, budget: int) -> _Span:
        """A line alone over ``budget`` from character ``at``: as much of it as fits. Its
        first piece lists the fields of the sections it is in and of its links as far as they
        fit half the budget (a line cut into 80 sections listed them all in every piece, whose
        text was then 400 characters), later pieces none; when the rest of the line fits, the
        lines after it come too, as far as they fit."""
        text = self._lines[line - self.first]
        shown: list[Chunk] = []
        listed: list[ResolvedLink] = []
        used = 0
        if not at:
            for chunk in self.sections(line, line):
                if used + (tokens := self.costs.section(chunk)) <= budget // 2:
                    shown.append(chunk)
                    used += tokens
            for r in self.links(line, line):
                if used + (tokens := self.costs.link(r)) <= budget // 2:
                    listed.append(r)
                    used += tokens
        end, tokens = self._cut(text, at, budget - used - self.costs.cut)
        if end == len(text):  # the rest of the line fits: the lines after it as far as they fit
            end, used = self._after(line, used + tokens, budget)
            shown += [c for c in self._sections if line < c.start_line <= end]
            listed += self.links(line + 1, end)
            return _Span(line, at, end, None, used, tuple(shown), tuple(listed))
        return _Span(line, at, line, end, used + tokens, tuple(shown), tuple(listed))

    def _cut(self, text: str, at: int, room: int) -> tuple[int, int]:
        """Where a piece of ``text`` from ``at`` that fits ``room`` ends, and its cost: the
        end of the line when the rest fits, else after whole characters
        (:func:`whole_characters`), after a whitespace near there if there is one; one
        character at least. The end is found in windows (:meth:`_reach`), then the piece is
        counted: never the rest of a long line, about twice what the piece holds."""
        reach = self._reach(text, at, room)
        near = len(text) - reach <= (reach - at) // _NEAR_END  # the rest may fit: counted whole
        if near and (tokens := self.costs.text(text[at:])) <= room:
            return len(text), tokens
        end = whole_characters(text, reach, at)
        for index in range(end - 1, max(at, end - min(_SPACE_WINDOW, (end - at) // 2)), -1):
            if text[index].isspace() and whole_characters(text, index + 1, at) == index + 1:
                end = index + 1
                break
        tokens = self.costs.text(text[at:end])
        while end > at + 1 and tokens > room:  # the windows counted less than the piece
            over = (tokens - room) * (end - at) // tokens + 1  # characters, about
            end = whole_characters(text, max(at + 1, end - over), at)
            tokens = self.costs.text(text[at:end])
        if end <= at:  # not even one character fits: one, whole
            end = at + 1
            while end < len(text) and whole_characters(text, end, at) != end:
                end += 1
            tokens = self.costs.text(text[at:end])
        return end, tokens

    def _reach(self, text: str, at: int, room: int) -> int:
        """About how far from ``at`` the text fits ``room``: windows counted one after the
        other and their costs summed (their text counted at once costs about as much: a
        token less where a window split one), the first ``_FIRST_WINDOW`` characters, each
        next one sized for 9/10 of the room left at the characters a token of the one before;
        one over the room is tried again smaller. Some ten windows, whose characters are about
        the piece's: a piece is found counting about its own length, not the line's."""
        end, left, size = at, room, min(room, _FIRST_WINDOW)
        while end < len(text) and left > 0:
            window = text[end : end + max(1, size)]
            tokens = self.costs.text(window)
            if tokens <= left:
                end, left = end + len(window), left - tokens
            elif len(window) == 1:  # not one more character fits
                break
            size = int(left * len(window) / max(tokens, 1) * _UNDERSHOOT)
        return end

    def lines(self, start: int, budget: int) -> tuple[int, int]:
        """The last line of the lines from ``start`` that fit ``budget`` (one at least), and
        their cost with the fields of the section they are in."""
        return self._after(start, self.cost(start, start, budget=budget), budget)

    def _after(self, end: int, used: int, budget: int) -> tuple[int, int]:
        """The lines after ``end`` that fit ``budget`` with the ``used`` tokens before them."""
        while end < self.last:
            line = end + 1
            fields = self._link_cost.get(line, 0) + 1  # and its line break
            fields += sum(self.costs.section(c) for c in self._sections if c.start_line == line)
            tokens = fields + self.within(self.text(line, line), budget - used - fields)
            if used + tokens > budget:
                break
            end, used = line, used + tokens
        return end, used


_SPACE_WINDOW = 200  # characters before a cut searched for a whitespace to cut after
_FIRST_WINDOW = 256  # characters of a piece counted first, to size the windows after it
_UNDERSHOOT = 0.9  # of the room left a window of a piece is sized for
_NEAR_END = 16  # the rest of a line is counted when within 1/16 past a piece's reach
