"""The vector index at a million chunks (O4): HNSW build time, recall@10 against the exact
scan, vector top-k latency of both, and the process's RSS.

    .venv/bin/python bench/million.py REPLICA_DB [--rows 1000000] [--queries 100]

Rows are derived from the 50K replica's vectors (themselves derived from a really embedded
sample) as noisy copies — each row is a replica row plus Gaussian noise of norm ``--noise``,
renormalised — quantised as they are made (``vectors.quantized``), so no float32 copy of a
million rows ever exists. Queries are real: the bench's query texts embedded by the default
model. Hybrid latency at this size needs a million-chunk SQLite index as well; this step
measures the vector side, which is what changes with the size (BM25 has its own step).
Writes .briefd/bench/million.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from ann import _load
from common import WORK, load_average, log, rss_mb, summary
from report import Row, print_table

from briefd.embeddings.registry import create_embedder
from briefd.settings import Settings
from briefd.vectors.index import VectorIndex
from briefd.vectors.quantized import BLOCK, Quantized

TARGET_RECALL = 0.95
TARGET_P95_MS = 40.0


def derive(base: np.ndarray, rows: int, noise: float, seed: int) -> Quantized:
    rng = np.random.default_rng(seed)
    out = Quantized.empty(rows, base.shape[1])
    for start in range(0, rows, BLOCK):
        count = min(BLOCK, rows - start)
        picked = base[rng.integers(0, len(base), count)]
        jitter = rng.normal(size=picked.shape).astype(np.float32)
        jitter *= noise / np.linalg.norm(jitter, axis=1, keepdims=True)
        block = picked + jitter
        out.put(start, block / np.linalg.norm(block, axis=1, keepdims=True))
    return out


def measure(db: Path, rows: int, queries: int, noise: float, seed: int) -> dict[str, Any]:
    embedder = create_embedder(Settings())
    assert embedder is not None
    plan = json.loads((WORK / "queries.json").read_text())
    vectors = embedder.embed_batch(plan["hybrid"][:queries], "query")
    _, _, base = _load(db, embedder.model_id)
    started_rss = rss_mb()
    quantized = derive(base, rows, noise, seed)
    del base
    rowids, scopes = list(range(rows)), ["domain"] * rows
    exact = VectorIndex.build(embedder.model_id, rowids, scopes, quantized)
    result: dict[str, Any] = {"rows": rows, "queries": queries, "load_average": load_average()}
    result["vectors_mb"] = round(quantized.nbytes / 2**20, 1)
    result["rss_exact_mb"] = round(rss_mb(), 1)
    started = time.perf_counter()
    ann = VectorIndex.build(embedder.model_id, rowids, scopes, quantized, ann_threshold=1)
    result["hnsw_build_s"] = round(time.perf_counter() - started, 1)
    result["rss_hnsw_mb"] = round(rss_mb(), 1)
    result["rss_growth_mb"] = round(rss_mb() - started_rss, 1)
    log(f"  HNSW over {rows} rows built in {result['hnsw_build_s']} s")
    exact_ms, ann_ms, recalls = [], [], []
    for query in vectors:
        started = time.perf_counter()
        truth = exact.top(query, ["domain"], 10)
        exact_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        found = ann.top(query, ["domain"], 10)
        ann_ms.append((time.perf_counter() - started) * 1000)
        recalls.append(len({r for r, _ in truth} & {r for r, _ in found}) / 10)
    result["recall@10"] = round(float(np.mean(recalls)), 4)
    result["exact_ms"], result["hnsw_ms"] = summary(exact_ms), summary(ann_ms)
    return result


def rows(result: dict[str, Any]) -> list[Row]:
    hnsw, exact = result["hnsw_ms"], result["exact_ms"]
    recall = result["recall@10"]
    return [
        ("vectors in memory (two int8 rows each)", f"{result['vectors_mb']} MB", "", ""),
        ("HNSW build (usearch, int8, M=32, ef 128/256)", f"{result['hnsw_build_s']} s", "", ""),
        (
            "HNSW recall@10 vs exact",
            f"{recall:.3f}",
            f">= {TARGET_RECALL}",
            "PASS" if recall >= TARGET_RECALL else "FAIL",
        ),
        (
            "vector top-10, HNSW (excl. query embedding)",
            f"p50 {hnsw['p50']:.1f} / p95 {hnsw['p95']:.1f} ms",
            f"p95 <= {TARGET_P95_MS:g} ms",
            "PASS" if hnsw["p95"] <= TARGET_P95_MS else "FAIL",
        ),
        (
            "vector top-10, exact int8 scan",
            f"p50 {exact['p50']:.1f} / p95 {exact['p95']:.1f} ms",
            "",
            "",
        ),
        (
            "RSS: exact index / with HNSW",
            f"{result['rss_exact_mb']} / {result['rss_hnsw_mb']} MB",
            "",
            "",
        ),
    ]


def main(argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db", type=Path, help="the 50K replica's index.db")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--noise", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    log(f"> {args.rows} vectors (load average {load_average()})")
    result = measure(args.db, args.rows, args.queries, args.noise, args.seed)
    (WORK / "million.json").write_text(json.dumps(result, indent=2))
    print_table(
        f"vector index at {args.rows:,} rows · load average {result['load_average']}",
        {f"{args.rows:,} vectors": rows(result)},
    )
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
