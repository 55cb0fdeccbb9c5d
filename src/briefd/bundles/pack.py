"""The budget packer (B1, B7): a pure function from ranked candidates to packed items.

Mandatory content (the target document, the tracker issue, ``always: true`` documents) is
always taken whole; optional content fills the soft budget greedily, tier by tier and in
collection order within a tier. Duplicates and near-duplicates are dropped; a candidate that
does not fit is recorded and later, smaller ones are still tried; governing documents take at
most their share of the budget while ranked hits compete for the rest; the first optional
section alone larger than what is left is cut to its head with a visible marker. Sizes are
exact counts of the rendered text, and the assembled block is counted again at the end, so the
budget holds for the whole block, separators included.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from briefd.bundles.model import TIER_ORDER, BundleItem, Candidate, Exclusion, Packed
from briefd.bundles.render import (
    SECTION_SEPARATOR,
    fingerprint,
    markdown,
    section_text,
    truncation_marker,
)
from briefd.markdown.parse import parse_structure
from briefd.markdown.wrap import continuation
from briefd.settings import BundleSettings
from briefd.tokens import count_tokens, head_tokens

# Scope priority for display (B1): domain > conventions > projects > anything else.
_SCOPE_ORDER = {"domain": 0, "conventions": 1}
_MIN_HEAD_TOKENS = 16
_WORD = re.compile(r"\w+")

Counter = Callable[[str], int]


def effective_budget(max_tokens: int, settings: BundleSettings) -> int:
    return math.floor(max_tokens * (1.0 - settings.headroom))


def scope_rank(scope: str) -> int:
    if scope in _SCOPE_ORDER:
        return _SCOPE_ORDER[scope]
    return 2 if scope.startswith("projects") else 3


def term_set(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


@dataclass
class _State:
    """The packer's running state (local to one call)."""

    remaining: int
    chosen: list[tuple[int, BundleItem]] = field(default_factory=list)
    terms: dict[str, frozenset[str]] = field(default_factory=dict)
    bodies: dict[str, str] = field(default_factory=dict)
    exclusions: list[Exclusion] = field(default_factory=list)
    truncated: bool = False
    top_seen: bool = False
    governed_cap: int = 0
    governed_used: int = 0

    def skip(self, c: Candidate, reason: str, tokens: int) -> None:
        self.exclusions.append(Exclusion(c.chunk_id, c.doc_path, c.tier, reason, tokens))


def pack(
    candidates: Sequence[Candidate],
    max_tokens: int,
    settings: BundleSettings,
    count: Counter = count_tokens,
    hard_limit: int | None = None,
) -> Packed:
    """Select and order sections: mandatory ones whole, then optional ones so the assembled
    Markdown stays within the budget (never above ``hard_limit`` either)."""
    soft = max_tokens if hard_limit is None else min(max_tokens, hard_limit)
    budget = effective_budget(soft, settings)
    state = _State(remaining=budget, governed_cap=budget)
    if any(c.tier == "ranked" and c.weak is None for c in candidates):
        state.governed_cap = math.floor(budget * settings.governed_share)
    separator = count(SECTION_SEPARATOR)
    ordered = sorted(enumerate(candidates), key=lambda pair: TIER_ORDER[pair[1].tier])
    for index, candidate in ordered:
        extra = separator if state.chosen else 0
        if candidate.tier == "mandatory":
            full = count(section_text(candidate))
            _take(state, index, candidate, candidate.content, full, extra, truncated=False)
        else:
            _consider(state, index, candidate, extra, settings, count)
    items = [item for _, item in sorted(state.chosen, key=_display_key)]
    while _optional(items) and count(markdown(tuple(items))) > budget:  # BPE merges
        dropped = items.pop(_last_of_lowest_tier(items))
        state.exclusions.append(
            Exclusion(dropped.chunk_id, dropped.doc_path, dropped.tier, "budget", dropped.tokens)
        )
    return Packed(tuple(items), tuple(state.exclusions), state.truncated)


