"""Reciprocal rank fusion (R3), pure: score = Σ weight / (k + rank) over the input lists."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True, slots=True)
class RankedList(Generic[K]):
    name: str
    weight: float
    keys: Sequence[K]


@dataclass(frozen=True, slots=True)
class Fused(Generic[K]):
    key: K
    score: float
    contributions: tuple[tuple[str, float], ...]


def rrf(lists: Sequence[RankedList[K]], k: int = 60) -> list[Fused[K]]:
    """Fuse ranked lists; ties keep the order of first appearance (lists in given order)."""
    scores: dict[K, float] = {}
    parts: dict[K, list[tuple[str, float]]] = {}
    order: dict[K, int] = {}
    for ranked in lists:
        for rank, key in enumerate(ranked.keys, start=1):
            contribution = ranked.weight / (k + rank)
            scores[key] = scores.get(key, 0.0) + contribution
            parts.setdefault(key, []).append((ranked.name, contribution))
            order.setdefault(key, len(order))
    keys = sorted(scores, key=lambda key: (-scores[key], order[key]))
    return [Fused(key, scores[key], tuple(parts[key])) for key in keys]


@dataclass(frozen=True, slots=True)
class Evidence:
    """What one candidate has going for it: raw scores from each list (None: not in it)."""

    key: int
    cosine: float | None
    bm25: float | None  # FTS5 bm25 of the any-term list: negative, lower is better
    all_terms: bool
    coverage: float = 0.0  # the share of the query's words it holds (1.0: every word)


def score_fusion(
    candidates: Sequence[Evidence],
    vector_weight: float,
    all_terms_bonus: float,
    coverage_bonus: float = 0.0,
    lexical_scale: float = 1.0,
) -> list[Fused[int]]:
    """Weighted sum of normalised scores: the cosine min-max scaled over the candidates, BM25
    scaled by the best BM25 of the query, plus a bonus for matching every query term and, when
    ``coverage_bonus`` is set (opt-in, see ``search.coverage_bonus``), one that grows with the
    square of the share of query words a candidate holds.

    Unlike rank fusion it keeps the size of each signal's margin, so a weak dense list cannot
    outvote a decisive lexical match (or the reverse) just by rank position. BM25 scaled by the
    query's best says how a candidate compares with the others, not how much of the query it
    holds: the best of a few weak matches scores 1.0 too. The coverage bonus says how much
    (squared: holding most of the words counts, one word of six barely does).
    """
    cosines = [c.cosine for c in candidates if c.cosine is not None]
    low, high = (min(cosines), max(cosines)) if cosines else (0.0, 0.0)
    spread = high - low
    best_bm25 = max((-c.bm25 for c in candidates if c.bm25 is not None), default=0.0)
    fused: list[tuple[float, int, int, tuple[tuple[str, float], ...]]] = []
    lexical_weight = 1.0 - vector_weight
    for order, item in enumerate(candidates):
        vector = (item.cosine - low) / spread if item.cosine is not None and spread > 0 else 0.0
        lexical = -item.bm25 / best_bm25 if item.bm25 is not None and best_bm25 > 0 else 0.0
        lexical *= lexical_scale  # < 1 for a query mostly in another language (search._fuse)
        v, w = vector_weight * vector, lexical_weight * lexical
        bonus = all_terms_bonus if item.all_terms else 0.0
        score = v + w + bonus  # the parts summed in order, as they are listed
        parts: tuple[tuple[str, float], ...] = (("vector", v), ("lexical", w), ("all-terms", bonus))
        if coverage_bonus:
            covered = coverage_bonus * item.coverage**2
            score += covered
            parts += (("coverage", covered),)
        fused.append((-score, order, item.key, parts))
    fused.sort()  # best first; equal scores keep the candidates' order (orders are unique)
    return [Fused(key, -negative, parts) for negative, _, key, parts in fused]
