"""ANN (usearch HNSW, as VectorIndex builds it) against the exact scan, with real queries.

Two vector sets of the same size: the replica's (50 noisy copies of each real passage vector,
so near-duplicates abound, as with versioned docs), and a cross-check without copies: draws
from a Gaussian fitted to the sample's real vectors (same mean and covariance, renormalised).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
from common import log, rss_mb, summary

from briefd.embeddings.base import Vectors, normalise
from briefd.store.db import Store
from briefd.vectors import store as vector_store
from briefd.vectors.index import VectorIndex
from briefd.vectors.store import Matrix


def compare(
    replica: Path, sample: Path, model: str, queries: Vectors, depths: tuple[int, ...], seed: int
) -> dict[str, Any]:
    rowids, scopes, matrix = _load(replica, model)
    result = {"replica": recall(model, rowids, scopes, matrix, queries, depths)}
    real = _load(sample, model)[2]
    fitted = np.random.default_rng(seed).multivariate_normal(
        real.mean(axis=0), np.cov(real, rowvar=False), size=len(rowids)
    )
    log(f"  Gaussian fit to the {len(real)} real vectors, {len(rowids)} draws")
    result["gaussian_fit"] = recall(model, rowids, scopes, normalise(fitted), queries, depths)
    return result


def recall(
    model: str,
    rowids: list[int],
    scopes: list[str],
    matrix: Matrix,
    queries: Vectors,
    depths: tuple[int, ...],
) -> dict[str, Any]:
    """Recall@k of the HNSW index against the exact scan, and both latencies, per depth."""
    exact = VectorIndex.build(model, rowids, scopes, matrix)
    before = rss_mb()
    started = time.perf_counter()
    ann = VectorIndex.build(model, rowids, scopes, matrix, ann_threshold=1)
    result: dict[str, Any] = {
        "rows": len(exact),
        "queries": len(queries),
        "ann_build_s": round(time.perf_counter() - started, 2),
        "ann_rss_growth_mb": round(rss_mb() - before, 1),
    }
    log(f"  HNSW over {len(exact)} vectors built in {result['ann_build_s']} s")
    names = list(exact.scope_names)
    for k in depths:
        exact_ms, ann_ms, recalls = [], [], []
        for query in queries:
            started = time.perf_counter()
            truth = exact.top(query, names, k)
            exact_ms.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            found = ann.top(query, names, k)
            ann_ms.append((time.perf_counter() - started) * 1000)
            recalls.append(len({r for r, _ in truth} & {r for r, _ in found}) / k)
        result[f"k{k}"] = {
            "recall": round(sum(recalls) / len(recalls), 4),
            "min_recall": round(min(recalls), 2),
            "exact_ms": summary(exact_ms),
            "ann_ms": summary(ann_ms),
        }
        log(f"  k={k}: recall {result[f'k{k}']['recall']}")
    return result


def _load(db: Path, model: str) -> tuple[list[int], list[str], Matrix]:
    store = Store.open(db)
    try:
        with store.read() as conn:
            return vector_store.load(conn, model)
    finally:
        store.close()
