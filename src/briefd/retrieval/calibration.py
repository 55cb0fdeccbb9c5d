"""Self-calibration of the relevance gate per index (R4), run when the index is built or changed.

The probe vectors (every probe, embedded once per model and probe set, reused by later runs)
live in the ``calibration`` table; the fitted knobs (:meth:`Calibration.knobs`: threshold,
probes left out, the probes' margins) as JSON in ``index_meta`` under ``gate-calibration:<model>``.
The version of the way the gate is fitted (bumped when it changes) is
:data:`briefd.retrieval.gate_fit.VERSION`, where a no-change ``briefd index`` reads it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from contextlib import closing
from datetime import UTC, datetime

import numpy as np

from briefd.embeddings import kept
from briefd.embeddings.base import Embedder
from briefd.retrieval import gate_evidence
from briefd.retrieval.bm25 import Lexicon
from briefd.retrieval.gate import MIN_PER_LANGUAGE, Calibration, Vectors, calibrate
from briefd.retrieval.gate_fit import META, VERSION, fitted_to
from briefd.retrieval.gate_languages import clarity
from briefd.retrieval.probes import probe_list
from briefd.retrieval.spelling import Speller
from briefd.store import documents as docs_table
from briefd.store.db import Store
from briefd.vectors import snapshot
from briefd.vectors import store as vector_store

__all__ = ["META", "VERSION", "fitted", "forget", "load", "refresh", "stored"]


def _probe_digest() -> str:
    texts = "\n".join(f"{topic}\t{text}" for topic, _, text in probe_list())
    return hashlib.sha256(texts.encode()).hexdigest()[:16]


def load(conn: sqlite3.Connection, model: str) -> Calibration | None:
    row = conn.execute(
        "SELECT fingerprint, probes, probe_vectors FROM calibration WHERE model = ?", (model,)
    ).fetchone()
    knobs = docs_table.meta(conn, META + model)
    if row is None or not row[2] or not row[1] or knobs is None:
        return None
    data = json.loads(knobs)
    if data.get("fingerprint") != row[0]:
        return None
    vectors = np.frombuffer(row[2], dtype="<f4").astype(np.float32).reshape(row[1], -1)
    active = np.asarray(data["active"], dtype=np.int64)
    languages = [language for _, language, _ in probe_list()]
    tags = tuple(languages[i] for i in active) if len(languages) == row[1] else ()
    return Calibration(
        model,
        row[0],
        vectors[active],
        np.asarray(data["offsets"], dtype=np.float32),
        float(data["threshold"]),
        int(row[1]),
        tuple(data["left_out"]),
        (float(data["margins"][0]), float(data["margins"][1]), float(data["margins"][2])),
        tuple((str(n), float(m), float(q)) for n, m, q in data.get("languages", [])),
        tags,
        *_section_levels(data.get("section")),
        clarity(vectors[active], tags, MIN_PER_LANGUAGE),  # the probes' own: not stored
    )


def _section_levels(stored: object) -> tuple[float | None, tuple[tuple[str, float], ...]]:
    """The knobs' ``section``: [floor, [[language, level], ...]] (absent: none)."""
    if not isinstance(stored, list) or len(stored) != 2 or stored[0] is None:
        return None, ()
    return float(stored[0]), tuple((str(n), float(v)) for n, v in stored[1])


def stored(conn: sqlite3.Connection) -> dict[str, dict[str, object]]:
    """Model → the gate knobs fitted to this index for it."""
    models = [row[0] for row in conn.execute("SELECT model FROM calibration ORDER BY model")]
    found = {model: load(conn, model) for model in models}
    return {model: cal.knobs() for model, cal in found.items() if cal is not None}


def fitted(conn: sqlite3.Connection, model: str, fingerprint: str, words: int = 0) -> bool:
    """Whether the stored calibration for ``model`` is the one :func:`refresh` would fit to
    the index state ``fingerprint`` (then there is nothing to fit)."""
    current = load(conn, model)
    return current is not None and current.fingerprint == fitted_to(fingerprint, words)


