"""The vector index at a million chunks (O4): HNSW build time, recall@10 against the exact
scan, vector and hybrid-side latency of both, and the process's RSS.

    .venv/bin/python bench/million.py SAMPLE_REAL_DB [--rows 1000000] [--queries 100]
        [--derive shaped|copies] [--replica REPLICA_DB]

Rows are derived from the really embedded sample (``sample-*/real.db``, ~1,000 passages),
quantised as they are made (``vectors.quantized``), so no float32 copy of a million rows
exists. Two derivations:

- ``shaped`` (default): a real passage's vector plus noise drawn from the real passages' own
  covariance (the directions in which real passages differ), scaled so that a derived row is
  as close to its source as a real passage is to its nearest real neighbour (median cosine).
- ``copies``: the 50K replica's rows (already noisy copies) plus isotropic noise of norm 0.3 —
  ~1,000 copies of each passage at 1M, whose order for a query is set by random noise.

Both are harder for a graph than real text: local intrinsic dimensionality (MLE over the 20
nearest rows of the bench's queries) is 32.5 for the real sample, 39 for ``shaped`` and 49 for
``copies`` at the sample's size, and grows with the row count for both. Queries are real: the
bench's query texts embedded by the default model. The hybrid row is the vector side of a
hybrid query as served — the query embedded alone, the top 50 (``search.vector_candidates``)
and the cosines of those candidates; BM25, fusion and the rest of a search are not included
here: bench/million_hybrid.py builds a real million-chunk index and times search as served.
Writes .briefd/bench/million.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from ann import _load
from common import WORK, load_average, log, rss_mb, summary
from report import Row, print_table

from briefd.embeddings.registry import create_embedder
from briefd.settings import Settings
from briefd.vectors import graph as vector_graph
from briefd.vectors.index import VectorIndex
from briefd.vectors.quantized import BLOCK, Quantized

TARGET_RECALL = 0.95
TARGET_P95_MS = 40.0
HYBRID_K = 50  # search.vector_candidates: what a hybrid query asks of the vector index


def shaped(real: np.ndarray, rows: int, seed: int) -> Quantized:
    """Real rows plus noise shaped like the real rows' spread (see the module docstring)."""
    rng = np.random.default_rng(seed)
    cov = np.cov(real, rowvar=False).astype(np.float64)
    root = np.linalg.cholesky(cov + 1e-9 * np.eye(len(cov))).astype(np.float32)
    scale = _scale_to_neighbour(real, root, rng)
    log(f"  shaped noise x{scale:.2f} (cosine to source = real nearest-neighbour median)")
    out = Quantized.empty(rows, real.shape[1])
    for start in range(0, rows, BLOCK):
        count = min(BLOCK, rows - start)
        noise = rng.standard_normal((count, real.shape[1]), dtype=np.float32) @ root.T
        block = real[rng.integers(0, len(real), count)] + scale * noise
        out.put(start, block / np.linalg.norm(block, axis=1, keepdims=True))
    return out


def _scale_to_neighbour(real: np.ndarray, root: np.ndarray, rng: np.random.Generator) -> float:
    sims = real @ real.T
    np.fill_diagonal(sims, -1)
    target = float(np.median(sims.max(axis=1)))
    noise = rng.standard_normal((4096, real.shape[1]), dtype=np.float32) @ root.T
    base = real[rng.integers(0, len(real), len(noise))]
    low, high = 0.0, 4.0
    for _ in range(30):  # bisection: the cosine falls as the scale grows
        mid = (low + high) / 2
        block = base + mid * noise
        cosine = float(np.mean(np.sum(block * base, axis=1) / np.linalg.norm(block, axis=1)))
        low, high = (mid, high) if cosine > target else (low, mid)
    return (low + high) / 2


def copies(base: np.ndarray, rows: int, noise: float, seed: int) -> Quantized:
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


