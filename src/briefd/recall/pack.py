"""Choosing what a recall injects (pure): nothing the session already has, best first, within
the token budget and the character cap of the rendered block (the budget is the whole block's,
frame and attribution lines included: see :mod:`briefd.recall.block`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from briefd.recall.block import (
    FRAME_TOKENS,
    TRUNCATED,
    attribution_tokens,
    block_size,
    block_tokens,
    cost,
)

Section = dict[str, Any]

MARK_TOKENS = 16  # TRUNCATED and its line break, rounded up (cl100k counts 13)
MIN_HEAD_CHARS = 200  # a head shorter than this says too little to be worth injecting


def unseen(sections: Sequence[Section], seen: Mapping[str, str]) -> tuple[list[Section], int]:
    """Sections not injected before in this session (same chunk, same content), and how many
    were left out because they were."""
    fresh = [s for s in sections if seen.get(s["chunk_id"]) != s["content_hash"]]
    return fresh, len(sections) - len(fresh)


def fit(sections: Sequence[Section], max_tokens: int, max_chars: int) -> list[Section]:
    """Greedy in rank order; a section that does not fit is skipped and smaller later ones are
    still tried. When not even the best one fits, its head is kept with a truncation mark."""
    chosen: list[Section] = []
    tokens = FRAME_TOKENS
    for section in sections:
        if tokens + cost(section) > max_tokens:
            continue
        if block_size([*chosen, section]) > max_chars:
            continue
        chosen.append(section)
        tokens += cost(section)
    if not chosen and sections:
        head = truncate(sections[0], max_tokens, max_chars)
        if head is not None:
            chosen.append(head)
    return chosen


def truncate(section: Section, max_tokens: int, max_chars: int) -> Section | None:
    """The section's head that fits the block alone; its tokens are counted pro rata from the
    section's own (its characters per token, so a Turkish section is cut as tightly as an
    English one)."""
    room = max_tokens - FRAME_TOKENS - attribution_tokens(section) - MARK_TOKENS
    content = section["content"]
    per_token = len(content) / max(1, section["tokens"])
    chars = min(int((room - 1) * per_token), max_chars - block_size([{**section, "content": ""}]))
    chars -= len(TRUNCATED) + 2
    if room < 1 or chars < MIN_HEAD_CHARS:
        return None
    head = content[:chars]
    cut = head.rfind("\n")
    head = head[:cut] if cut > chars // 2 else head
    tokens = -(-section["tokens"] * len(head) // max(1, len(content))) + MARK_TOKENS
    return {**section, "content": f"{head.rstrip()}\n{TRUNCATED}", "tokens": tokens}


def brief(sections: Sequence[Section], max_tokens: int, max_chars: int) -> list[Section]:
    """A weak match (I8): one short section — the best, whole or its head — and the other
    candidates as pointers (their source lines alone, see :func:`pointer`), as many as the
    block holds next to a head of at least ``MIN_HEAD_CHARS``; the fewest pointers are dropped
    from the end. When the candidates disagree the agent sees where else to look, at the cost
    of a line each, instead of one guess."""
    if not sections:
        return []
    first, others = sections[0], [pointer(s) for s in sections[1:]]
    for count in range(len(others), 0, -1):
        pointers = others[:count]
        room = max_tokens - (block_tokens([first, *pointers]) - cost(first) - FRAME_TOKENS)
        head = _whole_or_head(first, room, max_chars - block_size(pointers))
        if head is not None and _holds([head, *pointers], max_tokens, max_chars):
            return [head, *pointers]
    return fit(sections[:1], max_tokens, max_chars)


def pointer(section: Section) -> Section:
    """A section reduced to its source line: the agent can open it; it is not injected (and not
    remembered as injected)."""
    return {**section, "content": "", "tokens": 0, "pointer": True}


def _whole_or_head(section: Section, room: int, max_chars: int) -> Section | None:
    """``section`` when ``room`` tokens (block frame included) hold it, else its head."""
    if FRAME_TOKENS + cost(section) <= room and block_size([section]) <= max_chars:
        return section
    return truncate(section, room, max_chars)


def _holds(sections: Sequence[Section], max_tokens: int, max_chars: int) -> bool:
    return block_tokens(sections) <= max_tokens and block_size(sections) <= max_chars
