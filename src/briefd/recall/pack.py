"""Choosing what a recall injects (pure): nothing the session already has, best first, within
the token budget and the character cap of the rendered block."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from briefd.recall.block import TRUNCATED, block_size

Section = dict[str, Any]

CHARS_PER_TOKEN = 4  # only to cut an oversized top section; real counts come from the index


def unseen(sections: Sequence[Section], seen: Mapping[str, str]) -> tuple[list[Section], int]:
    """Sections not injected before in this session (same chunk, same content), and how many
    were left out because they were."""
    fresh = [s for s in sections if seen.get(s["chunk_id"]) != s["content_hash"]]
    return fresh, len(sections) - len(fresh)


def fit(sections: Sequence[Section], max_tokens: int, max_chars: int) -> list[Section]:
    """Greedy in rank order; a section that does not fit is skipped and smaller later ones are
    still tried. When not even the best one fits, its head is kept with a truncation mark."""
    chosen: list[Section] = []
    tokens = 0
    for section in sections:
        if tokens + section["tokens"] > max_tokens:
            continue
        if block_size([*chosen, section]) > max_chars:
            continue
        chosen.append(section)
        tokens += section["tokens"]
    if not chosen and sections:
        head = truncate(sections[0], max_tokens, max_chars)
        if head is not None:
            chosen.append(head)
    return chosen


def truncate(section: Section, max_tokens: int, max_chars: int) -> Section | None:
    room = min(max_tokens * CHARS_PER_TOKEN, max_chars - block_size([{**section, "content": ""}]))
    room -= len(TRUNCATED) + 2
    if room < 200:
        return None
    content = section["content"][:room]
    cut = content.rfind("\n")
    content = content[:cut] if cut > room // 2 else content
    share = len(content) / max(1, len(section["content"]))
    tokens = min(max_tokens, max(1, round(section["tokens"] * share)))
    return {**section, "content": f"{content.rstrip()}\n{TRUNCATED}", "tokens": tokens}