def measure(args: argparse.Namespace) -> dict[str, Any]:
    embedder = create_embedder(Settings())
    assert embedder is not None
    texts = json.loads((WORK / "queries.json").read_text())["hybrid"][: args.queries]
    vectors = embedder.embed_batch(texts, "query")
    if args.derive == "copies":
        quantized = copies(_load(args.replica, embedder.model_id)[2], args.rows, 0.3, args.seed)
    else:
        quantized = shaped(_load(args.db, embedder.model_id)[2], args.rows, args.seed)
    rows, model = args.rows, embedder.model_id
    rowids, scopes = list(range(rows)), ["domain"] * rows
    exact = VectorIndex.build(model, rowids, scopes, quantized)
    result: dict[str, Any] = {"rows": rows, "queries": len(texts), "derive": args.derive}
    result["load_average_start"] = load_average()
    result["vectors_mb"] = round(quantized.nbytes / 2**20, 1)
    result["rss_exact_mb"] = round(rss_mb(), 1)
    result["hnsw"] = {
        "connectivity": vector_graph.CONNECTIVITY,
        "expansion_add": vector_graph.EXPANSION_ADD,
        "breadth_k10": vector_graph.search_breadth(rows, 10, 40),
        "breadth_k50": vector_graph.search_breadth(rows, HYBRID_K, 4 * HYBRID_K),
    }
    log(f"  building HNSW over {rows} rows (load average {load_average()})")
    with tempfile.TemporaryDirectory(dir=WORK) as home:
        beside = Path(home) / "index.db"
        started, cpu = time.perf_counter(), time.process_time()
        built = VectorIndex.build(
            model, rowids, scopes, quantized, ann_threshold=1, ann_beside=beside
        )
        result["hnsw_build_s"] = round(time.perf_counter() - started, 1)
        result["hnsw_build_cpu_s"] = round(time.process_time() - cpu, 1)
        result["rss_built_mb"] = round(rss_mb(), 1)
        del built
        log(f"  built and saved in {result['hnsw_build_s']} s (load {load_average()})")
        files = list(Path(home).glob("index.db.hnsw-*.usearch"))
        result["hnsw_file_mb"] = round(sum(f.stat().st_size for f in files) / 2**20, 1)
        started = time.perf_counter()  # what a restart or reload of the same rows costs
        ann = VectorIndex.build(
            model, rowids, scopes, quantized, ann_threshold=1, ann_beside=beside
        )
        result["hnsw_map_s"] = round(time.perf_counter() - started, 2)
        result.update(_queries(exact, ann, embedder, texts, vectors))
        result["rss_hnsw_mb"] = round(rss_mb(), 1)  # the mapped graph, after the queries
        result["load_average_end"] = load_average()
    return result


def _queries(
    exact: VectorIndex, ann: VectorIndex, embedder: Any, texts: list[str], vectors: Any
) -> dict[str, Any]:
    timings: dict[str, list[float]] = {"exact": [], "hnsw": [], "hnsw_k50": [], "hybrid": []}
    recalls, recalls50, same_order = [], [], []
    for text, query in zip(texts, vectors, strict=True):
        started = time.perf_counter()
        truth = exact.top(query, ["domain"], 10)
        timings["exact"].append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        found = ann.top(query, ["domain"], 10)
        timings["hnsw"].append((time.perf_counter() - started) * 1000)
        recalls.append(len({r for r, _ in truth} & {r for r, _ in found}) / 10)
        common = {r for r, _ in truth} & {r for r, _ in found}
        same_order.append(
            [r for r, _ in truth if r in common] == [r for r, _ in found if r in common]
        )
        started = time.perf_counter()
        wide = ann.top(query, ["domain"], HYBRID_K)
        timings["hnsw_k50"].append((time.perf_counter() - started) * 1000)
        truth50 = exact.top(query, ["domain"], HYBRID_K)
        recalls50.append(len({r for r, _ in truth50} & {r for r, _ in wide}) / HYBRID_K)
        started = time.perf_counter()
        vector = embedder.embed_batch([text], "query")[0]
        hits = ann.top(vector, ["domain"], HYBRID_K)
        ann.cosines([r for r, _ in hits], vector)
        timings["hybrid"].append((time.perf_counter() - started) * 1000)
    out: dict[str, Any] = {f"{name}_ms": summary(values) for name, values in timings.items()}
    out["recall@10"] = round(float(np.mean(recalls)), 4)
    out["min_recall@10"] = round(float(np.min(recalls)), 2)
    out["recall@50"] = round(float(np.mean(recalls50)), 4)
    out["exact_order_kept"] = round(float(np.mean(same_order)), 4)
    return out