def _consider(
    state: _State,
    index: int,
    c: Candidate,
    extra: int,
    settings: BundleSettings,
    count: Counter,
) -> None:
    full = count(section_text(c))
    if c.weak is not None:
        state.skip(c, c.weak, full)
        return
    duplicate = _duplicate_of(state, c, settings.near_duplicate)
    if duplicate:
        state.skip(c, duplicate, full)
        return
    if c.related_to is not None and c.related_to not in state.bodies:
        state.skip(c, f"linked from {c.related_to}, which is not in the bundle", full)
        return
    governed = c.tier == "governed"
    if governed and state.governed_used and state.governed_used + full > state.governed_cap:
        left = max(state.governed_cap - state.governed_used, 0)
        state.skip(c, f"governed share: needs {full} tokens, {left} of its share left", full)
        return
    is_top = not state.top_seen
    state.top_seen = True
    limit = state.remaining - extra
    if full <= limit:
        _take(state, index, c, c.content, full, extra, truncated=False)
    elif is_top and limit >= _MIN_HEAD_TOKENS:
        content, tokens = _head(c, limit, count)
        if content:
            _take(state, index, c, content, tokens, extra, truncated=True)
        else:
            state.skip(c, f"does not fit: needs {full} tokens, {limit} left", full)
    else:
        state.skip(c, f"does not fit: needs {full} tokens, {max(limit, 0)} left", full)


def _duplicate_of(state: _State, c: Candidate, threshold: float) -> str | None:
    body = c.content.strip()
    terms = term_set(body)
    for chunk_id, other in state.bodies.items():
        if other == body:
            return f"duplicate of {chunk_id}"
    for chunk_id, other_terms in state.terms.items():
        similarity = jaccard(terms, other_terms)
        if similarity >= threshold:
            return f"near-duplicate of {chunk_id} (term Jaccard {similarity:.2f})"
    return None


def _take(
    state: _State,
    index: int,
    c: Candidate,
    content: str,
    tokens: int,
    extra: int,
    truncated: bool,
) -> None:
    item = BundleItem(
        chunk_id=c.chunk_id,
        doc_path=c.doc_path,
        scope=c.scope,
        title=c.title,
        heading_path=c.heading_path,
        content=content,
        score=c.score,
        tier=c.tier,
        reasons=c.reasons,
        start_line=c.start_line,
        end_line=c.end_line,
        updated_at=c.updated_at,
        tokens=tokens,
        fingerprint=fingerprint(content),
        truncated=truncated,
    )
    state.chosen.append((index, item))
    state.bodies[c.chunk_id] = c.content.strip()
    state.terms[c.chunk_id] = term_set(c.content)
    state.remaining -= tokens + extra
    state.truncated = state.truncated or truncated
    if c.tier == "governed":
        state.governed_used += tokens


def _head(c: Candidate, limit: int, count: Counter) -> tuple[str, int]:
    """The longest head of ``c`` (cut at a line end when one is near) that, with its marker,
    renders within ``limit`` tokens; empty when not even a short head fits."""
    body = c.content.strip()
    total = count(body)
    overhead = count(section_text(c, "")) + count(truncation_marker(c, total, total)) + 2
    allowance = limit - overhead
    while allowance >= _MIN_HEAD_TOKENS // 2:
        head = head_tokens(body, allowance)
        cut = head.rfind("\n")
        if cut > len(head) // 2:
            head = head[:cut]
        head = closed_blocks(head.rstrip())
        content = head + truncation_marker(c, count(head), total)
        tokens = count(section_text(c, content))
        if tokens <= limit:
            return content, tokens
        allowance -= max(2, tokens - limit)
    return "", 0


def closed_blocks(text: str) -> str:
    """``text`` with the fenced code and HTML blocks (comments, ``<pre>``…) a cut left open
    closed again, innermost first, so the marker and the sections after it are not read as
    code or hidden in a comment."""
    lines = text.split("\n")
    structure = parse_structure(text)
    open_blocks = [(f.start, f.markup) for f in structure.fences if not f.closed]
    open_blocks += [(h.start, h.closer) for h in structure.html if not h.closed]
    for start, closer in sorted(open_blocks, reverse=True):
        opening = continuation(lines[start - 1])
        text += f"\n{opening[: len(opening) - len(opening.lstrip(' >'))]}{closer}"
    return text


def _display_key(pair: tuple[int, BundleItem]) -> tuple[int, int, int]:
    """Tier, then (ranked and related sections) scope, then collection order: the target,
    its relations and the most specific governing documents lead in the order collected."""
    index, item = pair
    scope = scope_rank(item.scope) if item.tier in ("ranked", "related") else 0
    return TIER_ORDER[item.tier], scope, index


def _optional(items: list[BundleItem]) -> bool:
    return any(item.tier != "mandatory" for item in items)


def _last_of_lowest_tier(items: list[BundleItem]) -> int:
    worst = max(TIER_ORDER[item.tier] for item in items)
    return max(i for i, item in enumerate(items) if TIER_ORDER[item.tier] == worst)
