"""``make bench``: indexing throughput, query latency, memory and ANN recall on real docs.

    .venv/bin/python bench/run.py [--docs DIR] [--min-chunks 1000] [--target 50000]

1. a seeded sample of ``markdown-docs`` (>= 1,000 chunks) indexed BM25-only and with the real
   default embedder: chunks/s of the embedding phase and of the whole run;
2. a >= 50,000-chunk replica of the sample with vectors derived from the real ones (cached
   under .briefd/bench/), queried in one long-lived process: hybrid / BM25 / vector latency,
   every query text distinct so each hybrid and vector query pays its real embedding;
3. process RSS with the model and the sample index, and with the 50K vector index;
4. recall and latency of the HNSW index against the exact scan on the replica's vectors;
5. the token estimator against the real tokenizers, and bundle compile / cache-hit latency;
6. BM25 latency and quality of scifact inside ten copies of markdown-docs (~60K chunks);
7. ``briefd index`` as whole processes: nothing changed, one file edited or deleted
   (bench/noop.py);
8. knowledge health: gaps over 100,000 logged requests, drift over 10,000 commits
   (bench/health.py; needs only testdata/knowledge, like the hook latency of bench/recall.py);
9. replicas: one ``briefd serve`` vs two behind nginx, and what PostgreSQL-backed state adds
   to a bundle and a hook call (bench/replicas.py; needs PostgreSQL and nginx);
10. section windows (opt-in): the example knowledge's first index with and without them, and
   a warm hybrid search of golden-en on both (bench/windows.py).

Prints one table and writes .briefd/bench/results.json (profiles next to it). Skips cleanly
when the data set is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import build
import bundling
import health
import live
import noop
import realistic
import report
import windows
from ann import compare
from common import DOCS, REPO, WORK, load_average, log, settings_for, step
from corpus import OFF_TOPIC, make_queries, select_sample

import recall
import replicas
from briefd.__about__ import __version__
from briefd.embeddings.registry import create_embedder

MODES = ("hybrid", "bm25", "vector")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=Path, default=DOCS, help="the markdown-docs data set")
    parser.add_argument("--min-chunks", type=int, default=1000, help="sample size, in chunks")
    parser.add_argument("--target", type=int, default=50_000, help="replica size, in chunks")
    parser.add_argument("--queries", type=int, default=220, help="queries per search mode")
    parser.add_argument("--profile-queries", type=int, default=60, help="per profiled mode")
    parser.add_argument("--noise", type=float, default=0.3, help="norm of the copies' noise")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="reuse the last real-embedding run of the same sample instead of measuring it again",
    )
    return parser.parse_args()


def query_plan(queries: list[str], per_mode: int, profiled: int) -> dict[str, Any]:
    """Disjoint query lists: a warm-up, one list per mode, the profiled ones, the ANN ones."""
    rest = iter(queries)
    plan: dict[str, Any] = {"warmup": "contaner netwrok configuraton for the daemon"}
    for mode in MODES:
        plan[mode] = [next(rest) for _ in range(per_mode)]
    plan["profile"] = {mode: [next(rest) for _ in range(profiled)] for mode in ("hybrid", "bm25")}
    plan["ann"] = plan["hybrid"]  # embedded in this process, separately: no cache involved
    plan["off_topic"] = [q for q in queries if q in OFF_TOPIC]
    return plan


def measure(db: Path, plan_file: Path, *flags: str) -> dict[str, Any]:
    """Run bench/latency.py in a fresh process; its JSON result."""
    script = Path(__file__).with_name("latency.py")
    command = [sys.executable, str(script), str(db), str(plan_file), *flags]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{script.name} failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout))


def main() -> int:
    args = parse_args()
    noop.main([])  # briefd index as whole processes, against python -c pass (bench/noop.py)
    recall.main([])  # prompt-time hook latency (bench/recall.py): needs only testdata/knowledge
    windows.main([])  # section windows' index time and search cost (bench/windows.py): the same
    live.main([])  # jira_issue + bundle round trip against the fake Jira (bench/live.py)
    health.main([])  # gaps, usage and drift at scale (bench/health.py): the same
    replicas.main([])  # one replica vs two behind nginx, PostgreSQL state (bench/replicas.py)
    if not args.docs.is_dir():
        print(f"bench skipped: the data set {args.docs} is absent (pass --docs DIR)")
        return 0
    started = time.perf_counter()
    WORK.mkdir(parents=True, exist_ok=True)
    facts: dict[str, Any] = {
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "briefd": __version__,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average_start": load_average(),
    }
    steps: dict[str, dict[str, float]] = {}
    with step("select the sample and the queries") as steps["sample"]:
        sample = select_sample(args.docs, args.min_chunks, args.seed)
        total = 3 * args.queries + 2 * args.profile_queries
        plan = query_plan(
            make_queries(sample, total, args.seed), args.queries, args.profile_queries
        )
        plan_file = WORK / "queries.json"
        plan_file.write_text(json.dumps(plan, indent=1, ensure_ascii=False))
    log(f"  {len(sample.docs)} files, {sample.chunks} chunks; {total} distinct queries")
    embedder = create_embedder(settings_for(WORK / "model.db"))  # BRIEFD_BENCH_MODEL or default
    assert embedder is not None, "embeddings are off in the default settings"
    facts["model"] = embedder.model_id
    with step("1. indexing throughput") as steps["indexing"]:
        small = build.index_sample(sample, embedder, reuse=args.quick)
    with step("2. the 50K replica") as steps["replica"]:
        replica = build.build_replica(sample, embedder, args.target, args.noise, args.seed)
    log(f"  replica: {json.dumps(replica['vectors'])}")
    small_db = build.sample_home(sample) / "real.db"
    with step("3. RSS with the model and the sample index") as steps["rss_small"]:
        small_rss = measure(small_db, plan_file, "--rss-only")
    with step("2-3. latency and RSS on the replica (one process)") as steps["latency"]:
        latency = measure(Path(replica["db"]), plan_file, "--profile-dir", str(WORK))
    with step("4. ANN vs exact") as steps["ann"]:
        vectors = embedder.embed_batch(plan["ann"], "query")
        ann = compare(
            Path(replica["db"]), small_db, embedder.model_id, vectors, (10, 50), args.seed
        )
    with step("5. bundles: token estimator and cache") as steps["bundles"]:
        bundle_results = bundling.measure()
    with step("6. BM25 on a realistic large index") as steps["realistic"]:
        realistic_results = realistic.measure()
    facts["load_average_end"] = load_average()
    facts["bench_s"] = round(time.perf_counter() - started, 1)
    results = {
        **facts,
        "steps": steps,
        "sample": small,
        "replica": replica,
        "rss_small": small_rss,
        "latency": latency,
        "ann": ann,
        "bundles": bundle_results,
        "realistic": realistic_results,
    }
    (WORK / "results.json").write_text(json.dumps(results, indent=2, ensure_ascii=False))
    title = (
        f"briefd {__version__} bench · {facts['model']} · {facts['cpus']} CPUs · load average "
        f"{facts['load_average_start']} → {facts['load_average_end']} · {facts['bench_s']} s"
    )
    report.print_table(
        title,
        {
            f"1. indexing ({len(sample.docs)} real files)": report.indexing_rows(small, replica),
            f"2. query latency, {replica['bm25']['chunks']} chunks": report.latency_rows(latency),
            "3. process RSS": report.memory_rows(small_rss, latency),
            f"4. ANN (HNSW, as VectorIndex builds it) vs exact, {len(vectors)} queries": [
                *report.ann_rows("replica", ann["replica"]),
                *report.ann_rows("Gaussian fit, no copies", ann["gaussian_fit"]),
            ],
            "5. bundles (example knowledge, BM25)": bundling.rows(bundle_results),
            "6. BM25 on a large index that does not repeat itself": realistic.rows(
                realistic_results
            ),
            "bench wall time": [(name, f"{t['wall_s']} s", "", "") for name, t in steps.items()],
        },
    )
    log(f"results: {(WORK / 'results.json').relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
