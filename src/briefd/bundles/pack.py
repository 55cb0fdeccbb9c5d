"""The budget packer (B1): a pure function from ranked candidates to packed items.

Greedy in collection order, tier by tier; duplicates and near-duplicates dropped; a candidate
that does not fit is recorded and later, smaller ones are still tried; the top section alone
larger than the budget is cut to its head with a visible marker. Sizes are exact counts of the
rendered text, and the assembled block is counted again at the end, so the budget holds for
the whole block, separators included.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from briefd.bundles.model import BundleItem, Candidate, Exclusion, Packed
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

    def skip(self, c: Candidate, reason: str, tokens: int) -> None:
        self.exclusions.append(Exclusion(c.chunk_id, c.doc_path, c.tier, reason, tokens))


def pack(
    candidates: Sequence[Candidate],
    max_tokens: int,
    settings: BundleSettings,
    count: Counter = count_tokens,
) -> Packed:
    """Select and order sections so the assembled Markdown stays within the budget."""
    budget = effective_budget(max_tokens, settings)
    state = _State(remaining=budget)
    separator = count(SECTION_SEPARATOR)
    ordered = sorted(enumerate(candidates), key=lambda pair: pair[1].tier)
    for index, candidate in ordered:
        extra = separator if state.chosen else 0
        _consider(state, index, candidate, extra, budget, settings, count)
    items = [item for _, item in sorted(state.chosen, key=_display_key)]
    while items and count(markdown(tuple(items))) > budget:  # BPE merges across a boundary
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
    budget: int,
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
    is_top = c.tier > 1 and not state.top_seen
    if c.tier > 1:
        state.top_seen = True
    limit = state.remaining - extra
    if c.tier == 1:
        limit = min(limit, math.floor(budget * settings.issue_share))
    if full <= limit:
        _take(state, index, c, c.content, full, extra, truncated=False)
    elif (c.tier == 1 or is_top) and limit >= _MIN_HEAD_TOKENS:
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
    index, item = pair
    return item.tier, scope_rank(item.scope), index


def _last_of_lowest_tier(items: list[BundleItem]) -> int:
    worst = max(item.tier for item in items)
    return max(i for i, item in enumerate(items) if item.tier == worst)
