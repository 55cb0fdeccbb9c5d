"""The budget packer (B1, B7): a pure function from ranked candidates to packed items.

Mandatory content (the target document, the tracker issue, ``always: true`` documents) is
taken whole (a target or ``always: true`` document over the hard limit as far as the limit
holds); optional content fills the soft budget greedily, tier by tier and in
collection order within a tier. Duplicates and near-duplicates are dropped; a candidate that
does not fit is recorded and later, smaller ones are still tried; governing documents take at
most their share of the budget while ranked hits compete for the rest (a governing section the
task ranked, left out of that share, competes again as the hit it is); the first optional
section alone larger than what is left is cut to its head with a visible marker. Sizes are
exact counts of what the client receives (:mod:`briefd.bundles.measure`: the rendered section
in the Markdown block, the item's JSON in a package), the package's brackets are kept back
first, and the whole is counted again at the end, so the budget holds for all of it,
separators included.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from briefd.bundles.measure import Measure, markdown_measure
from briefd.bundles.model import TIER_ORDER, BundleItem, Candidate, Exclusion, Packed
from briefd.bundles.render import closed_blocks, fingerprint, trimmed, truncation_marker
from briefd.markdown.parse import parse_structure
from briefd.settings import BundleSettings
from briefd.text import whole_characters
from briefd.tokens import count_tokens, head_tokens

# Scope priority for display (B1): domain > conventions > projects > anything else.
_SCOPE_ORDER = {"domain": 0, "conventions": 1}
_MIN_HEAD_TOKENS = 16
NO_ROOM = "does not fit: "  # the reason of a section the budget had no room for
TARGET = ("target document",)  # the reasons of a context's target sections (structure.py)
ALWAYS = ("always: true in its front matter",)  # the reasons of an always: true section
CUT = (TARGET, ALWAYS)  # the mandatory documents cut at the hard limit (the issue is cut before)
OVER_HARD_LIMIT = "over hard_limit: "  # the reason of a target section past the hard limit
# ... of one after the first that did not fit: not counted (its exclusion's tokens are 0), so a
# context's cost follows the hard limit, not the size of its target
PAST_THE_CUT = "after the section cut there, not counted"
ISSUE_RESERVE = ""  # the key in ``reserve`` of what the tracker issue's warning can cost
_WORD = re.compile(r"\w+")


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
    hits: frozenset[str] = frozenset()  # sections that compete again as ranked hits

    def skip(self, c: Candidate, reason: str, tokens: int) -> None:
        self.exclusions.append(Exclusion(c.chunk_id, c.doc_path, c.tier, reason, tokens))


def pack(
    candidates: Sequence[Candidate],
    max_tokens: int,
    settings: BundleSettings,
    sizes: Measure | None = None,
    hard_limit: int | None = None,
    reserve: Mapping[str, int] | None = None,
) -> Packed:
    """Select and order sections: mandatory ones whole, then optional ones so that the sections
    as the mode delivers them (``sizes``: the Markdown block, or a package's items as JSON) stay
    within the budget (never above ``hard_limit`` either). A target or ``always: true``
    document that would take the answer over ``hard_limit`` comes from its top as far as it
    fits beside ``reserve`` (the warning that says where to read on, by path), its first section past that as a head with the
    truncation marker, the rest listed as exclusions. ``sizes`` defaults to the Markdown
    block's (:func:`markdown_measure`)."""
    sizes = markdown_measure() if sizes is None else sizes
    soft = max_tokens if hard_limit is None else min(max_tokens, hard_limit)
    budget = effective_budget(soft, settings)
    governing = {c.chunk_id for c in candidates if c.tier == "governed"}
    hits = frozenset(c.chunk_id for c in candidates if c.tier == "ranked")
    room = budget - sizes.frame - sizes.envelope
    state = _State(remaining=room, governed_cap=budget, hits=hits)
    if any(
        c.tier == "ranked" and c.weak is None and c.chunk_id not in governing for c in candidates
    ):
        state.governed_cap = math.floor(budget * settings.governed_share)
    ordered = sorted(enumerate(candidates), key=lambda pair: TIER_ORDER[pair[1].tier])
    ceiling = None if hard_limit is None else effective_budget(hard_limit, settings)
    whole = _Whole(sizes)
    fitted = _mandatory(candidates, whole, ceiling, reserve or {})
    for index, candidate in ordered:
        extra = sizes.separator if state.chosen else 0
        if candidate.tier == "mandatory":
            item = fitted.get(candidate.chunk_id)
            if item is None:  # a document cut at the hard limit: it leaves no room
                state.remaining = min(state.remaining, 0)
                needs = whole.counted(candidate)
                said = f"needs {needs} tokens" if needs is not None else PAST_THE_CUT
                state.skip(candidate, f"{OVER_HARD_LIMIT}{said}", needs or 0)
            else:
                _take(state, index, candidate, item, extra)
                if item.truncated:
                    state.remaining = min(state.remaining, 0)
        else:
            _consider(state, index, candidate, extra, settings, sizes)
    items = [item for _, item in sorted(state.chosen, key=_display_key)]
    while _optional(items) and sizes.whole(tuple(items)) + sizes.envelope > budget:  # merges
        dropped = items.pop(_last_of_lowest_tier(items))
        state.exclusions.append(
            Exclusion(dropped.chunk_id, dropped.doc_path, dropped.tier, "budget", dropped.tokens)
        )
    return Packed(tuple(items), tuple(state.exclusions), state.truncated)


class _Whole:
    """Each candidate whole as packed (:func:`_sized`), counted once and only when asked: a
    target of 40,000 sections counted all of them (twice) before the few that fit were taken,
    19 s for a context of 2,000 tokens."""

    def __init__(self, sizes: Measure) -> None:
        self.sizes = sizes
        self._items: dict[str, BundleItem] = {}

    def __call__(self, c: Candidate) -> BundleItem:
        item = self._items.get(c.chunk_id)
        if item is None:
            item = self._items[c.chunk_id] = _sized(self.sizes, c, c.content)
        return item

    def counted(self, c: Candidate) -> int | None:
        """Its tokens if they were counted, else None."""
        item = self._items.get(c.chunk_id)
        return None if item is None else item.tokens

    def spaced(self, c: Candidate) -> int:
        """Its tokens and a separator."""
        return self(c).tokens + self.sizes.separator

    def fit(self, musts: Sequence[Candidate], left: int) -> bool:
        """Whether all of ``musts`` fit in ``left`` one after another (counting stops at the
        first that does not)."""
        total = -self.sizes.separator
        for c in musts:
            total += self.spaced(c)
            if total > left:
                return False
        return True


def _mandatory(
    candidates: Sequence[Candidate],
    whole: _Whole,
    ceiling: int | None,
    reserve: Mapping[str, int],
) -> dict[str, BundleItem]:
    """The mandatory sections as packed, by chunk id: all whole while they fit under
    ``ceiling`` (the hard limit less headroom); the tracker issue only where it fits whole
    beside what a warning can cost (``reserve[ISSUE_RESERVE]``), else none of it (a live issue
    cut to its floor took an answer at hard_limit 100 to 189 tokens). Else the issue, then the
    ``always: true`` documents' and the target's (:func:`_cut_order`, each from its top) as far as they fit
    beside ``reserve`` (the warning of each document cut, by path), the first that does not as
    its head (when a useful head fits), and none after it. Claude Code refuses a tool answer
    over 25,000 tokens, so a whole 35,000-token target or house-rules document reached the
    model as an error, its warning too. Sections past the first that does not fit are not
    counted here."""
    sizes = whole.sizes
    musts = [c for c in candidates if c.tier == "mandatory"]
    if ceiling is None:
        return {c.chunk_id: whole(c) for c in musts}
    left = ceiling - sizes.frame - sizes.envelope
    if any(  # an issue over what is left beside its warning: out, not the answer over the limit
        whole(c).tokens > left - reserve.get(ISSUE_RESERVE, 0)
        for c in musts
        if c.reasons not in CUT
    ):
        musts = [c for c in musts if c.reasons in CUT]
    if whole.fit(musts, left):
        return {c.chunk_id: whole(c) for c in musts}
    fitted = {c.chunk_id: whole(c) for c in musts if c.reasons not in CUT}
    left -= sum(item.tokens + sizes.separator for item in fitted.values())
    order = _cut_order(musts, whole, left)
    kept = 0
    for _ in range(3):  # the warnings of the documents from the first cut on are kept back
        held = _fitting(order, whole, left - kept)
        needs = sum(reserve.get(p, 0) for p in dict.fromkeys(c.doc_path for c in order[held:]))
        if needs <= kept:
            break
        kept = needs
    left -= kept
    for c in order:
        if whole(c).tokens <= left - sizes.separator:
            fitted[c.chunk_id] = whole(c)
            left -= whole.spaced(c)
            continue
        head = _head(c, left - sizes.separator, sizes) if left >= _MIN_HEAD_TOKENS else None
        if head is not None:
            fitted[c.chunk_id] = head
        break
    return fitted


def _cut_order(musts: Sequence[Candidate], whole: _Whole, left: int) -> list[Candidate]:
    """The order documents are given room in: the ``always: true`` documents that fit whole
    (beside the others before them), the target, then the ``always: true`` documents too
    large for that, so a house-rules document over the limit never leaves a context's target
    out."""
    fits: list[Candidate] = []
    large: list[Candidate] = []
    for path in dict.fromkeys(c.doc_path for c in musts if c.reasons == ALWAYS):
        sections = [c for c in musts if c.reasons == ALWAYS and c.doc_path == path]
        if whole.fit(sections, left - whole.sizes.separator):
            fits += sections
            left -= sum(whole.spaced(c) for c in sections)
        else:
            large += sections
    return [*fits, *(c for c in musts if c.reasons == TARGET), *large]


def _fitting(order: Sequence[Candidate], whole: _Whole, left: int) -> int:
    """How many of ``order`` (each with a separator) fit in ``left`` one after another."""
    for index, c in enumerate(order):
        left -= whole.spaced(c)
        if left < 0:
            return index
    return len(order)


def _consider(
    state: _State,
    index: int,
    c: Candidate,
    extra: int,
    settings: BundleSettings,
    sizes: Measure,
) -> None:
    if c.chunk_id in state.bodies:  # a governing section taken, here again as a ranked hit
        return
    whole = _sized(sizes, c, c.content)
    full = whole.tokens
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
    again = governed and c.chunk_id in state.hits  # if it is left out, it competes as a hit
    if governed and state.governed_used and state.governed_used + full > state.governed_cap:
        if again:
            return
        left = max(state.governed_cap - state.governed_used, 0)
        state.skip(c, f"governed share: needs {full} tokens, {left} of its share left", full)
        return
    is_top = not state.top_seen
    state.top_seen = True
    limit = state.remaining - extra
    if full <= limit:
        _take(state, index, c, whole, extra)
    elif is_top and limit >= _MIN_HEAD_TOKENS:
        head = _head(c, limit, sizes)
        if head is not None:
            _take(state, index, c, head, extra)
        elif not again:
            state.skip(c, f"{NO_ROOM}needs {full} tokens, {limit} left", full)
    elif not again:
        state.skip(c, f"{NO_ROOM}needs {full} tokens, {max(limit, 0)} left", full)


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


def _sized(sizes: Measure, c: Candidate, content: str, truncated: bool = False) -> BundleItem:
    """``c`` as packed with ``content``, its tokens what the mode's output spends on it."""
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
        tokens=0,
        fingerprint=fingerprint(content),
        truncated=truncated,
        drift=c.drift,
        superseded_by=c.superseded_by,
    )
    return replace(item, tokens=sizes.item(item))


