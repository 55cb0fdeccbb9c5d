"""Building the benchmark's indexes.

* the sample (>= 1,000 real chunks), indexed twice: BM25 only, then with the real embedder;
* the replica (>= 50,000 chunks): the sample copied N times under ``domain/copy-NNN/``, every
  copy but the first retitled so that its passages hash differently; its vectors are the
  sample's real vectors plus Gaussian noise, renormalised, written straight into
  ``chunk_vectors`` under the real model id. A last ``index()`` with the real embedder then
  finds nothing to embed and computes the gate calibration. The replica is cached under
  ``.briefd/bench/replica-<key>/``, keyed by everything it is built from.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
from common import (
    REPO,
    WORK,
    IndexProgress,
    TimedEmbedder,
    digest,
    fresh,
    log,
    model_tokens,
    settings_for,
    step,
)
from corpus import Sample, write_tree

import briefd.tokens
from briefd.api import Briefd
from briefd.embeddings.base import Embedder, normalise
from briefd.markdown.passages import passage_text
from briefd.store.db import Store
from briefd.store.migrations import SCHEMA_VERSION
from briefd.vectors import store as vector_store

BUILD_VERSION = 2  # bump when the way the replica is made changes
# Source files that decide chunks and passage hashes: a change rebuilds the replica.
CHUNKING_SOURCES = ("markdown", "tokens.py", "markdown/passages.py", "store/migrations.py")


def sample_home(sample: Sample) -> Path:
    return WORK / f"sample-{digest([sample.key, _code_key()])}"


def index_sample(sample: Sample, embedder: Embedder, reuse: bool = False) -> dict[str, Any]:
    """Index the sample BM25-only, then from scratch with the real embedder; timings.
    With ``reuse``, a previous run's index and numbers are taken when there are some."""
    home = sample_home(sample)
    if reuse and (home / "sample.json").is_file() and (home / "real.db").is_file():
        log(f"> sample index: reusing {home.relative_to(REPO)} and its numbers (--quick)")
        return {**json.loads((home / "sample.json").read_text()), "cached": True}
    shutil.rmtree(home, ignore_errors=True)
    kb = home / "kb"
    write_tree(sample, kb / "domain")
    result: dict[str, Any] = {"files": len(sample.docs)}
    with step(f"index the sample ({len(sample.docs)} files), BM25 only") as timing:
        settings = settings_for(fresh(home / "bm25.db"), kb, embeddings=False)
        with Briefd(settings, embedder=None) as api:
            report = api.index(progress=IndexProgress("bm25"))
    result["bm25"] = {
        "chunks": report.chunks,
        **timing,
        "chunks_per_s": _rate(report.chunks, timing),
    }
    timed = TimedEmbedder(embedder)
    real = Briefd(settings_for(fresh(home / "real.db"), kb), embedder=timed)
    with (
        step(f"index the sample ({report.chunks} chunks) with {embedder.model_id}") as timing,
        real,
    ):
        report = real.index(progress=IndexProgress("real", every=30))
    if report.embedding_error or report.vectors_missing:
        raise RuntimeError(f"embedding the sample failed: {report.embedding_error}")
    embed_s = timed.seconds["passage"]
    result["real"] = {
        "chunks": report.chunks,
        "embedded": report.embedded,
        **timing,
        "embed_s": round(embed_s, 2),
        "calibration_s": round(timed.seconds["query"], 2),
        "chunks_per_s": _rate(report.chunks, timing),
        "embed_chunks_per_s": round(report.embedded / embed_s, 2) if embed_s else None,
        "model_tokens_mean": model_tokens(embedder, _passages(home / "real.db")),
        "cl100k_tokens_mean": _mean_tokens(home / "real.db"),
    }
    (home / "sample.json").write_text(json.dumps(result, indent=2))
    return {**result, "cached": False}


def build_replica(
    sample: Sample, embedder: Embedder, target: int, noise: float, seed: int
) -> dict[str, Any]:
    """The >= ``target``-chunk replica of the sample (cached); returns its build facts."""
    copies = math.ceil(target / sample.chunks)
    small = sample_home(sample) / "real.db"
    key = digest([BUILD_VERSION, sample.key, copies, noise, seed, embedder.model_id, _code_key()])
    home = WORK / f"replica-{key}"
    facts_file = home / "build.json"
    if facts_file.is_file() and (home / "index.db").is_file():
        log(f"> 50K replica: cached in {home.relative_to(REPO)}")
        return {**json.loads(facts_file.read_text()), "cached": True}
    shutil.rmtree(home, ignore_errors=True)
    kb, db = home / "kb", home / "index.db"
    facts: dict[str, Any] = {"db": str(db), "copies": copies, "noise": noise, "seed": seed}
    with step(f"write {copies} copies of the sample") as timing:
        for k in range(copies):
            write_tree(sample, kb / "domain" / f"copy-{k:03d}", f"[c{k:03d}]" if k else None)
    facts["write_copies"] = timing
    lexical = Briefd(settings_for(db, kb, embeddings=False), embedder=None)
    with step(f"index the replica ({copies * sample.chunks} chunks), BM25 only") as timing, lexical:
        report = lexical.index(progress=IndexProgress("replica bm25"))
    facts["bm25"] = {
        "chunks": report.chunks,
        **timing,
        "chunks_per_s": _rate(report.chunks, timing),
    }
    with step("derive vectors from the sample's real ones") as timing:
        facts["vectors"] = {**derive_vectors(db, small, embedder.model_id, noise, seed), **timing}
    timed = TimedEmbedder(embedder)
    real = Briefd(settings_for(db, kb), embedder=timed)
    with step("index the replica with the real embedder (calibration only)") as timing, real:
        report = real.index(progress=IndexProgress("replica real"))
    if report.embedded or report.vectors_missing or report.embedding_error:
        raise RuntimeError(f"the replica was not fully covered by derived vectors: {report}")
    facts["final_index"] = {**timing, "embedded": report.embedded, "chunks": report.chunks}
    facts["calibration"] = _calibration(db, embedder.model_id)
    shutil.rmtree(kb)
    facts_file.write_text(json.dumps(facts, indent=2))
    return {**facts, "cached": False}


