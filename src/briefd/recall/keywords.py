"""How much a keyword answer injects (I8): lexical confidence tiers, calibrated per index.

A recall answered by keywords alone — no model configured (``embeddings: none``), an index
without vectors, the daemon's answer when the model misses its deadline, the hook's first
prompt while the daemon loads the model — had no tiers: whatever the lexical evidence gate
(:mod:`briefd.recall.evidence`) kept went in at full size, and the gate keeps something for
"the tests are failing on main" in most knowledge bases about software (measured: 40 of the
106 generic prompts of ``eval/recall-noise.yaml`` injected ~1,000 tokens each against the
English golden knowledge).

The hybrid tiers (:mod:`briefd.recall.confidence`) measure a prompt against what the generic
probes (:data:`briefd.recall.generic.GENERIC_PROMPTS`) reach in *this* index; so do these,
by keywords. Each probe goes through the same lexical gate as a prompt; the BM25 scores of
the best sections the gate keeps for those probes that reach the index are what everyday
chatter scores here. A keyword answer's best BM25 score in those units is its z:

    z < weak_z (1.645)              nothing is injected
    weak_z ≤ z < strong_z (3.09)    one short section (recall.weak_tokens)
    z ≥ strong_z                    the sections, within the budget

the same one-sided 5% and 0.1% levels as the hybrid tiers. Only the probes the gate keeps
count: the others inject nothing anyway, and a prompt the gate keeps competes with them. With
fewer than :data:`MIN_REACHING` probes reaching the index (a handful of notes), there is no
spread to measure and the chance tiers (:func:`briefd.recall.ranking.by_chance`) decide.

Nothing is fitted to an eval set. The levels follow the index: measured after every index run
(:func:`refresh`) and by the recall daemon as it loads an index, kept in ``index_meta``; an
answer never measures them (~0.6 s for a few hundred sections), it reads them. The module stays light (no numpy, no model): the hook's own process uses it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import statistics
from dataclasses import dataclass

from briefd.errors import StoreError
from briefd.recall.evidence import lexical_recall, rules_of
from briefd.recall.generic import GENERIC_PROMPTS
from briefd.recall.generic import VERSION as PROBES_VERSION
from briefd.settings import Settings
from briefd.store.db import Store

VERSION = "1"  # bump when the statistic or the probes' pass through the gate change
KEY = "recall-keyword-levels"  # index_meta key: the levels, as JSON
MIN_REACHING = 8  # probes the gate must keep for a spread worth measuring


@dataclass(frozen=True, slots=True)
class KeywordLevels:
    """What the generic probes that reach this index score: the mean and spread of their best
    kept section's BM25 score, over ``reaching`` of ``probes`` probes."""

    fingerprint: str
    mean: float
    std: float
    reaching: int
    probes: int

    def z(self, score: float) -> float | None:
        """A keyword answer's best BM25 score in units of the probes' (None: too few reach)."""
        if self.reaching < MIN_REACHING:
            return None
        return (score - self.mean) / max(self.std, 1e-6)


def fingerprint(conn: sqlite3.Connection, settings: Settings) -> str:
    """What the levels depend on, cheap to read on every keyword answer: the chunks (how many,
    the newest row), the full-text index's totals (its ``averages`` record: rows and tokens per
    column, which move with any change of the text), the rules and weights, the probes. Not
    the content version: writing the levels moves it."""
    count, newest = conn.execute("SELECT count(*), max(rowid) FROM chunks").fetchone()
    row = conn.execute("SELECT block FROM chunks_fts_data WHERE id = 1").fetchone()
    totals = hashlib.sha256(bytes(row[0]) if row and row[0] else b"").hexdigest()[:16]
    weights, rules = rules_of(settings)
    return f"k{VERSION}/g{PROBES_VERSION}:{count}:{newest}:{totals}:{weights}:{rules}"


def measure(conn: sqlite3.Connection, settings: Settings, made: str) -> KeywordLevels:
    """Send every generic probe through the lexical gate over the whole index."""
    weights, rules = rules_of(settings)
    scopes = tuple(r[0] for r in conn.execute("SELECT DISTINCT scope FROM documents"))
    scores = []
    probes = [p for group in GENERIC_PROMPTS.values() for p in group]
    for probe in probes:
        found = lexical_recall(conn, probe, scopes, True, weights, rules)
        if found.rows:
            scores.append(-found.rows[0][1])
    mean = statistics.fmean(scores) if scores else 0.0
    std = statistics.pstdev(scores) if scores else 0.0
    return KeywordLevels(made, mean, std, len(scores), len(probes))


_KEPT: dict[str, KeywordLevels] = {}  # index file -> the levels last measured in this process


def levels(store: Store, settings: Settings, measure_now: bool = True) -> KeywordLevels | None:
    """This index's levels: kept, stored, or measured now (and stored when the index can be
    written; a read-only or busy one only costs measuring them again in another process).
    Measuring takes ~0.6 s for a few hundred sections: ``measure_now`` False (an answer, inside
    the hook's second) gives None instead when none are stored."""
    kept = _KEPT.get(str(store.path))
    with store.read() as conn:
        made = fingerprint(conn, settings)
        if kept is not None and kept.fingerprint == made:
            return kept
        stored = _load(conn, made)
        if stored is None and not measure_now:
            return None
        found = stored or measure(conn, settings, made)
    if stored is None:
        _save(store, found)
    _KEPT[str(store.path)] = found
    return found


def refresh(store: Store, settings: Settings) -> None:
    """After an index run: the levels of its new state, so no prompt waits for them."""
    try:
        levels(store, settings)
    except (StoreError, sqlite3.Error):
        return


def _load(conn: sqlite3.Connection, made: str) -> KeywordLevels | None:
    row = conn.execute("SELECT value FROM index_meta WHERE key = ?", (KEY,)).fetchone()
    text = None if row is None else str(row[0])
    try:
        data = json.loads(text) if text else {}
        if data.get("fingerprint") != made:
            return None
        return KeywordLevels(
            made,
            float(data["mean"]),
            float(data["std"]),
            int(data["reaching"]),
            int(data["probes"]),
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _save(store: Store, found: KeywordLevels) -> None:
    data = {
        "fingerprint": found.fingerprint,
        "mean": found.mean,
        "std": found.std,
        "reaching": found.reaching,
        "probes": found.probes,
    }
    try:
        with store.write(wait_ms=200, durable=False) as conn:
            conn.execute(  # as briefd.store.documents.set_meta, whose module loads briefd.model
                "INSERT INTO index_meta (key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (KEY, json.dumps(data)),
            )
    except (StoreError, sqlite3.Error):
        return
