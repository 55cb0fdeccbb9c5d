"""Choosing what a recall injects (pure): nothing the session already has, best first, within
the token budget and the character cap of the rendered block (the budget is the whole block's,
frame and attribution lines included: see :mod:`briefd.recall.block`). ``count`` is the exact
token counter where the answer may use it, else ``None``: the tokenizer-free bound."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from briefd.recall.block import (
    TRUNCATED,
    Count,
    block_size,
    block_tokens,
    bound_tokens,
    cost,
    frame_tokens,
)
from briefd.text import closed, whole_characters

Section = dict[str, Any]

MARK_TOKENS = 16  # TRUNCATED and its line break, rounded up (cl100k counts 10): the bound
MIN_HEAD_CHARS = 200  # a head shorter than this says too little to be worth injecting
_TRIES = 4  # exact counting: how often a head is cut shorter before it is given up
_GROW = 8  # exact counting: lines a head that fits is lengthened by, at most


HEAD = "head:"  # the session memory's mark of a section whose head alone was injected


def unseen(
    sections: Sequence[Section], seen: Mapping[str, str], whole: bool = False
) -> tuple[list[Section], int]:
    """Sections not injected before in this session (same chunk, same content), and how many
    were left out because they were. A section whose head alone was injected (cut to fit,
    see :func:`given`) counts as injected unless the answer may give whole sections
    (``whole``: the strong tier): the agent has not read the rest of it."""

    def before(section: Section) -> bool:
        had = seen.get(section["chunk_id"])
        return had == section["content_hash"] or (not whole and had == given(section, True))

    fresh = [s for s in sections if not before(s)]
    return fresh, len(sections) - len(fresh)


def given(section: Mapping[str, Any], cut: bool | None = None) -> str:
    """What the session memory keeps for an injected section: its content hash, marked
    :data:`HEAD` when only its head was injected (``cut``; None: read from its content)."""
    if cut is None:
        cut = str(section["content"]).endswith(TRUNCATED)
    return (HEAD if cut else "") + str(section["content_hash"])


def fit(
    sections: Sequence[Section], max_tokens: int, max_chars: int, count: Count | None = None
) -> list[Section]:
    """Greedy in rank order; a section that does not fit is skipped and smaller later ones are
    still tried. When not even the best one fits, its head is kept with a truncation mark."""
    chosen: list[Section] = []
    tokens = frame_tokens(False, count)
    for section in sections:
        if tokens + cost(section, count) > max_tokens:
            continue
        if block_size([*chosen, section]) > max_chars:
            continue
        chosen.append(section)
        tokens += cost(section, count)
    if not chosen and sections:
        head = truncate(sections[0], max_tokens, max_chars, count)
        if head is not None:
            chosen.append(head)
    return chosen


def truncate(
    section: Section,
    max_tokens: int,
    max_chars: int,
    count: Count | None = None,
    after: Sequence[Section] = (),
) -> Section | None:
    """The section's head that fits the block with the sections ``after`` it (pointers).
    Without ``count`` its tokens are counted pro rata from the section's own (its characters
    per token, so a Turkish section is cut as tightly as an English one); with it the whole
    block is counted, and the head cut shorter until it fits."""
    shell = [{**section, "content": "", "tokens": 0}, *after]
    mark = MARK_TOKENS if count is None else count(f"\n{TRUNCATED}")
    # the break before the body (the bound counts it in SEPARATOR_TOKENS)
    room = max_tokens - block_tokens(shell, count) - (0 if count is None else 1) - mark
    content = section["content"]
    per_token = len(content) / max(1, section["tokens"])
    cap = max_chars - block_size(shell) - len(TRUNCATED) - 2  # the head's characters at most
    if count is None:
        chars = min(int((room - 1) * per_token) - len(TRUNCATED) - 2, cap)
    else:  # a first guess, then counted; the shortest head worth reading may fit all the same
        chars = min(max(int(room * per_token), MIN_HEAD_CHARS), cap)
    for _ in range(_TRIES):
        if room < 1 or chars < MIN_HEAD_CHARS:
            return None
        head = _head(content, chars)
        shut = closed(head.rstrip())  # the mark after the fence or comment the cut left open
        body = f"{shut}\n{TRUNCATED}"
        if count is None:
            added = shut[len(head.rstrip()) :]  # the closing line
            tokens = -(-section["tokens"] * len(head) // max(1, len(content))) + mark
            tokens += bound_tokens(added) + added.count("\n")
            return {**section, "content": body, "tokens": tokens}
        cut = {**section, "content": body, "tokens": count(body)}
        over = block_tokens([cut, *after], count) - max_tokens
        if over <= 0:
            return _grown(section, cut, len(head), (max_tokens, max_chars), count, after)
        chars = min(len(head), chars) - 1 - int(over * len(body) / max(1, cut["tokens"]))
    return None


def _grown(
    section: Section,
    cut: Section,
    end: int,
    limits: tuple[int, int],
    count: Count,
    after: Sequence[Section],
) -> Section:
    """``cut``, a head of ``section`` ``end`` characters long that fits the block, with as
    many more of the section's whole lines as still fit within ``limits`` (tokens, characters),
    ``_GROW`` at most. The head is guessed from the section's mean characters per token: a weak
    answer over a Docker options table, its lines padded with spaces to ~290 characters,
    showed the table's header and none of its rows with 47 of its 300 tokens unused."""
    content = section["content"]
    for _ in range(_GROW):
        stop = content.find("\n", end + 1)
        if stop < 0:  # its last line: the whole section did not fit
            break
        shut = closed(content[:stop].rstrip())
        body = f"{shut}\n{TRUNCATED}"
        longer = {**section, "content": body, "tokens": count(body)}
        block = [longer, *after]
        if block_tokens(block, count) > limits[0] or block_size(block) > limits[1]:
            break
        cut, end = longer, stop
    return cut