def _take(state: _State, index: int, c: Candidate, item: BundleItem, extra: int) -> None:
    state.chosen.append((index, item))
    state.bodies[c.chunk_id] = c.content.strip()
    state.terms[c.chunk_id] = term_set(c.content)
    state.remaining -= item.tokens + extra
    state.truncated = state.truncated or item.truncated
    if c.tier == "governed":
        state.governed_used += item.tokens


def _head(c: Candidate, limit: int, sizes: Measure) -> BundleItem | None:
    """The longest head of ``c`` (cut at a line end when one is near) that, with its marker,
    costs at most ``limit`` tokens in the mode's output; None when not even a short head fits."""
    body = trimmed(c.content)
    total = count_tokens(body)
    marker = count_tokens(truncation_marker(c, total, total))
    allowance = limit - _sized(sizes, c, "").tokens - marker - 2
    while allowance >= _MIN_HEAD_TOKENS // 2:
        whole = whole_characters(body, len(head_tokens(body, allowance)))
        head = closed_blocks(_at_line_end(body[:whole]))
        content = head + truncation_marker(c, count_tokens(head), total)
        item = _sized(sizes, c, content, truncated=True)
        if item.tokens <= limit:
            return item
        allowance -= max(2, item.tokens - limit)
    return None


def _at_line_end(head: str) -> str:
    """``head`` cut back to its last line end when one is past its middle, unless that leaves
    a code fence just opened: the part of its first line that fits is worth more than an
    empty block."""
    cut = head.rfind("\n")
    if cut <= len(head) // 2:
        return head.rstrip()
    shorter = head[:cut].rstrip()
    last = shorter.count("\n") + 1
    if any(f.start == last for f in parse_structure(shorter).fences if not f.closed):
        return head.rstrip()
    return shorter


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
