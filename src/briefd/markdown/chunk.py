"""Chunking (K4): H1–H3 sections with breadcrumbs, split on block boundaries above the limit.

Pure functions. A section becomes one chunk when it fits ``max_tokens``; a longer one is cut
between top-level blocks (paragraphs, lists, tables, code blocks) into parts of at most
``target_tokens``, falling back to lines and then words only for a single oversized block.
A part cut inside fenced code, a table or an HTML block stays well-formed (see ``wrap``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise

from briefd.markdown.blobs import without_blobs
from briefd.markdown.datauri import GONE, elided_lines, shown
from briefd.markdown.parse import Structure
from briefd.markdown.wrap import (
    Run,
    Wrap,
    between,
    containing,
    is_blank,
    runs,
    smaller,
    wraps_within,
)
from briefd.model import Chunk, Heading
from briefd.text import caseless

TokenCounter = Callable[[str], int]
_REMEMBERED_CHARS = 20_000  # texts this long are counted once per document


@dataclass(frozen=True, slots=True)
class Section:
    heading: str
    heading_path: tuple[str, ...]
    anchor: str | None
    start_line: int  # the heading line, or the first line for text before any heading
    content_start: int
    end_line: int


@dataclass(frozen=True, slots=True)
class _Piece:
    text: str
    start_line: int
    end_line: int
    tokens: int
    partial: bool = False  # a cut through one line: the part's text cannot be re-read from lines


def chunk_id(doc_path: str, heading_path: Sequence[str], suffix: str = "") -> str:
    """hash(doc_path + heading_path): stable while the section keeps its place in the outline."""
    key = doc_path + "\x00" + " > ".join(heading_path) + suffix
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sections(structure: Structure, title: str, first_line: int, last_line: int) -> list[Section]:
    """Cut the body (file lines ``first_line``..``last_line``) into H1–H3 sections. The first
    H1 is left out of heading paths only when it is the document's title (every breadcrumb
    starts with the title); an H1 other than a front-matter title stays in them, as any
    heading does (left out, its words were in no indexed field)."""
    bounds = [
        (heading, span)
        for heading, span in zip(structure.headings, structure.heading_spans, strict=True)
        if heading.level <= 3
    ]
    result: list[Section] = []
    first_body_end = bounds[0][1][0] - 1 if bounds else last_line
    if first_body_end >= first_line:
        result.append(Section(title, (), None, first_line, first_line, first_body_end))
    stack: list[Heading] = []
    first_h1 = next((h for h, _ in bounds if h.level == 1), None)
    title_heading = first_h1 if first_h1 and same_title(first_h1.text, title) else None
    for index, (heading, (span_start, span_end)) in enumerate(bounds):
        while stack and stack[-1].level >= heading.level:
            stack.pop()
        stack.append(heading)
        path = tuple(h.text for h in stack if h is not title_heading)
        end = bounds[index + 1][1][0] - 1 if index + 1 < len(bounds) else last_line
        result.append(Section(heading.text, path, heading.anchor, span_start, span_end + 1, end))
    return result


def same_title(heading: str, title: str) -> bool:
    """Whether an H1 says what the title says: compared case-folded, spaces collapsed, without
    closing punctuation or dashes, nor the quotes around it ("Refund policy." and "“Refund
    policy” —" are the title "refund  policy"; "Refund policy v2" is another heading)."""
    return _title_key(heading) == _title_key(title)


def _title_key(text: str) -> str:
    key = " ".join(caseless(text).split())
    return key.rstrip(_CLOSING_MARKS + _DASHES + _QUOTES + " ").lstrip(_QUOTES + " ")


_CLOSING_MARKS = ".,:;!?…。！？："
_DASHES = "-‐‒–—―"
_QUOTES = "\"'“”‘’«»„‚‹›「」『』"


def chunk_document(
    doc_path: str,
    lines: Sequence[str],
    structure: Structure,
    title: str,
    first_line: int,
    count: TokenCounter,
    target_tokens: int = 500,
    max_tokens: int = 800,
) -> tuple[Chunk, ...]:
    """Chunks of one document; ``lines`` are the whole file's lines (index = line - 1). Their
    text holds a ``data:`` URI's payload and a long run of base64 or hex as a marker
    (``datauri``, ``blobs``), the file's lines as they are otherwise."""
    lines = without_blobs(elided_lines(lines))[0]
    chunks: list[Chunk] = []
    seen: dict[str, int] = {}
    count = _remembering(_without_gone(count) if GONE in lines else count)
    last_line = len(lines)
    found = sections(structure, title, first_line, last_line)
    levels = {heading.line: heading for heading in structure.headings}
    carried: list[Heading] = []  # the headings of empty sections, for the next one's text
    for section in found:
        pieces = _section_pieces(section, lines, structure, count, target_tokens, max_tokens)
        heading = levels.get(section.start_line)
        pieces, carried = _carry(section, pieces, carried, heading, count, max_tokens)
        base_key = " > ".join(section.heading_path)
        occurrence = seen.get(base_key, 0)
        seen[base_key] = occurrence + 1
        dup = f"\x00#{occurrence}" if occurrence else ""
        for part, piece in enumerate(pieces):
            text = shown(piece.text)
            if not text.strip():  # only lines a wrapped payload took
                continue
            suffix = dup + (f"\x00part{part}" if part else "")
            chunks.append(
                Chunk(
                    id=chunk_id(doc_path, section.heading_path, suffix),
                    doc_path=doc_path,
                    heading=section.heading,
                    heading_path=section.heading_path,
                    anchor=section.anchor,
                    content=text,
                    tokens=piece.tokens,
                    content_hash=content_hash(text),
                    position=len(chunks),
                    start_line=min(section.start_line, piece.start_line)
                    if part == 0
                    else piece.start_line,
                    end_line=piece.end_line,
                )
            )
    if not chunks and structure.headings:
        return _outline(doc_path, found, structure, count, max_tokens)
    return tuple(chunks)


def _carry(
    section: Section,
    pieces: list[_Piece],
    carried: list[Heading],
    heading: Heading | None,
    count: TokenCounter,
    limit: int,
) -> tuple[list[_Piece], list[Heading]]:
    """An empty section's heading goes into the text of the next section that has some, unless
    that one's breadcrumb holds it: an overloaded signature written as two headings in a row
    (``## util.inspect(object[, options])`` over ``## util.inspect(object[, showHidden])``)
    was in no chunk, and its words in no search. The first piece then starts at the first
    such heading's line, unless the headings would take it past ``limit`` tokens. Returns the
    pieces and what is carried on."""
    if not pieces:
        if heading is not None and section.heading_path:
            carried = [*carried, heading]
        return pieces, carried
    held = [h for h in carried if h.text not in section.heading_path]
    if not held:
        return pieces, []
    first = pieces[0]
    text = "\n".join(map(_outline_line, held)) + "\n\n" + first.text
    tokens = count(text)
    if tokens > limit:
        return pieces, []
    carrying = replace(first, text=text, tokens=tokens, start_line=held[0].line)
    return [carrying, *pieces[1:]], []


def _without_gone(count: TokenCounter) -> TokenCounter:
    """``count`` of a text as it is shown: the lines a wrapped payload took cost nothing."""
    return lambda text: count(shown(text))


def _remembering(count: TokenCounter) -> TokenCounter:
    """``count`` that counts a long text once: an oversized section is counted as the section,
    as its block and as its run before it is cut (a 2 MB line cost seconds each time)."""
    long_texts: dict[str, int] = {}

    def counted(text: str) -> int:
        if len(text) < _REMEMBERED_CHARS:
            return count(text)
        tokens = long_texts.get(text)
        if tokens is None:
            tokens = long_texts[text] = count(text)
        return tokens

    return counted


def _outline(
    doc_path: str,
    found: Sequence[Section],
    structure: Structure,
    count: TokenCounter,
    limit: int,
) -> tuple[Chunk, ...]:
    """The chunks of a document that has headings and no text under any of them (a stub): its
    headings as an outline, so the document can still be found by what it is about; a long
    one (a table of contents) in parts of at most ``limit`` tokens, as any section is."""
    groups: list[list[Heading]] = [[]]
    held = 0
    for heading in structure.headings:
        line = _outline_line(heading)
        size = count(line) + 1
        if groups[-1] and held + size > limit:
            groups.append([])
            held = 0
        groups[-1].append(heading)
        held += size
    by_line = {section.start_line: section for section in found}
    chunks = []
    for part, group in enumerate(groups):
        first = found[0] if part == 0 else by_line.get(group[0].line, found[0])
        end = found[-1].end_line if part == len(groups) - 1 else groups[part + 1][0].line - 1
        text = "\n".join(_outline_line(h) for h in group)
        chunks.append(
            Chunk(
                id=chunk_id(doc_path, found[0].heading_path, f"\x00part{part}" if part else ""),
                doc_path=doc_path,
                heading=first.heading,
                heading_path=first.heading_path,
                anchor=first.anchor,
                content=text,
                tokens=count(text),
                content_hash=content_hash(text),
                position=part,
                start_line=found[0].start_line if part == 0 else group[0].line,
                end_line=end,
            )
        )
    return tuple(chunks)


def _outline_line(heading: Heading) -> str:
    return f"{'#' * heading.level} {heading.text}"


def _section_pieces(
    section: Section,
    lines: Sequence[str],
    structure: Structure,
    count: TokenCounter,
    target: int,
    limit: int,
) -> list[_Piece]:
    start, end = _trim(lines, section.content_start, section.end_line)
    if start > end:
        return []
    whole = _join(lines, start, end)
    tokens = count(whole)
    if tokens <= limit:
        return [_Piece(whole, start, end, tokens)]
    wraps = wraps_within(structure, lines, start, end, count, target)
    units: list[_Piece] = []
    for unit_start, unit_end in _units(structure.blocks, start, end):
        units.extend(_fit(lines, unit_start, unit_end, count, target, wraps))
    return _pack(units, lines, count, target, limit, wraps)


def _trim(lines: Sequence[str], start: int, end: int) -> tuple[int, int]:
    while start <= end and not lines[start - 1].strip():
        start += 1
    while end >= start and not lines[end - 1].strip():
        end -= 1
    return start, end


def _join(lines: Sequence[str], start: int, end: int) -> str:
    return "\n".join(lines[start - 1 : end]).strip("\n")


def _units(blocks: Sequence[tuple[int, int]], start: int, end: int) -> list[tuple[int, int]]:
    """Top-level block ranges inside start..end; stray non-blank lines become their own unit."""
    inside = sorted((max(s, start), min(e, end)) for s, e in blocks if s <= end and e >= start)
    units: list[tuple[int, int]] = []
    cursor = start
    for s, e in inside:
        if s > cursor:
            units.append((cursor, s - 1))
        if e >= s:
            units.append((s, e))
        cursor = max(cursor, e + 1)
    if cursor <= end:
        units.append((cursor, end))
    return units


def _fit(
    lines: Sequence[str],
    start: int,
    end: int,
    count: TokenCounter,
    target: int,
    wraps: Sequence[Wrap],
) -> list[_Piece]:
    """One block as pieces of at most ``target`` tokens: whole, else by runs (a line, or a
    fence, table or HTML block inside it), else by lines, else by words."""
    start, end = _trim(lines, start, end)
    if start > end:
        return []
    text = _join(lines, start, end)
    tokens = count(text)
    if tokens <= target:
        return [_Piece(text, start, end, tokens)]
    return [
        piece
        for run in runs(lines, start, end, wraps)
        for piece in _fit_run(lines, run, count, target, wraps)
    ]


def _fit_run(
    lines: Sequence[str], run: Run, count: TokenCounter, target: int, wraps: Sequence[Wrap]
) -> list[_Piece]:
    """Whole, else cut at blank lines, else atom by atom; inside a fence, table or HTML block
    the budget leaves room for the lines a part cut there gets."""
    start, end = run[0][0], run[-1][1]
    wrap = containing(wraps, start)
    budget = max(1, target - wrap.extra_tokens(start, end)) if wrap else target
    text = _join(lines, start, end)
    tokens = count(text)
    if tokens <= budget:
        return [_Piece(text, start, end, tokens)]
    if len(run) > 1:
        return [
            p for sub in smaller(lines, run) for p in _fit_run(lines, sub, count, target, wraps)
        ]
    if start == end:
        return _split_line(text, start, count, budget, wrap.indent if wrap else "")
    pieces: list[_Piece] = []
    for line in range(start, end + 1):
        if not is_blank(lines[line - 1]):
            pieces.extend(_fit_run(lines, ((line, line),), count, target, wraps))
        elif pieces:  # a blank code line stays with the line before it
            pieces[-1] = replace(pieces[-1], end_line=line)
    return _held_together(pieces, wrap, count)


def _held_together(pieces: list[_Piece], wrap: Wrap | None, count: TokenCounter) -> list[_Piece]:
    """An atom cut line by line (its inner line was too long): the opening line (a fence's, a
    table's header rows) stays with the first piece of what it opens, the closing line with
    the last piece before it, so no part ends on an empty block or starts with a closing line
    alone (the cut then falls inside the block: the parts around it close and reopen it)."""
    if wrap is None or len(pieces) < 2:
        return pieces
    lead = sum(1 for piece in pieces if piece.start_line < wrap.body)
    if 0 < lead < len(pieces):
        pieces = [_merged(pieces[: lead + 1], count), *pieces[lead + 1 :]]
    if wrap.closed and wrap.tail and len(pieces) > 1 and pieces[-1].start_line == wrap.end:
        pieces = [*pieces[:-2], _merged(pieces[-2:], count)]
    return pieces


def _merged(group: Sequence[_Piece], count: TokenCounter) -> _Piece:
    """Pieces of consecutive lines of one block as one (a line break between them)."""
    text = "\n".join(piece.text for piece in group)
    partial = any(piece.partial for piece in group)
    return _Piece(text, group[0].start_line, group[-1].end_line, count(text), partial)


def _split_line(
    text: str, line: int, count: TokenCounter, target: int, indent: str
) -> list[_Piece]:
    """A line over ``target`` cut by words; inside a fence or HTML block in a list item or block
    quote every piece keeps the indent, so it stays inside."""
    if not indent:
        return _split_words(text, line, count, target)
    body = text[len(indent) :] if text.startswith(indent) else text.lstrip(" \t>")
    room = max(1, target - count(indent) - 1)
    return [
        replace(piece, text=indent + piece.text, tokens=count(indent + piece.text))
        for piece in _split_words(body, line, count, room)
    ]


def _split_words(text: str, line: int, count: TokenCounter, target: int) -> list[_Piece]:
    pieces: list[_Piece] = []
    current: list[str] = []
    used = 0
    costs: dict[str, int] = {}  # words repeat: a 2 MB line counted word by word took seconds
    for word in re.findall(r"\S+", text):
        cost = costs.get(word)
        if cost is None:
            cost = costs[word] = count(word) + 1
        if current and used + cost > target:
            piece = " ".join(current)
            pieces.append(_Piece(piece, line, line, count(piece), partial=True))
            current, used = [], 0
        if cost > target:  # one "word" longer than a chunk: cut it by characters
            pieces.extend(_split_chars(word, line, count, target))
            continue
        current.append(word)
        used += cost
    if current:
        piece = " ".join(current)
        pieces.append(_Piece(piece, line, line, count(piece), partial=True))
    return pieces


def _split_chars(word: str, line: int, count: TokenCounter, target: int) -> list[_Piece]:
    """A run without spaces (a Chinese or Japanese paragraph, a long URL) cut into pieces
    within ``target``, each after its last sentence or clause mark when it has one in its
    second half, rather than inside a word."""
    pieces = []
    position = 0
    while position < len(word):
        size = _fitting(word, position, count, target)
        if position + size < len(word):
            size = _after_mark(word, position, size)
        piece = word[position : position + size]
        pieces.append(_Piece(piece, line, line, count(piece), partial=True))
        position += size
    return pieces


def _fitting(word: str, position: int, count: TokenCounter, target: int) -> int:
    """The most characters of ``word`` from ``position`` within ``target`` tokens (one at
    least), and no more than ``target`` characters (a long URL, a blob: as before)."""
    low, high = 1, min(max(1, target), len(word) - position)
    if count(word[position : position + high]) <= target:
        return high
    while high - low > 1:  # low fits (or is the one character), high does not
        middle = (low + high) // 2
        if count(word[position : position + middle]) <= target:
            low = middle
        else:
            high = middle
    return low


_SENTENCE_ENDS = frozenset("。！？．｡!?")  # CJK, full-width and ASCII sentence marks
_CLAUSE_ENDS = frozenset("；：，、､;")  # where no sentence mark is


def _after_mark(word: str, position: int, size: int) -> int:
    """``size``, or less to end after the last sentence mark in the second half of the piece,
    else after its last clause mark there."""
    for marks in (_SENTENCE_ENDS, _CLAUSE_ENDS):
        for end in range(position + size, position + size // 2, -1):
            if word[end - 1] in marks:
                return end - position
    return size


def _pack(
    units: list[_Piece],
    lines: Sequence[str],
    count: TokenCounter,
    target: int,
    limit: int,
    wraps: Sequence[Wrap],
) -> list[_Piece]:
    """Greedy: add units to the current part while it stays within ``target``, counting the
    lines a part cut inside a fence, table or HTML block gets."""
    parts: list[list[_Piece]] = []
    current: list[_Piece] = []
    used = 0
    for unit in units:
        if current and used + unit.tokens + 2 + _tail_tokens(wraps, unit.end_line) > target:
            parts.append(current)
            current, used = [], _head_tokens(wraps, parts[-1], unit)
        current.append(unit)
        used += unit.tokens + 2
    if current:
        parts.append(current)
    if len(parts) > 1 and sum(u.tokens + 2 for u in parts[-1]) < target // 3:
        merged = parts[-2] + parts[-1]
        head = _head_tokens(wraps, parts[-3], merged[0]) if len(parts) > 2 else 0
        if head + sum(u.tokens + 2 for u in merged) <= limit:
            parts[-2:] = [merged]
    return [_render(parts, index, lines, count, wraps) for index in range(len(parts))]


def _tail_tokens(wraps: Sequence[Wrap], line: int) -> int:
    wrap = containing(wraps, line)
    return wrap.tail_tokens if wrap is not None and wrap.open_after(line) else 0


def _head_tokens(wraps: Sequence[Wrap], before: list[_Piece], first: _Piece) -> int:
    wrap = between(wraps, before[-1].end_line, first.start_line)
    return wrap.head_tokens if wrap is not None else 0


def _render(
    parts: list[list[_Piece]],
    index: int,
    lines: Sequence[str],
    count: TokenCounter,
    wraps: Sequence[Wrap],
) -> _Piece:
    """One part's text: its lines, reopening the fence or HTML block (repeating the table
    header) it starts inside, closing the one it ends inside."""
    group = parts[index]
    first, last = group[0].start_line, group[-1].end_line
    opened = between(wraps, parts[index - 1][-1].end_line, first) if index else None
    following = parts[index + 1][0].start_line if index + 1 < len(parts) else None
    closing = between(wraps, last, following) if following is not None else None
    if closing is None and opened is not None and not opened.closed and last <= opened.end:
        closing = opened  # the last part of a split block that the document never closes
    tail = closing.tail if closing is not None else ""
    if any(u.partial for u in group):
        body = _joined(group, wraps)
    elif tail:
        body = "\n".join(lines[first - 1 : last]).lstrip("\n")  # trailing blank lines are code
    else:
        body = _join(lines, first, last)
    head = opened.head if opened is not None else ""
    text = "\n".join(part for part in (head, body, tail) if part)
    return _Piece(text, first, last, count(text))


def _joined(group: list[_Piece], wraps: Sequence[Wrap]) -> str:
    """Pieces cut through lines: a blank line between them, except inside the same fence or
    HTML block, where a blank line would end a block quote around it."""
    text = group[0].text
    for before, piece in pairwise(group):
        wrap = containing(wraps, piece.start_line)
        same = wrap is not None and wrap.start <= before.end_line
        text += ("\n" if same else "\n\n") + piece.text
    return text
