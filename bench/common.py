"""Helpers shared by the benchmark steps: paths, settings, timing, percentiles, memory."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from briefd.embeddings.base import Embedder, EmbeddingKind, Vectors
from briefd.settings import Settings, with_overrides

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / ".briefd" / "bench"
DOCS = REPO.parent / "shared" / "eval-data" / "markdown-docs"


def settings_for(
    db: Path, source: Path | None = None, embeddings: bool = True, **extra: Any
) -> Settings:
    """The product defaults (no briefd.yaml, no BRIEFD_* variables) with the bench's paths.

    ``extra`` takes dotted keys with ``__`` for the dot: ``vectors__ann_threshold=1``.
    ``BRIEFD_BENCH_MODEL`` names another local model to measure (e.g. the opt-in
    ``multilingual-e5-small-openvino``): ``BRIEFD_BENCH_MODEL=… make bench``.
    """
    overrides = {
        "db": str(db),
        "source": str(source) if source else None,
        "embeddings.enabled": embeddings,
        **{key.replace("__", "."): value for key, value in extra.items()},
    }
    if os.environ.get("BRIEFD_BENCH_MODEL"):
        overrides["embeddings.model"] = os.environ["BRIEFD_BENCH_MODEL"]
    return with_overrides(Settings(), overrides)


def fresh(db: Path) -> Path:
    """Remove an SQLite file and its WAL companions; returns ``db``."""
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    return db


def digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


def rss_mb(field: str = "VmRSS") -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def summary(values_ms: Sequence[float]) -> dict[str, float]:
    values = np.asarray(values_ms, dtype=float)
    return {
        "n": len(values),
        "p50": round(float(np.percentile(values, 50)), 2),
        "p95": round(float(np.percentile(values, 95)), 2),
        "mean": round(float(values.mean()), 2),
        "max": round(float(values.max()), 2),
    }


def load_average() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


@contextmanager
def step(name: str) -> Iterator[dict[str, float]]:
    """Log the start and the end of a step; the yielded dict receives wall and CPU seconds
    (CPU of every thread of this process: CPU/wall below the thread count means contention)."""
    log(f"> {name} (load average {load_average()})")
    timing: dict[str, float] = {}
    wall, cpu = time.perf_counter(), time.process_time()
    yield timing
    timing["wall_s"] = round(time.perf_counter() - wall, 2)
    timing["cpu_s"] = round(time.process_time() - cpu, 2)
    log(f"  done: {timing['wall_s']} s wall, {timing['cpu_s']} s CPU")


class IndexProgress:
    """An indexing progress callback: one line per stage end, and every ``every`` seconds."""

    def __init__(self, label: str, every: float = 15.0) -> None:
        self.label = label
        self.every = every
        self._started: dict[str, float] = {}
        self._printed: dict[str, float] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = time.perf_counter()
        started = self._started.setdefault(stage, now)
        if done < total and now - self._printed.get(stage, started) < self.every:
            return
        self._printed[stage] = now
        rate = done / (now - started) if now > started else 0.0
        eta = f", ~{(total - done) / rate:.0f} s left" if rate and done < total else ""
        log(f"  {self.label}: {stage} {done}/{total} ({rate:.1f}/s{eta})")


class TimedEmbedder(Embedder):
    """Delegates to a real embedder (same model_id) and adds up the time spent per kind."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name, self.runtime, self.dim = inner.name, inner.runtime, inner.dim
        self.seconds: dict[str, float] = {"query": 0.0, "passage": 0.0}
        self.texts: dict[str, int] = {"query": 0, "passage": 0}

    def embed_batch(self, texts: Sequence[str], kind: EmbeddingKind) -> Vectors:
        started = time.perf_counter()
        try:
            return self.inner.embed_batch(texts, kind)
        finally:
            self.seconds[kind] += time.perf_counter() - started
            self.texts[kind] += len(texts)


def model_tokens(embedder: Embedder, texts: Sequence[str]) -> float | None:
    """Mean tokens the model itself sees per passage (the e5 runtimes; None otherwise)."""
    inner = getattr(embedder, "inner", embedder)
    if not texts:
        return None
    if hasattr(inner, "token_ids"):  # e5 on onnxruntime
        return round(sum(len(inner.token_ids(t, "passage")) for t in texts) / len(texts), 1)
    engine = getattr(inner, "_engine", None)
    if engine is None:
        return None
    return round(sum(engine.token_count(t, False) for t in texts) / len(texts), 1)
