"""How much a hybrid recall injects: confidence from the index's own calibration (I8).

The relevance gate (R4) tells a question about the knowledge base from small talk; it cannot
tell it from "the build is failing" or "thanks, continue", which sit close to any knowledge base
about software. A hook that injects on every such turn is noise, so recall weighs one more piece
of evidence, the prompt's **specificity**:

    margin = best cosine of the prompt against the index (in scope)
             − mean cosine of the prompt against its NEAREST (3) generic probes
               (briefd.recall.generic)

A prompt closer to everyday agent chatter than to anything in the index is generic. The generic
side averages the nearest probes, as the relevance gate does (:data:`briefd.retrieval.gate.NEAREST`):
one probe that happens to share a domain question's phrasing ("can the merchant still do it")
does not make the question generic on its own. How far a generic prompt reaches into *this*
index is measured on the probes themselves: each probe's margin against the index and the
*other* probes (leave one out) gives the mean and spread of the margins generic prompts get here. The prompt's margin in those units is its specificity z:

    z < weak_z (1.645, one-sided 5%)     generic: nothing is injected
    weak_z ≤ z < strong_z (3.09, 0.1%)   weak: at most one short section (recall.weak_tokens)
    z ≥ strong_z                         strong: the sections, within the budget

The thresholds are the usual one-sided 5% and 0.1% points of the generic margins: a prompt gets
one short section when fewer than 5% of generic requests would score as high against this index,
and its sections only when fewer than 0.1% would — the hook runs on every turn, so a full
injection must almost never fire on chatter, while a real question that reads like chatter still
gets its best section. Nothing is fitted to an eval set; the calibration follows the index (it
is recomputed when the gate's calibration is, after every index change) and is kept in the
``calibration`` table under ``<model>|generic``.
"""

from __future__ import annotations

import hashlib
import sqlite3
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt

from briefd.errors import StoreError
from briefd.model import SearchResult
from briefd.recall.generic import GENERIC_PROMPTS, VERSION
from briefd.recall.ranking import Ranking
from briefd.retrieval.gate import NEAREST
from briefd.retrieval.semantic import SemanticIndex
from briefd.store.db import Store

Vectors = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class GenericCalibration:
    """The generic probes' vectors and their leave-one-out margins against one index."""

    fingerprint: str
    vectors: Vectors
    mean: float
    std: float
    maximum: float = 0.0
    probes: str = ""  # digest of the probe texts the vectors embed (reused while it matches)


def recall_ranking(result: SearchResult, specificity: float | None) -> Ranking:
    """A hybrid search's hits as a recall ranking: direct hits, then the related ones."""
    direct = [(h.chunk_id, h.score) for h in result.hits if h.related_to is None]
    related = [(h.chunk_id, h.related_to) for h in result.hits if h.related_to is not None]
    return Ranking(direct, result.gate, specificity=specificity, related=related)


def nearest(cosines: Vectors, others: int | None = None) -> Vectors:
    """Per row, the mean of its ``NEAREST`` highest cosines (of ``others`` when fewer)."""
    k = max(1, min(NEAREST, cosines.shape[-1] if others is None else others))
    means: Vectors = np.sort(cosines, axis=-1)[..., -k:].mean(axis=-1, dtype=np.float32)
    return means


def leave_one_out(probes: Vectors, matrix: Vectors) -> list[float]:
    """Each probe's margin: its best cosine against the index minus its mean cosine against
    its nearest *other* probes."""
    best = (probes @ matrix.T).max(axis=1)
    among = probes @ probes.T
    np.fill_diagonal(among, -np.inf)
    return [float(m) for m in best - nearest(among, len(probes) - 1)]


def specificity(best: float, query: Vectors, generic: GenericCalibration) -> float:
    margin = best - float(nearest(generic.vectors @ query))
    return (margin - generic.mean) / max(generic.std, 1e-6)


def calibrate(fingerprint: str, probes: Vectors, matrix: Vectors) -> GenericCalibration:
    margins = leave_one_out(probes, matrix)
    mean, std = statistics.fmean(margins), statistics.pstdev(margins)
    return GenericCalibration(fingerprint, probes, mean, std, max(margins))


class Specificity:
    """The specificity of prompts against one index, its calibration computed once (and
    stored) per index state and model."""

    def __init__(self) -> None:
        self._generic: GenericCalibration | None = None

    def z(
        self, store: Store, semantic: SemanticIndex | None, prompt: str, scopes: Sequence[str]
    ) -> float | None:
        """The prompt's specificity z, or None without vectors or a gate calibration."""
        generic = self.calibration(store, semantic)
        if semantic is None or generic is None:
            return None
        with store.read() as conn:
            index = semantic.index(conn)
        query = semantic.query_vector(prompt)
        found = index.top(query, scopes, 1)
        return specificity(found[0][1], query, generic) if found else None

    def calibration(
        self, store: Store, semantic: SemanticIndex | None
    ) -> GenericCalibration | None:
        """This index's generic calibration: kept, stored, or computed now (and stored)."""
        if semantic is None:
            return None
        with store.read() as conn:
            index = semantic.index(conn)
            gate = semantic.calibration
            if gate is None or not len(index):
                return None
            key = f"{semantic.embedder.model_id}|generic"
            fingerprint = f"g{VERSION}:{gate.fingerprint}"
            if self._generic is not None and self._generic.fingerprint == fingerprint:
                return self._generic
            stored = _load(conn, key)
        if stored is not None and stored.fingerprint == fingerprint:
            self._generic = stored
            return self._generic
        texts = [t for group in GENERIC_PROMPTS.values() for t in group]
        digest = probe_digest(texts)
        if stored is not None and stored.probes == digest and len(stored.vectors) == len(texts):
            probes = stored.vectors  # the same probes, the same model: no need to load it (O4)
        else:
            probes = semantic.embedder.embed_batch(texts, "query")
        self._generic = replace(calibrate(fingerprint, probes, index.matrix), probes=digest)
        _save(store, key, self._generic)
        return self._generic


def probe_digest(texts: Sequence[str]) -> str:
    """What identifies the generic probes' vectors for one model: their texts."""
    return "generic " + hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]


def _load(conn: sqlite3.Connection, key: str) -> GenericCalibration | None:
    """The generic calibration stored for ``key`` (``<model>|generic``), if any."""
    row = conn.execute(
        "SELECT fingerprint, probes, mean, std, maximum, probe_vectors, language FROM calibration "
        "WHERE model = ?",
        (key,),
    ).fetchone()
    if row is None or not row[5] or not row[1]:
        return None
    vectors = np.frombuffer(row[5], dtype="<f4").astype(np.float32).reshape(row[1], -1)
    probes = str(row[6] or "")
    return GenericCalibration(row[0], vectors, float(row[2]), float(row[3]), float(row[4]), probes)


def _save(store: Store, key: str, generic: GenericCalibration) -> None:
    """Keep it for the next process; a busy or read-only index only costs recomputing it."""
    created = datetime.fromtimestamp(time.time(), UTC).isoformat(timespec="seconds")
    try:
        with store.write(wait_ms=200, durable=False) as conn:
            conn.execute(
                "INSERT OR REPLACE INTO calibration (model, fingerprint, language, mean, std, "
                "maximum, probes, created_at, probe_vectors) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    generic.fingerprint,
                    generic.probes or "generic",
                    generic.mean,
                    generic.std,
                    generic.maximum,
                    len(generic.vectors),
                    created,
                    np.asarray(generic.vectors, dtype="<f4").tobytes(),
                ),
            )
    except (StoreError, sqlite3.Error):
        return
