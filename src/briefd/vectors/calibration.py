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
        "SELECT fingerprint, mean, std, maximum, probes FROM calibration WHERE model = ?", (model,)
    ).fetchone()
    if row is None:
        return None
    return Calibration(model, row[0], row[1], row[2], row[3], row[4])


def refresh(store: Store, embedder: Embedder, fingerprint: str) -> Calibration | None:
    """Run the probe queries against the index's vectors and store the result."""
    with store.read() as conn:
        current = load(conn, embedder.model_id)
        if current is not None and current.fingerprint == fingerprint:
            return current
        _, _, matrix = vector_store.load(conn, embedder.model_id)
    if len(matrix) == 0:
        return None
    probes = embedder.embed_batch(list(PROBES), "query")
    best = np.max(matrix @ probes.T, axis=0)
    result = calibrate(embedder.model_id, fingerprint, [float(v) for v in best])
    with store.write() as conn:
        conn.execute(
            "INSERT OR REPLACE INTO calibration "
            "(model, fingerprint, mean, std, maximum, probes, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                result.model,
                result.fingerprint,
                result.mean,
                result.std,
                result.maximum,
                result.probes,
                datetime.fromtimestamp(time.time(), UTC).isoformat(timespec="seconds"),
            ),
        )
    return result