def refresh(
    store: Store, embedder: Embedder, fingerprint: str, words: int = 0
) -> Calibration | None:
    """Fit the gate to the index's current vectors (with ``words``, its windows' too) and
    words, and store the result."""
    fingerprint = fitted_to(fingerprint, words)
    model = embedder.model_id
    probes = probe_list()
    with store.read() as conn:
        current = load(conn, model)
        if current is not None and current.fingerprint == fingerprint:
            return current
        if words > 0:  # the windows' rows too: never in a snapshot
            rowids, _, quantized = vector_store.load_quantized(conn, model, words)
        else:  # a large index's rows are saved here for the search index that loads next
            rowids, _, quantized = snapshot.rows(conn, model, snapshot.index_file(conn))
        if len(quantized) == 0:
            return None
        vectors = _probe_vectors(conn, embedder, [text for _, _, text in probes])
        best, nearest_rows = quantized.nearest(vectors)
        at_best = np.stack([quantized.row(int(at)) for at in nearest_rows])
        lexicon, speller = Lexicon(), Speller()
        with closing(lexicon):
            evidence = [  # each probe searched as a query is: spelling corrections, best sections
                gate_evidence.for_text(
                    conn, text, lexicon, (rowids[int(nearest_rows[i])],), speller
                )
                for i, (_, _, text) in enumerate(probes)
            ]
    pairs = tuple((topic, language) for topic, language, _ in probes)
    lexical = tuple(e.strong for e in evidence)
    coverage = tuple(e.coverage() for e in evidence)
    result = calibrate(model, fingerprint, vectors, pairs, best, lexical, coverage, at_best)
    active = [i for i, (topic, _) in enumerate(pairs) if topic not in result.left_out]
    with store.write() as conn:
        conn.execute(
            "INSERT OR REPLACE INTO calibration (model, fingerprint, language, mean, std, maximum, "
            "probes, created_at, probe_vectors) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                model,
                fingerprint,
                _probe_digest(),
                result.margins[0],
                0.0,
                result.margins[2],
                len(vectors),
                datetime.fromtimestamp(time.time(), UTC).isoformat(timespec="seconds"),
                np.asarray(vectors, dtype="<f4").tobytes(),
            ),
        )
        knobs = {
            "fingerprint": fingerprint,
            "threshold": result.threshold,
            "margins": list(result.margins),
            "left_out": list(result.left_out),
            "active": active,
            "offsets": [round(float(v), 6) for v in result.probe_offsets],
            "languages": [list(level) for level in result.languages],
            "section": [result.section_floor, [list(level) for level in result.section_languages]],
        }
        docs_table.set_meta(conn, META + model, json.dumps(knobs))
    return result


def forget(conn: sqlite3.Connection, model: str) -> None:
    """Drop ``model``'s fits and their probes' vectors, the gate's and those kept under
    ``<model>|…`` (recall's generic one): another model answered under its name."""
    conn.execute(
        "DELETE FROM calibration WHERE model = ? OR substr(model, 1, ?) = ?",
        (model, len(model) + 1, f"{model}|"),
    )


def _probe_vectors(conn: sqlite3.Connection, embedder: Embedder, texts: list[str]) -> Vectors:
    """The probes' vectors: those stored by an earlier run for this model and probe set, or
    those the model keeps (another index's first run embedded them), or freshly embedded."""
    row = conn.execute(
        "SELECT probes, probe_vectors, language FROM calibration WHERE model = ?",
        (embedder.model_id,),
    ).fetchone()
    if row is not None and row[2] == _probe_digest() and row[0] == len(texts) and row[1]:
        return np.frombuffer(row[1], dtype="<f4").astype(np.float32).reshape(row[0], -1)
    return kept.probe_vectors(embedder, "gate", texts)