def derive_vectors(db: Path, small: Path, model: str, noise: float, seed: int) -> dict[str, int]:
    """Give every passage of the replica the real vector of the sample chunk it was copied
    from plus Gaussian noise of norm ~``noise``, renormalised.

    Every copy, copy 0 included, is treated alike: an untouched copy 0 would sit closer to
    every query than its noisy siblings and bias the top results (and ANN recall) towards it.
    With noise 0.3 a derived vector has cosine ~0.96 with its source, about what a real
    passage has with its nearest real neighbour in the sample.
    """
    real = _real_vectors(small, model)
    store = Store.open(db)
    try:
        with store.read() as conn:
            rows = conn.execute(
                "SELECT d.path, c.position, c.embed_hash FROM chunks c "
                "JOIN documents d ON d.id = c.doc_id ORDER BY c.rowid"
            ).fetchall()
        bases: dict[str, np.ndarray] = {}
        for path, position, embed_hash in rows:
            _, copy, rel = path.split("/", 2)
            base_hash, base = real[(rel, position)]
            if copy == "copy-000" and embed_hash != base_hash:
                raise RuntimeError(f"copy 0 of {rel}#{position} does not match the sample")
            bases.setdefault(embed_hash, base)
        matrix = np.stack(list(bases.values()))
        jitter = np.random.default_rng(seed).standard_normal(matrix.shape, dtype=np.float32)
        matrix += jitter * (noise / math.sqrt(matrix.shape[1]))
        with store.write() as conn:
            vector_store.save(conn, model, list(bases), normalise(matrix))
        return _vector_counts(store, model)
    finally:
        store.close()


def _vector_counts(store: Store, model: str) -> dict[str, int]:
    with store.read() as conn:
        chunks, distinct = conn.execute(
            "SELECT count(*), count(DISTINCT embed_hash) FROM chunks"
        ).fetchone()
        stored = conn.execute(
            "SELECT count(*) FROM chunk_vectors WHERE model = ?", (model,)
        ).fetchone()[0]
        return {
            "chunks": chunks,
            "distinct_embed_hashes": distinct,
            "vectors": stored,
            "chunks_without_vector": vector_store.uncovered(conn, model),
        }


def _real_vectors(small: Path, model: str) -> dict[tuple[str, int], tuple[str, np.ndarray]]:
    """(path under domain/, chunk position) → (embed hash, real vector) of the sample."""
    store = Store.open(small)
    try:
        with store.read() as conn:
            rows = conn.execute(
                "SELECT d.path, c.position, c.embed_hash, v.dim, v.embedding FROM chunks c "
                "JOIN documents d ON d.id = c.doc_id "
                "JOIN chunk_vectors v ON v.model = ? AND v.embed_hash = c.embed_hash",
                (model,),
            ).fetchall()
    finally:
        store.close()
    return {
        (r[0].removeprefix("domain/"), r[1]): (r[2], vector_store.from_blobs([r[4]], r[3])[0])
        for r in rows
    }


def _calibration(db: Path, model: str) -> dict[str, Any]:
    store = Store.open(db)
    try:
        with store.read() as conn:
            row = conn.execute(
                "SELECT language, probes, mean, maximum FROM calibration WHERE model = ?", (model,)
            ).fetchone()
    finally:
        store.close()
    if row is None:
        raise RuntimeError("the replica has no calibration row after index()")
    return {"language": row[0], "probes": row[1], "mean": row[2], "maximum": row[3]}


def _passages(db: Path) -> list[str]:
    store = Store.open(db)
    try:
        with store.read() as conn:
            rows = conn.execute(
                "SELECT title, heading_path, content FROM chunks GROUP BY embed_hash"
            ).fetchall()
    finally:
        store.close()
    return [passage_text(r[0], json.loads(r[1]), r[2]) for r in rows]


def _mean_tokens(db: Path) -> float:
    store = Store.open(db)
    try:
        with store.read() as conn:
            return round(float(conn.execute("SELECT avg(tokens) FROM chunks").fetchone()[0]), 1)
    finally:
        store.close()


def _rate(chunks: int, timing: dict[str, float]) -> float:
    return round(chunks / timing["wall_s"], 1) if timing.get("wall_s") else 0.0


def _code_key() -> str:
    src = Path(briefd.tokens.__file__).parent
    files = sorted(
        p
        for name in CHUNKING_SOURCES
        for p in ([src / name] if name.endswith(".py") else (src / name).glob("*.py"))
    )
    return digest([SCHEMA_VERSION, *(f"{p.name}:{p.read_text()}" for p in files)])
