"""Query latency and memory of one long-lived process, like a server's (run.py starts it).

    .venv/bin/python bench/latency.py DB PLAN.json [--rss-only] [--profile-dir DIR]

PLAN.json holds distinct query texts: ``warmup``, one list per mode, and ``profile`` lists.
Every query misses the query-embedding cache, so hybrid and vector latencies include the real
query embedding. Modes take turns query by query, so drift in machine load hits them alike.
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from common import TimedEmbedder, rss_mb, settings_for, summary

from briefd.api import Briefd
from briefd.embeddings.registry import create_embedder
from briefd.retrieval.lexical import FieldWeights, build_match, common_terms, run_match
from briefd.retrieval.search import SearchRequest
from briefd.store.scopes import resolve_scopes
from briefd.text import query_terms

MODES = ("hybrid", "bm25", "vector")
# (file suffix, function) → label: where a query's time goes, from cProfile cumulative times.
BREAKDOWN = {
    ("retrieval/search.py", "search"): "search() total",
    ("retrieval/semantic.py", "query_vector"): "query embedding",
    ("retrieval/lexical.py", "run_match"): "FTS5 BM25 queries",
    ("retrieval/spelling.py", "corrections"): "typo check",
    ("vectors/index.py", "top"): "vector top-k",
    ("vectors/index.py", "cosines"): "candidate cosines",
    ("retrieval/semantic.py", "index"): "vector index check",
    ("store/scopes.py", "resolve_scopes"): "resolve scopes",
    ("retrieval/fusion.py", "score_fusion"): "fusion",
    ("retrieval/search.py", "_hydrate"): "hydrate rows",
    ("retrieval/search.py", "_related"): "related links",
}


def request(text: str, mode: str) -> SearchRequest:
    return SearchRequest(text, scopes=("all",), mode=mode, top_k=8)  # type: ignore[arg-type]


def timed_search(api: Briefd, embedder: TimedEmbedder, text: str, mode: str) -> dict[str, Any]:
    embedded = embedder.seconds["query"]
    started, used = time.perf_counter(), time.process_time()
    result = api.search(request(text, mode))
    ms = (time.perf_counter() - started) * 1000
    cpu_ms = (time.process_time() - used) * 1000  # every thread of the process
    embed_ms = (embedder.seconds["query"] - embedded) * 1000
    return {
        "query": text,
        "ms": ms,
        "cpu_ms": cpu_ms,
        "embed_ms": embed_ms,
        "hits": len(result.hits),
        "gate": result.gate,
    }


def run_modes(api: Briefd, embedder: TimedEmbedder, plan: dict[str, Any]) -> dict[str, Any]:
    rows: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
    for i in range(min(len(plan[mode]) for mode in MODES)):
        for turn in range(len(MODES)):
            mode = MODES[(i + turn) % len(MODES)]
            rows[mode].append(timed_search(api, embedder, plan[mode][i], mode))
    off_topic = set(plan["off_topic"])
    return {mode: describe(mode_rows, off_topic) for mode, mode_rows in rows.items()}


def describe(rows: Sequence[dict[str, Any]], off_topic: set[str]) -> dict[str, Any]:
    slowest = sorted(rows, key=lambda r: -r["ms"])[:5]
    return {
        "latency_ms": summary([r["ms"] for r in rows]),
        "query_embedding_ms": summary([r["embed_ms"] for r in rows]),
        "without_embedding_ms": summary([r["ms"] - r["embed_ms"] for r in rows]),
        "mean_hits": round(sum(r["hits"] for r in rows) / len(rows), 2),
        "off_topic": sum(1 for r in rows if r["query"] in off_topic),
        "off_topic_empty": sum(1 for r in rows if r["query"] in off_topic and not r["hits"]),
        "on_topic_empty": sum(1 for r in rows if r["query"] not in off_topic and not r["hits"]),
        "slowest": [{"query": r["query"], "ms": round(r["ms"], 1)} for r in slowest],
        # CPU time of the whole process during each search (the embedding's included): on a
        # machine whose cores other jobs share, wall time is mostly waiting for a core
        **({"cpu_ms": summary([r["cpu_ms"] for r in rows])} if "cpu_ms" in rows[0] else {}),
    }


def profile(api: Briefd, texts: Sequence[str], mode: str, out: Path | None) -> dict[str, Any]:
    """Per-query milliseconds of the main steps, and the top functions by own time."""
    profiler = cProfile.Profile()
    profiler.enable()
    for text in texts:
        api.search(request(text, mode))
    profiler.disable()
    stats = pstats.Stats(profiler)
    if out is not None:
        with (out / f"profile-{mode}.txt").open("w") as stream:
            pstats.Stats(profiler, stream=stream).sort_stats("cumulative").print_stats(40)
    per_query = 1000 / len(texts)
    steps: dict[str, float] = {}
    own = []
    for (file, _, function), (_, _, tottime, cumtime, _) in stats.stats.items():  # type: ignore[attr-defined]
        for (suffix, name), label in BREAKDOWN.items():
            if function == name and file.endswith(suffix):
                steps[label] = round(cumtime * per_query, 2)
        own.append((tottime * per_query, f"{Path(file).name}:{function}"))
    top = [{"function": name, "ms": round(ms, 2)} for ms, name in sorted(own, reverse=True)[:8]]
    return {"queries": len(texts), "ms_per_query": steps, "top_own_time": top}


def lexical_split(api: Briefd, texts: Sequence[str]) -> dict[str, Any]:
    """The two FTS5 queries of a BM25 search timed apart, and the share of the index the
    any-term (OR) query matches: its cost grows with that share."""
    config = api.settings.search
    weights = FieldWeights(config.title_weight, config.heading_weight, config.body_weight)
    times: dict[str, list[float]] = {"all_terms": [], "any_term": []}
    shares = []
    with api.store.read() as conn:
        total = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
        scopes = resolve_scopes(conn, ("all",), ())
        for text in texts:
            terms = tuple(query_terms(text))  # the plan search() runs: common terms pruned
            common = common_terms(
                conn, terms, config.any_term_max_share, config.any_term_min_chunks
            )
            plan = build_match(text, common=common)
            for name, match in (("all_terms", plan.all_terms), ("any_term", plan.any_term)):
                if match:
                    started = time.perf_counter()
                    run_match(conn, match, scopes, weights, config.candidates)
                    times[name].append((time.perf_counter() - started) * 1000)
            count = "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?"
            shares.append(100 * conn.execute(count, (plan.any_term,)).fetchone()[0] / total)
    return {
        **{f"{name}_ms": summary(values) for name, values in times.items()},
        "any_term_match_percent": summary(shares),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("db", type=Path)
    parser.add_argument("plan", type=Path)
    parser.add_argument("--rss-only", action="store_true")
    parser.add_argument("--profile-dir", type=Path)
    args = parser.parse_args()
    plan = json.loads(args.plan.read_text())
    settings = settings_for(args.db)
    rss = {"start_mb": rss_mb()}
    inner = create_embedder(settings)
    assert inner is not None
    embedder = TimedEmbedder(inner)
    embedder.embed_batch(["load the model"], "query")
    rss["model_loaded_mb"] = rss_mb()
    out: dict[str, Any] = {"model": embedder.model_id, "rss": rss}
    with Briefd(settings, embedder=embedder) as api:
        first = timed_search(api, embedder, plan["warmup"], "hybrid")
        out["first_query_ms"] = round(first["ms"], 1)
        rss["after_first_query_mb"] = rss_mb()
        rss["peak_after_first_query_mb"] = rss_mb("VmHWM")
        if not args.rss_only:
            out["modes"] = run_modes(api, embedder, plan)
            rss["after_all_queries_mb"] = rss_mb()
            out["profile"] = {
                mode: profile(api, texts, mode, args.profile_dir)
                for mode, texts in plan["profile"].items()
            }
            out["lexical"] = lexical_split(api, plan["profile"]["bm25"])
            rss["peak_mb"] = rss_mb("VmHWM")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
