"""Embedding speed and memory per local model, each in a fresh process.

    .venv/bin/python bench/embeddings.py [--models a,b] [--threads 2] [--passages 64]
        [--passage-engine auto|openvino|onnxruntime]

Per model: load time, RSS after load, query latency (one ~10-word query, median and best of
30), passage throughput (``--passages`` texts of ~300 tokens in batches of 16, median of 3
runs), peak RSS, and RSS after 60 passages of different lengths. Texts come from
``testdata/knowledge``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
QUERIES = [
    "how many times do we retry a soft decline for card payments",
    "kısmi iade ne zamana kadar yapılabilir ve kim onaylar",
    "which team owns the settlement batch and its alerts",
    "what is the naming convention for database migration files",
    "when do we rotate the api keys of payment providers",
]


def rss_mb(field: str = "VmRSS") -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def passages(count: int, words: int) -> list[str]:
    text = " ".join(
        p.read_text(encoding="utf-8") for p in sorted((REPO / "testdata/knowledge").rglob("*.md"))
    ).split()
    out = [" ".join(text[i : i + words]) for i in range(0, len(text) - words, words)]
    return (out * (count // max(len(out), 1) + 1))[:count]


def sized_passages(embedder: object, count: int, tokens: int = 300) -> list[str]:
    """Windows of words scaled so that the model's own tokenizer sees about ``tokens``."""
    probe = passages(32, 200)
    words = max(20, round(200 * tokens / tokens_mean(embedder, probe)))
    return passages(count, words)


def measure(model: str, threads: int, count: int, engine: str = "auto") -> dict[str, object]:
    from briefd.embeddings.registry import create_embedder
    from briefd.settings import Settings, with_overrides

    settings = with_overrides(
        Settings(),
        {
            "embeddings.model": model,
            "embeddings.threads": threads,
            "embeddings.passage_engine": engine,
        },
    )
    start = time.perf_counter()
    embedder = create_embedder(settings)
    assert embedder is not None
    load_s = time.perf_counter() - start
    rss_load = rss_mb()
    embedder.embed_batch(QUERIES[:1], "query")
    latencies = []
    for i in range(30):
        start = time.perf_counter()
        embedder.embed_batch([QUERIES[i % len(QUERIES)]], "query")
        latencies.append((time.perf_counter() - start) * 1000)
    texts = sized_passages(embedder, count)
    rates = []
    for _ in range(3):
        start = time.perf_counter()
        for at in range(0, len(texts), 16):
            embedder.embed_batch(texts[at : at + 16], "passage")
        rates.append(len(texts) / (time.perf_counter() - start))
    varied = lengths_rss(embedder, texts)
    return {
        "model": embedder.model_id,
        "threads": threads,
        "load_s": round(load_s, 3),
        "rss_after_load_mb": round(rss_load, 1),
        "query_ms_median": round(statistics.median(latencies), 1),
        "query_ms_best": round(min(latencies), 1),
        "passage_tokens_mean": tokens_mean(embedder, texts),
        "chunks_per_s_median": round(statistics.median(rates), 2),
        "chunks_per_s_best": round(max(rates), 2),
        "rss_peak_mb": round(rss_mb("VmHWM"), 1),
        "rss_after_60_lengths_mb": varied,
    }


def lengths_rss(embedder: object, texts: list[str]) -> float:
    """RSS after 60 passages of 60 different lengths (5 to ~300 tokens), one at a time: an
    engine that keeps memory per input shape grows here (OpenVINO unpadded: +290 MB after
    300 lengths), one that does not stays near its peak above."""
    words = " ".join(texts).split()
    for count in range(3, 183, 3):
        embedder.embed_batch([" ".join(words[:count])], "passage")  # type: ignore[attr-defined]
    return round(rss_mb(), 1)


def tokens_mean(embedder: object, texts: list[str]) -> float:
    engine = getattr(embedder, "_engine", None)
    token_ids = getattr(embedder, "token_ids", None)  # e5onnx: its own tokenizer, no limit
    if engine is not None:
        counts = [engine.token_count(t, False) for t in texts]
    elif token_ids is not None:
        counts = [len(token_ids(t, "passage")) + 2 for t in texts]
    else:
        tokenizer = embedder._tokenizer  # type: ignore[attr-defined]
        limit = tokenizer.truncation
        tokenizer.no_truncation()
        counts = [len(e.ids) for e in tokenizer.encode_batch(texts)]
        tokenizer.enable_truncation(max_length=limit["max_length"])
    return round(float(statistics.mean(counts)), 1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="multilingual-e5-small,all-minilm-l6-v2")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--passages", type=int, default=64)
    parser.add_argument("--passage-engine", default="auto")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.threads, args.passages, args.passage_engine)))
        return
    for model in args.models.split(","):
        command = [sys.executable, __file__, "--one", model, "--threads", str(args.threads)]
        command += ["--passage-engine", args.passage_engine]
        result = subprocess.run(
            [*command, "--passages", str(args.passages)],
            capture_output=True,
            text=True,
            check=True,
        )
        print(result.stdout.strip())


if __name__ == "__main__":
    main()
