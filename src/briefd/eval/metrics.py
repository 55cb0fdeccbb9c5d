"""Ranking metrics, pure: Recall@k, MRR@10 and nDCG@10 (gains as given by the labels)."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence

METRICS = ("recall@5", "recall@10", "mrr@10", "ndcg@10")


def score_ranking(
    ranked: Sequence[Hashable], relevant: Mapping[Hashable, float]
) -> dict[str, float]:
    """Metrics of one query: ``ranked`` best first (no duplicates), ``relevant`` key → gain."""
    wanted = {k: g for k, g in relevant.items() if g > 0}
    if not wanted:
        return dict.fromkeys(METRICS, 0.0)
    top10 = list(ranked[:10])
    recall5 = sum(1 for k in ranked[:5] if k in wanted) / len(wanted)
    recall10 = sum(1 for k in top10 if k in wanted) / len(wanted)
    mrr = next((1.0 / rank for rank, k in enumerate(top10, 1) if k in wanted), 0.0)
    dcg = sum(wanted.get(k, 0.0) / math.log2(rank + 1) for rank, k in enumerate(top10, 1))
    ideal = sorted(wanted.values(), reverse=True)[:10]
    idcg = sum(g / math.log2(rank + 1) for rank, g in enumerate(ideal, 1))
    return {"recall@5": recall5, "recall@10": recall10, "mrr@10": mrr, "ndcg@10": dcg / idcg}


def mean(rows: Sequence[Mapping[str, float]]) -> dict[str, float]:
    if not rows:
        return dict.fromkeys(METRICS, 0.0)
    return {m: sum(r[m] for r in rows) / len(rows) for m in METRICS}


def dedupe(keys: Sequence[Hashable]) -> list[Hashable]:
    """First occurrence of each key, in order (a section split in parts counts once)."""
    return list(dict.fromkeys(keys))
