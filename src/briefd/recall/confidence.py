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
import json
import math
import sqlite3
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt

from briefd.embeddings import kept
from briefd.errors import EmbeddingError, StoreError
from briefd.model import SearchResult
from briefd.recall.generic import GENERIC_PROMPTS, fitted_to, mostly_in
from briefd.recall.ranking import Ranking
from briefd.retrieval.gate import MIN_PER_LANGUAGE, NEAREST
from briefd.retrieval.semantic import SemanticIndex
from briefd.store import documents as docs_table
from briefd.store.db import Store

Vectors = npt.NDArray[np.float32]
LEVELS = "generic-levels:"  # index_meta key prefix: the per-language levels, as JSON


@dataclass(frozen=True, slots=True)
class GenericCalibration:
    """The generic probes' vectors and their leave-one-out margins against one index."""

    fingerprint: str
    vectors: Vectors
    mean: float
    std: float
    maximum: float = 0.0
    probes: str = ""  # digest of the probe texts the vectors embed (reused while it matches)
    # per probe language: (language, mean, std) of its probes' margins; ``home``: the language
    # whose probes reach this index best (its own); ``languages``: each probe's language
    levels: tuple[tuple[str, float, float], ...] = ()
    home: str | None = None
    languages: tuple[str, ...] = ()

    def language_of(self, query: Vectors) -> str | None:
        """The probe language the prompt is written in (None without per-language levels): the
        one whose ``NEAREST`` probes it comes closest to, as a prompt's nearest probes are in
        its own words. Not the language whose probes are closest *on average*: a mean over all
        of a language's probes weighs what they are about as much as the language, and English
        chatter ("ok now do the same for the orders page") came closer on average to the Turkish probes,
        most of them chatter, than to the English ones, a third of them build and test
        failures and pasted tool output; it was measured against Turkish chatter's lower levels
        and injected a section."""
        if not self.levels or len(self.languages) != len(self.vectors):
            return None
        near = self._nearest_by_language(query)
        return max(near, key=near.__getitem__)

    def foreign_levels(self, query: Vectors) -> tuple[str, float, float] | None:
        """The levels a prompt written in another language than the index's own is also
        measured against: its language's, or, for a language with too few probes for levels of
        its own (German), those of the other foreign language it comes closest to. None for a
        prompt in the index's own language (or without per-language levels)."""
        if not self.levels or len(self.languages) != len(self.vectors):
            return None
        near = self._nearest_by_language(query)
        if max(near, key=near.__getitem__) == self.home:
            return None
        foreign = [level for level in self.levels if level[0] != self.home]
        return max(foreign, key=lambda level: near[level[0]], default=None)

    def _nearest_by_language(self, query: Vectors) -> dict[str, float]:
        """Per probe language: the prompt's mean cosine against its ``NEAREST`` probes."""
        similarity, tags = self.vectors @ query, np.asarray(self.languages)
        return {
            name: float(nearest(similarity[tags == name])) for name in sorted(set(self.languages))
        }


def recall_ranking(result: SearchResult, specificity: tuple[float | None, bool]) -> Ranking:
    """A hybrid search's hits as a recall ranking: direct hits, then the related ones.
    ``specificity``: the prompt's z and whether only its own language's levels lift it."""
    z, lifted = specificity
    direct = [(h.chunk_id, h.score) for h in result.hits if h.related_to is None]
    related = [(h.chunk_id, h.related_to) for h in result.hits if h.related_to is not None]
    return Ranking(direct, result.gate, specificity=z, related=related, lifted=lifted)


def nearest(cosines: Vectors, others: int | None = None) -> Vectors:
    """Per row, the mean of its ``NEAREST`` highest cosines (of ``others`` when fewer)."""
    k = max(1, min(NEAREST, cosines.shape[-1] if others is None else others))
    means: Vectors = np.sort(cosines, axis=-1)[..., -k:].mean(axis=-1, dtype=np.float32)
    return means


def leave_one_out(probes: Vectors, best: Vectors) -> list[float]:
    """Each probe's margin: its best cosine against the index (``best``) minus its mean cosine
    against its nearest *other* probes."""
    among = probes @ probes.T
    np.fill_diagonal(among, -np.inf)
    return [float(m) for m in best - nearest(among, len(probes) - 1)]


def specificity(best: float, query: Vectors, generic: GenericCalibration) -> float:
    """The prompt's margin in units of the generic probes' margins (see :func:`measure`)."""
    return measure(best, query, generic)[0]