def _head(content: str, chars: int) -> str:
    """The first ``chars`` characters, ended at a line break in their second half; never
    inside a character a reader sees as one (👍🏽, 👨‍👩‍👧, 🇹🇷, e + U+0301)."""
    head = content[: whole_characters(content, chars)]
    cut = head.rfind("\n")
    return head[:cut] if cut > chars // 2 else head


def brief(
    sections: Sequence[Section], max_tokens: int, max_chars: int, count: Count | None = None
) -> list[Section]:
    """A weak match (I8): one short section — the best, whole or its head — and the other
    candidates as pointers (their source lines alone, see :func:`pointer`), as many as the
    block holds next to a head of at least ``MIN_HEAD_CHARS``; the fewest pointers are dropped
    from the end. When the candidates disagree the agent sees where else to look, at the cost
    of a line each, instead of one guess."""
    if not sections:
        return []
    first, others = sections[0], [pointer(s) for s in sections[1:]]
    whole = int(first["tokens"]) < max_tokens  # else not worth counting the block with it
    for number in range(len(others), 0, -1):
        pointers = others[:number]
        if whole and _holds([first, *pointers], max_tokens, max_chars, count):
            return [first, *pointers]
        head = truncate(first, max_tokens, max_chars, count, pointers)
        if head is not None and _holds([head, *pointers], max_tokens, max_chars, count):
            return [head, *pointers]
    return fit(sections[:1], max_tokens, max_chars, count)


def pointer(section: Section) -> Section:
    """A section reduced to its source line: the agent can open it; it is not injected (and not
    remembered as injected)."""
    return {**section, "content": "", "tokens": 0, "pointer": True}


def _holds(
    sections: Sequence[Section], max_tokens: int, max_chars: int, count: Count | None
) -> bool:
    return block_tokens(sections, count) <= max_tokens and block_size(sections) <= max_chars