def rows(result: dict[str, Any]) -> list[Row]:
    hnsw, exact, hybrid = result["hnsw_ms"], result["exact_ms"], result["hybrid_ms"]
    recall, params = result["recall@10"], result["hnsw"]
    return [
        ("vectors in memory (two int8 rows each)", f"{result['vectors_mb']} MB", "", ""),
        (
            f"HNSW build (usearch on the int8 rows, M={params['connectivity']}, "
            f"ef_add {params['expansion_add']})",
            f"{result['hnsw_build_s']} s ({result['hnsw_build_cpu_s']} CPU-s), saved",
            "",
            "",
        ),
        (
            f"HNSW recall@10 vs exact (ef {params['breadth_k10']}; min per query)",
            f"{recall:.3f} (min {result['min_recall@10']:.1f})",
            f">= {TARGET_RECALL}",
            "PASS" if recall >= TARGET_RECALL else "FAIL",
        ),
        (
            f"HNSW recall@50 vs exact (ef {params['breadth_k50']})",
            f"{result['recall@50']:.3f}",
            "",
            "",
        ),
        (
            "HNSW file beside the index / mapped at the next load",
            f"{result['hnsw_file_mb']} MB / {result['hnsw_map_s']} s",
            "",
            "",
        ),
        ("re-scored hits in exact order", f"{result['exact_order_kept']:.0%} of queries", "", ""),
        ("vector top-10, HNSW", f"p50 {hnsw['p50']:.1f} / p95 {hnsw['p95']:.1f} ms", "", ""),
        (
            "vector top-50, HNSW",
            f"p50 {result['hnsw_k50_ms']['p50']:.1f} / p95 {result['hnsw_k50_ms']['p95']:.1f} ms",
            "",
            "",
        ),
        (
            "hybrid's vector side: embed query + top-50 + cosines",
            f"p50 {hybrid['p50']:.1f} / p95 {hybrid['p95']:.1f} ms",
            f"p95 <= {TARGET_P95_MS:g} ms",
            "PASS" if hybrid["p95"] <= TARGET_P95_MS else "FAIL",
        ),
        (
            "vector top-10, exact int8 scan",
            f"p50 {exact['p50']:.1f} / p95 {exact['p95']:.1f} ms",
            "",
            "",
        ),
        (
            "RSS: exact index / HNSW built / HNSW mapped, after the queries",
            f"{result['rss_exact_mb']} / {result['rss_built_mb']} / {result['rss_hnsw_mb']} MB",
            "",
            "",
        ),
    ]


def main(argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db", type=Path, help="the really embedded sample's real.db")
    parser.add_argument("--replica", type=Path, help="the 50K replica's index.db (--derive copies)")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--derive", choices=("shaped", "copies"), default="shaped")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=WORK / "million.json")
    args = parser.parse_args(argv)
    if args.derive == "copies" and args.replica is None:
        parser.error("--derive copies needs --replica")
    log(f"> {args.rows} vectors, {args.derive} (load average {load_average()})")
    result = measure(args)
    args.out.write_text(json.dumps(result, indent=2))
    print_table(
        f"vector index at {args.rows:,} rows ({args.derive}) · load average "
        f"{result['load_average_start']} → {result['load_average_end']}",
        {f"{args.rows:,} vectors": rows(result)},
    )
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
