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