def measure(
    best: float,
    query: Vectors,
    generic: GenericCalibration,
    prompt: str | None = None,
    strong: float = math.inf,
) -> tuple[float, bool]:
    """The prompt's z, and whether only its own language's levels lift it that high. A prompt
    in another language than the index's is also measured against the generic prompts of its
    own language, which pay the same cross-lingual gap: a Turkish question about English notes
    is not generic for reaching them less well than English chatter does. The higher z
    counts; the recall engine gives a lifted prompt one short section at most (the weak tier),
    its evidence being the model's cross-lingual reach alone. A ``prompt`` most of whose words
    are the index's own language's (:func:`briefd.recall.generic.mostly_in`) is written in it:
    no other language's levels apply; nor do they to a prompt whose pooled z already reaches
    ``strong`` (``recall.strong_z``): it is specific against every language's chatter, and
    was capped at one short section for scoring higher still against its own (in a knowledge
    base of English and Turkish notes whose Turkish probes came nearest, most English
    questions)."""
    margin = best - float(nearest(generic.vectors @ query))
    z = (margin - generic.mean) / max(generic.std, 1e-6)
    level = generic.foreign_levels(query)
    home = generic.home
    if level is None or (prompt is not None and home is not None and mostly_in(prompt, home)):
        return z, False
    _, mean, std = level
    own = (margin - mean) / max(std, 1e-6)
    return (own, True) if own > z and z < strong else (z, False)


def calibrate(
    fingerprint: str, probes: Vectors, best: Vectors, languages: tuple[str, ...] = ()
) -> GenericCalibration:
    """``best``: each probe's best cosine against the index; ``languages``: each probe's
    language (none: pooled levels only)."""
    margins = leave_one_out(probes, best)
    mean, std = statistics.fmean(margins), statistics.pstdev(margins)
    levels, home = _by_language(margins, best, languages)
    return GenericCalibration(
        fingerprint, probes, mean, std, max(margins), "", levels, home, languages
    )


def _by_language(
    margins: list[float], best: Vectors, languages: tuple[str, ...]
) -> tuple[tuple[tuple[str, float, float], ...], str | None]:
    """Per language with ``MIN_PER_LANGUAGE`` probes: the mean and spread of its margins; and
    the language whose probes come closest to the index (the index's own), among every probe
    language, those with too few probes for levels of their own too: a German team's notes,
    their own language's probes too few for levels, were read as English (its probes came
    nearer than Turkish ones), so every German prompt was measured against other languages'
    chatter as a foreign one, lifted, and its answer capped at one short section."""
    if len(languages) != len(margins):
        return (), None
    names, values = np.asarray(languages), np.asarray(margins)
    every = sorted(set(languages))
    found = [n for n in every if int((names == n).sum()) >= MIN_PER_LANGUAGE]
    levels = tuple(
        (n, float(values[names == n].mean()), float(values[names == n].std())) for n in found
    )
    home = max(every, key=lambda n: float(best[names == n].mean()), default=None)
    return levels, home


class Specificity:
    """The specificity of prompts against one index, its calibration computed once (and
    stored) per index state and model."""

    def __init__(self) -> None:
        self._generic: GenericCalibration | None = None

    def z(
        self,
        store: Store,
        semantic: SemanticIndex | None,
        prompt: str,
        scopes: Sequence[str],
        strong: float = math.inf,
    ) -> tuple[float | None, bool]:
        """The prompt's specificity z (None without vectors or a gate calibration), and whether
        only its own language's levels lift it (:func:`measure`, ``strong`` its own)."""
        generic = self.calibration(store, semantic)
        if semantic is None or generic is None:
            return None, False
        with store.read() as conn:
            index = semantic.index(conn)
        query = semantic.query_vector(prompt)
        found = index.top(query, scopes, 1)
        return measure(found[0][1], query, generic, prompt, strong) if found else (None, False)

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
            fingerprint = fitted_to(gate.fingerprint)
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
            probes = _embedded(semantic, texts)
        fitted = calibrate(fingerprint, probes, index.vectors.nearest(probes)[0], probe_languages())
        self._generic = replace(fitted, probes=digest)
        _save(store, key, self._generic)
        return self._generic


def _embedded(semantic: SemanticIndex, texts: list[str]) -> Vectors:
    """The generic probes' vectors; a failure says it was theirs (a prompt's answer that
    needed them, the hook's, goes on by keywords and says why)."""
    try:
        return kept.probe_vectors(semantic.embedder, "generic", texts)
    except EmbeddingError as exc:
        raise EmbeddingError(
            f"{exc} (embedding recall's generic probes, whose calibration is not stored yet)"
        ) from None


def probe_languages() -> tuple[str, ...]:
    """The language of each generic probe, in the order their vectors are stored."""
    return tuple(language for language, group in GENERIC_PROMPTS.items() for _ in group)


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
    found = GenericCalibration(row[0], vectors, float(row[2]), float(row[3]), float(row[4]), probes)
    extra = docs_table.meta(conn, LEVELS + key)
    data = json.loads(extra) if extra else {}
    languages = probe_languages()
    if data.get("fingerprint") != row[0] or len(languages) != len(vectors):
        return found
    levels = tuple((str(n), float(m), float(s)) for n, m, s in data.get("levels", []))
    return replace(found, levels=levels, home=data.get("home"), languages=languages)


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
            levels = {
                "fingerprint": generic.fingerprint,
                "home": generic.home,
                "levels": [list(level) for level in generic.levels],
            }
            docs_table.set_meta(conn, LEVELS + key, json.dumps(levels))
    except (StoreError, sqlite3.Error):
        return
