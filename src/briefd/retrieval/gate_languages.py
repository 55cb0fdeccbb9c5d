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

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]
CLARITY_QUANTILE = 0.05  # of a language's probes' leads: 1 − the gate's LANGUAGE_QUANTILE


def leads(similarity: npt.NDArray[np.float32], tags: npt.NDArray[np.str_]) -> tuple[str, float]:
    """The language whose probes ``similarity`` (one value per probe, each of language
    ``tags``) is highest on average, and by how much it leads the next language (infinitely:
    none other)."""
    means = sorted(
        ((float(similarity[tags == name].mean()), str(name)) for name in np.unique(tags)),
        reverse=True,
    )
    if len(means) < 2:  # no other language to lead
        return (means[0][1], np.inf) if means else ("", 0.0)
    return means[0][1], means[0][0] - means[1][0]


def clarity(
    vectors: Vectors, languages: tuple[str, ...], minimum: int
) -> tuple[tuple[str, float], ...]:
    """Per language with ``minimum`` probes or more (of ``vectors``, each of ``languages``):
    the ``CLARITY_QUANTILE`` of its probes' leads over the other languages, each probe left
    out of its own language's mean. () when the probes and their languages do not line up."""
    if len(languages) != len(vectors) or len(set(languages)) < 2:
        return ()
    tags = np.asarray(languages)
    similarity = vectors @ vectors.T
    found: dict[str, list[float]] = {}
    for i, own in enumerate(languages):
        others = np.ones(len(tags), dtype=bool)
        others[i] = False
        means = {
            str(name): float(similarity[i, others & (tags == name)].mean())
            for name in np.unique(tags)
            if np.any(others & (tags == name))
        }
        rivals = [value for name, value in means.items() if name != own]
        if own in means and rivals:
            found.setdefault(own, []).append(means[own] - max(rivals))
    return tuple(
        (name, float(np.quantile(values, CLARITY_QUANTILE)))
        for name, values in sorted(found.items())
        if len(values) >= minimum
    )


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
    tags = np.asarray(languages)
    keep = np.isin(tags, names)
    if not np.any(keep):
        return None
    best, lead = leads((vectors @ query)[keep], tags[keep])
    needed = dict(clear).get(best)
    return None if needed is not None and lead < needed else best
