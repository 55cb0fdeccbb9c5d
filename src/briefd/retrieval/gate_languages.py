"""Which language a query is written in, for the relevance gate's per-language levels (R4).

A question in another language than the index's shares few of its words, and is weighed
against off-topic probes of its own language (:meth:`briefd.retrieval.gate.Calibration.levels`),
whose level is lower by the cross-lingual gap. The model keeps languages apart: a sentence in
Turkish comes closer on average to the Turkish probes than to the English or German ones.
Text in no language at all — keyboard mash, a part number, ``qwzrtplkjh`` fifteen times —
comes about as close to each language's probes, and whichever wins by a hair would lend it that
language's lower level: a string of nonsense came back with ten sections.

So a query is read as written in a language only when it leads the other languages by as much
as that language's own probes do: each probe's *lead* is its mean cosine to the other probes of
its language minus its highest mean to another language's probes, and the language's
*clarity* is the ``1 − LANGUAGE_QUANTILE`` (5%) quantile of its probes' leads — 95% of real
sentences in it lead by more. A query leading by less is in no language the probes know, and
is held to the pooled levels, as a query with its words in the index is. Measured on the
example index (model e5-small): Turkish probes lead by 0.032 at their 5%, real Turkish questions
by 0.040–0.052, nonsense by 0.001–0.018. Fitted from the probes alone: nothing is tuned to an
eval set.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]
CLARITY_QUANTILE = 0.05  # of a language's probes' leads: 1 − the gate's LANGUAGE_QUANTILE


def leads(similarity: npt.NDArray[np.float32], tags: Sequence[str]) -> tuple[str, float]:
    """The language whose probes ``similarity`` (one value per probe, each of language
    ``tags``) is highest on average, and by how much it leads the next language (infinitely:
    none other). Per query, so in bincounts: ~0.05 ms for the 159 probes."""
    names = sorted(set(tags))
    code = {name: i for i, name in enumerate(names)}
    index = np.fromiter((code[tag] for tag in tags), dtype=np.intp, count=len(tags))
    means = np.bincount(index, weights=similarity, minlength=len(names)) / np.bincount(
        index, minlength=len(names)
    )
    if len(names) < 2:  # no other language to lead
        return (names[0], np.inf) if names else ("", 0.0)
    second, first = np.argsort(means)[-2:]
    return names[first], float(means[first] - means[second])


def clarity(
    vectors: Vectors, languages: tuple[str, ...], minimum: int
) -> tuple[tuple[str, float], ...]:
    """Per language with ``minimum`` probes or more (of ``vectors``, each of ``languages``):
    the ``CLARITY_QUANTILE`` of its probes' leads over the other languages, each probe left
    out of its own language's mean. () when the probes and their languages do not line up."""
    if len(languages) != len(vectors) or len(set(languages)) < 2:
        return ()
    names, member = _members(np.asarray(languages))
    similarity = vectors @ vectors.T
    np.fill_diagonal(similarity, 0.0)  # each probe left out of its own language's mean
    counts = member.sum(axis=0)[None, :] - member  # per probe, per language: the others
    means = (similarity @ member) / np.maximum(counts, 1)
    own = member.astype(bool)
    rival = np.where(own | (counts == 0), -np.inf, means).max(axis=1)
    lead = means[own] - rival  # one own language per probe, in probe order
    return tuple(
        (str(name), float(np.quantile(lead[own[:, j]], CLARITY_QUANTILE)))
        for j, name in enumerate(names)
        if int(own[:, j].sum()) >= minimum and int(counts[own[:, j], j].min()) > 0
    )


def _members(tags: npt.NDArray[np.str_]) -> tuple[npt.NDArray[np.str_], npt.NDArray[np.float32]]:
    """The distinct languages of ``tags`` (sorted) and each probe's membership, one column
    per language (1.0 where the probe is in it)."""
    names, index = np.unique(tags, return_inverse=True)
    member = np.zeros((len(tags), len(names)), dtype=np.float32)
    member[np.arange(len(tags)), index] = 1.0
    return names, member


def written_in(
    vectors: Vectors,
    languages: tuple[str, ...],
    names: tuple[str, ...],
    clear: tuple[tuple[str, float], ...],
    query: Vectors,
) -> str | None:
    """Of ``names``, the language the query is written in: the one whose probes it comes
    closest to on average, when it leads the next language by that language's clarity
    (``clear``; a language without one is taken on its lead alone). None without names, when
    the probes and their languages do not line up, or when the query leads by too little to
    be in any language (nonsense, a code)."""
    if not names or len(languages) != len(vectors):
        return None
    wanted = set(names)
    keep = [i for i, tag in enumerate(languages) if tag in wanted]
    if not keep:
        return None
    similarity = vectors @ query
    best, lead = leads(similarity[keep], [languages[i] for i in keep])
    needed = dict(clear).get(best)
    return None if needed is not None and lead < needed else best
