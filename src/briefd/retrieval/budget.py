"""Search hits within a token budget (R6), pure: what ``max_tokens`` keeps of a ranked search
result on REST and MCP.

Not the bundle packer (:mod:`briefd.bundles.pack`): nothing is rendered or deduplicated here.
A hit costs what its caller says it costs (by default its content's tokens; the service counts
the hit as the JSON a client receives), a related hit rides only with the hit it is linked
from, and the top hit alone too large for the budget is cut to its head with a visible marker.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from briefd.model import Hit
from briefd.tokens import count_tokens, head_tokens

TRUNCATED = "\n[… truncated to fit max_tokens]"
MIN_HEAD_TOKENS = 8  # less of the top section than this is no answer: return nothing instead

Cost = Callable[[Hit], int]


def content_tokens(hit: Hit) -> int:
    return hit.tokens


def within_budget(
    hits: tuple[Hit, ...], max_tokens: int, cost: Cost = content_tokens
) -> tuple[list[Hit], int]:
    """Direct hits in rank order, then related ones, whose costs add up to at most
    ``max_tokens``; a hit that does not fit is skipped and smaller later ones still get their
    chance, but a related hit only joins the hit it is linked from (R6). When no direct hit
    fits, the head of the best one, marked as truncated, if at least ``MIN_HEAD_TOKENS`` of
    its content fit; else nothing. Returns (kept, omitted)."""
    kept: list[Hit] = []
    used = 0
    for hit in (h for h in hits if h.related_to is None):
        spent = cost(hit)
        if used + spent <= max_tokens:
            kept.append(hit)
            used += spent
    if not kept and hits:
        head = _head(hits[0], max_tokens, cost)
        kept, used = ([head], cost(head)) if head is not None else ([], 0)
    joined = {h.chunk_id for h in kept}
    for hit in (h for h in hits if h.related_to is not None):
        spent = cost(hit)
        if hit.related_to in joined and used + spent <= max_tokens:
            kept.append(hit)
            used += spent
    return kept, len(hits) - len(kept)


def _head(hit: Hit, max_tokens: int, cost: Cost) -> Hit | None:
    """The longest head of ``hit`` that, with the truncation marker, costs at most
    ``max_tokens``; None when less than ``MIN_HEAD_TOKENS`` of content would fit."""
    room = max_tokens - (cost(hit) - hit.tokens) - count_tokens(TRUNCATED)
    while room >= MIN_HEAD_TOKENS:
        content = head_tokens(hit.content, room).rstrip() + TRUNCATED
        cut = replace(hit, content=content, tokens=count_tokens(content))
        spent = cost(cut)
        if spent <= max_tokens:
            return cut
        room -= spent - max_tokens
    return None
