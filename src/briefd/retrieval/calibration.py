"""Storing and computing the relevance-gate calibration of an index (R4)."""

from __future__ import annotations

import sqlite3
import time
from datetime import UTC, datetime

import numpy as np

from briefd.embeddings.base import Embedder
from briefd.retrieval.gate import PROBES, Calibration, calibrate
from briefd.store.db import Store
from briefd.vectors import store as vector_store


def load(conn: sqlite3.Connection, model: str) -> Calibration | None:
    row = conn.execute(
        "SELECT fingerprint, language, probes, mean, std, maximum, probe_vectors "
        "FROM calibration WHERE model = ?",
        (model,),
    ).fetchone()
    if row is None or not row[6] or not row[2]:
        return None
    vectors = np.frombuffer(row[6], dtype="<f4").astype(np.float32).reshape(row[2], -1)
    return Calibration(model, row[0], row[1], vectors, row[3], row[4], row[5])


VERSION = "4"  # bump when the probes or the way they are summarised change


def refresh(store: Store, embedder: Embedder, fingerprint: str) -> Calibration | None:
    """Run the probe queries against the index's vectors and store the result."""
    fingerprint = f"v{VERSION}:{fingerprint}"
    with store.read() as conn:
        current = load(conn, embedder.model_id)
        if current is not None and current.fingerprint == fingerprint:
            return current
        _, _, matrix = vector_store.load(conn, embedder.model_id)
    if len(matrix) == 0:
        return None
    groups = {}
    for language, texts in PROBES.items():
        probes = embedder.embed_batch(list(texts), "query")
        groups[language] = (probes, [float(v) for v in np.max(matrix @ probes.T, axis=0)])
    result = calibrate(embedder.model_id, fingerprint, groups)
    with store.write() as conn:
        conn.execute(
            "INSERT OR REPLACE INTO calibration (model, fingerprint, language, mean, std, maximum, "
            "probes, created_at, probe_vectors) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                result.model,
                result.fingerprint,
                result.language,
                result.mean,
                result.std,
                result.maximum,
                len(result.probe_vectors),
                datetime.fromtimestamp(time.time(), UTC).isoformat(timespec="seconds"),
                np.asarray(result.probe_vectors, dtype="<f4").tobytes(),
            ),
        )
    return result
