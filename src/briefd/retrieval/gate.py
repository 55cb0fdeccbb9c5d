"""The relevance gate (R4): an off-topic query returns nothing instead of noise, and a real
question is never emptied while the index holds strong evidence for it.

Two kinds of evidence are weighed, and either one keeps the answer:

* **lexical** — one section contains every query word (or its spelling correction), and those
  words are specific together: were they independent, fewer than ``MAX_CHANCE`` sections of this
  index would hold them all by chance (``N · Π df/N``; the IDF mass of the words exceeds
  ``log N``). This is never overruled by the semantic side: a Turkish question typed without
  diacritics whose every word is in one section keeps its answer however the model scores it.
* **supported semantic** — with a score above the probes' median (below the threshold), the
  best semantic or the best lexical section holds every query word specific together, or two
  or more words ten times as specific (``PARTIAL_CHANCE``: the other words are unexplained),
  every set of as many query words as specific counted (:meth:`LexicalEvidence.as_specific`):
  "Fuat Sezgin kac yilinda dogmustur" has both names in one paragraph even where the rest of
  its words are inflected differently. A word the index lacks counts here through its spelling
  correction only when the correction keeps its stem (:func:`guessed`): "soccer" corrected to
  "docker" is a guess that helps the search, not evidence that the index covers soccer.
* **section side** — a score that reaches the threshold without support must also come from a
  best section nearer the query than to the off-topic probe nearest it (:func:`section_margin`),
  by the probes' own median such margin (``SECTION_QUANTILE``).
* **semantic** — the query's *score* must reach the index's own threshold: its best cosine in
  the index minus how close it comes to off-topic small talk (the mean of its ``NEAREST``
  closest probes, ``briefd.retrieval.probes``, all languages), plus ``COVERAGE_WEIGHT`` times
  its *coverage*: the share of the query words' IDF mass that the best semantic or lexical
  section holds (a word the index lacks weighs most). The model's margin alone mixes real
  questions with near-miss ones (a software question against a software team's notes); the
  words of a real question are in its answer, those of a near miss mostly are not. A probe in another language than the
  index's counts less by twice the gap between its language's and the index language's mean
  probe cosine against the index: a Turkish question about an English knowledge base pays the
  cross-lingual gap against the index, and would gain it again against Turkish small talk.

The threshold is fitted to each index when it is built or changed (:func:`calibrate`): every
probe is scored as if it were a query, against the index and against the probes of the *other*
topics (leave-topic-out, so a probe is as new to the probe set as a user's off-topic question),
and the threshold is the ``QUANTILE`` of those scores (each probe's coverage counted as a query's
is): off-topic questions on this index score below it. A question in another language than the
index's (one the model reads as clearly written in it, :mod:`briefd.retrieval.gate_languages`:
nonsense and codes are in none) is held to its own language's level: its probes' median plus ``LANGUAGE_QUANTILE``'s
normal deviate times the spread of every language's probes within their own language
(:func:`by_language`); in the index's own language only where that is lower than the pooled
threshold. Probes with strong lexical evidence in the index are left out (that topic is not
off-topic here), and so are those scoring far past the rest (:func:`covered_topics`).
``search.gate_offset`` (``briefd tune``) moves the threshold.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

import numpy as np
import numpy.typing as npt

from briefd.retrieval.gate_languages import clarity, written_in
from briefd.retrieval.probes import PROBES as PROBES  # re-exported: the probes by language
from briefd.retrieval.spelling import is_subsequence
from briefd.store.surfaces import umlaut_readings

NEAREST = 3  # probes averaged: one probe phrased like the query does not decide alone
QUANTILE = 0.93  # of the probes' leave-topic-out scores: a real answer is worth more than a probe
# of one language's off-topic questions, rejected by that language's level (:func:`by_language`):
# the 95% they should be rejected at (issue 13), not QUANTILE's 93%
LANGUAGE_QUANTILE = 0.95
# of the probes' section margins (:func:`section_margin`): a question kept on semantic evidence
# must be nearer its best section, against the off-topic probe nearest that section, than a
# typical (the median) off-topic probe is to its own
SECTION_QUANTILE = 0.5
COVERED_FENCE = 3.0  # interquartile ranges past the third quartile: a probe topic covered here
COVERAGE_WEIGHT = 0.05  # a best section holding all of the query's IDF mass: +0.05 of margin
MAX_CHANCE = 1.0  # sections that would hold every query word by chance
PARTIAL_CHANCE = 0.1  # the same for some of the words: the rest is unexplained, so 10× rarer
SUBSET_WALK = 20_000  # sets of query words looked at, at most, for those as specific
GAP_WEIGHT = 2.0  # the language gap counts on both sides: query vs index, query vs probe
MIN_PER_LANGUAGE = 20  # active probes a language needs for levels of its own
STEM = 4  # a correction keeps all but the last 3 letters of the typed word, at least 4: its stem

Vectors = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class Calibration:
    """The gate's knobs for one index and model, fitted from the index itself."""

    model: str
    fingerprint: str
    probe_vectors: Vectors  # the probes still off-topic for this index
    probe_offsets: npt.NDArray[np.float32]  # subtracted from each probe's cosine (language gap)
    threshold: float
    probes: int  # probes in the set
    left_out: tuple[str, ...]  # topics this index is about: strong lexical evidence, or covered
    margins: tuple[float, float, float]  # probes' leave-topic-out scores: median, quantile, max
    # per probe language: (language, its active probes' median score, its level,
    # :func:`by_language`)
    languages: tuple[tuple[str, float, float], ...] = ()
    probe_languages: tuple[str, ...] = ()  # the language of each active probe
    # the probes' SECTION_QUANTILE section margin (None: a fit without it), and per probe
    # language with levels of its own, its probes' (used where lower)
    section_floor: float | None = None
    section_languages: tuple[tuple[str, float], ...] = ()
    # per probe language: how far its own probes lead the other languages (at their 5%):
    # :func:`briefd.retrieval.gate_languages.clarity`, from the active probes
    clarity: tuple[tuple[str, float], ...] = ()

    def language_of(self, query: Vectors) -> str | None:
        """The probe language the query is written in (None without per-language levels, or
        when it reads as written in none: :func:`briefd.retrieval.gate_languages.written_in`)."""
        names = tuple(name for name, _, _ in self.languages)
        return written_in(self.probe_vectors, self.probe_languages, names, self.clarity, query)

    def levels(self, language: str | None) -> tuple[float, float]:
        """(floor, threshold) for a query in ``language``: the pooled levels, or its
        language's levels (:func:`by_language`) — a Turkish question about English notes is
        weighed against Turkish off-topic questions, which pay the same cross-lingual gap and
        hold none of the notes' words either. The floor is never above the pooled median.
        The index's own language (:meth:`home`) keeps the pooled threshold where its own is
        higher: its probes score highest, and a real question in it has its words to help.
        Another language's level holds either way: where its probes score above the index's
        own, so do its off-topic questions."""
        for name, median, level in self.languages:
            if name == language:
                home = self.home()
                own = level if home and name not in home else min(level, self.threshold)
                return min(median, self.margins[0]), own
        return self.margins[0], self.threshold

    def home(self) -> frozenset[str]:
        """The index's own language(s): those of the probes without a language gap
        (:func:`language_gaps`); empty when the probes' languages are not known."""
        offsets = self.probe_offsets
        if not len(offsets) or len(self.probe_languages) != len(offsets):
            return frozenset()
        values = offsets.tolist()
        low = min(values)
        return frozenset(
            name
            for name, offset in zip(self.probe_languages, values, strict=True)
            if offset <= low + 1e-6
        )

    def section_level(self, language: str | None) -> float | None:
        """The section margin a question in ``language`` needs (:func:`section_margin`): the
        probes' ``SECTION_QUANTILE``, or its own language's probes' where lower — a Turkish
        question about English notes is as far from them as Turkish off-topic probes are, by
        the same cross-lingual gap. None: a fit without section margins."""
        if self.section_floor is None:
            return None
        for name, level in self.section_languages:
            if name == language:
                return min(level, self.section_floor)
        return self.section_floor

    def knobs(self) -> dict[str, object]:
        """What ``briefd version --json`` and ``briefd eval --explain`` show."""
        return {
            "model": self.model,
            "threshold": round(self.threshold, 4),
            "quantile": QUANTILE,
            "language_quantile": LANGUAGE_QUANTILE,
            "coverage_weight": COVERAGE_WEIGHT,
            "nearest_probes": NEAREST,
            "probes": self.probes,
            "active_probes": len(self.probe_vectors),
            "left_out_topics": list(self.left_out),
            "probe_scores": {
                "median": round(self.margins[0], 4),
                "quantile": round(self.margins[1], 4),
                "max": round(self.margins[2], 4),
            },
            "by_language": {
                name: {"median": round(median, 4), "threshold": round(level, 4)}
                for name, median, level in self.languages
            },
            "index_languages": sorted(self.home()),
            "section_quantile": SECTION_QUANTILE,
            "section_floor": None if self.section_floor is None else round(self.section_floor, 4),
            "section_by_language": {
                name: round(level, 4) for name, level in self.section_languages
            },
            "max_chance": MAX_CHANCE,
            "section_windows": windows_of(self.fingerprint),
        }


def windows_of(fingerprint: str) -> int:
    """The section window size a calibration was fitted with (its fingerprint ends in
    ``/w<words>``, :func:`briefd.retrieval.calibration.refresh`); 0: none."""
    _, mark, words = fingerprint.rpartition("/w")
    return int(words) if mark and words.isdigit() else 0


def nearest(similarities: npt.NDArray[np.float32]) -> float:
    """The mean of the ``NEAREST`` highest similarities (all of them when fewer)."""
    if similarities.size == 0:
        return 0.0
    count = min(NEAREST, similarities.size)
    return float(np.mean(np.partition(similarities, similarities.size - count)[-count:]))


def language_gaps(
    languages: tuple[str, ...], best: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    """Per probe: how much lower its language's probes score against the index than the
    probes of the language that scores highest (the index's own), times ``GAP_WEIGHT``."""
    names = sorted(set(languages))
    affinity = {
        n: float(np.mean([b for b, g in zip(best, languages, strict=True) if g == n]))
        for n in names
    }
    home = max(affinity.values())
    return np.asarray([GAP_WEIGHT * (home - affinity[g]) for g in languages], dtype=np.float32)


def calibrate(
    model: str,
    fingerprint: str,
    vectors: Vectors,
    probes: tuple[tuple[str, str], ...],
    best: npt.NDArray[np.float32],
    lexical: tuple[bool, ...],
    coverage: tuple[float, ...] | None = None,
    at_best: Vectors | None = None,
) -> Calibration:
    """``vectors``/``probes`` (topic, language): every probe; ``best``: each probe's best
    cosine in the index; ``lexical``: whether the index holds strong lexical evidence for it;
    ``coverage``: the share of its words' IDF mass its best section holds (None: 0);
    ``at_best``: the vector of each probe's best section (None: no section margins)."""
    topics = tuple(topic for topic, _ in probes)
    gaps = language_gaps(tuple(language for _, language in probes), best)
    shares = np.asarray(coverage if coverage is not None else [0.0] * len(topics))
    left_out = {t for t, strong in zip(topics, lexical, strict=True) if strong}
    keep = np.asarray([t not in left_out for t in topics], dtype=bool)
    margins = _probe_margins(vectors, topics, keep, best, gaps, shares)
    left_out |= covered_topics(margins, np.asarray(topics)[keep])
    keep = np.asarray([t not in left_out for t in topics], dtype=bool)
    margins = _probe_margins(vectors, topics, keep, best, gaps, shares)
    active, kept_topics, offsets = vectors[keep], np.asarray(topics)[keep], gaps[keep]
    summary = (
        float(np.median(margins)),
        float(np.quantile(margins, QUANTILE)),
        float(np.max(margins)),
    )
    kept_languages = tuple(np.asarray([language for _, language in probes])[keep].tolist())
    sections = None
    if at_best is not None and len(active):
        near = at_best[keep] @ active.T - offsets[None, :]  # [i, j]: probe j at i's section
        sections = np.asarray(
            [
                best[keep][i] - _nearest_probe(near[i, kept_topics != kept_topics[i]])
                for i in range(len(active))
            ]
        )
    return Calibration(
        model,
        fingerprint,
        active,
        offsets,
        summary[1],
        len(topics),
        tuple(sorted(left_out)),
        summary,
        by_language(margins, kept_languages),
        kept_languages,
        *_section_levels(sections, kept_languages),
        clarity(active, kept_languages, MIN_PER_LANGUAGE),
    )


def _probe_margins(
    vectors: Vectors,
    topics: tuple[str, ...],
    keep: npt.NDArray[np.bool_],
    best: npt.NDArray[np.float32],
    gaps: npt.NDArray[np.float32],
    shares: npt.NDArray[np.float64],
) -> npt.NDArray[np.float64]:
    """Each kept probe's leave-topic-out score: its best cosine in the index, less its
    ``NEAREST`` kept probes of other topics (their language gaps counted), plus its coverage."""
    active, kept_topics, offsets = vectors[keep], np.asarray(topics)[keep], gaps[keep]
    similarity = active @ active.T - offsets[None, :]
    return np.asarray(
        [
            best[keep][i]
            - nearest(similarity[i, kept_topics != kept_topics[i]])
            + COVERAGE_WEIGHT * shares[keep][i]
            for i in range(len(active))
        ]
        or [0.0]
    )


def covered_topics(margins: npt.NDArray[np.float64], topics: npt.NDArray[np.str_]) -> set[str]:
    """The probe topics this index is about: a probe scoring past the far-out fence of all
    the probes' scores (Tukey's: ``COVERED_FENCE`` interquartile ranges above the third
    quartile). Left out like a topic with strong lexical evidence, whose probe words one
    section holds: a natural question seldom has every word in one section. The Docker
    reference docs scored their Docker probe ("docker container exits immediately after
    start") +0.138, past the fence (the next probe +0.090): it was the nearest probe of the
    Docker questions the gate emptied, 6 of 40."""
    if len(margins) < 4 or len(margins) != len(topics):
        return set()
    low, high = np.quantile(margins, [0.25, 0.75])
    fence = high + COVERED_FENCE * (high - low)
    return {str(t) for t, m in zip(topics, margins, strict=True) if m > fence}


def _section_levels(
    sections: npt.NDArray[np.float64] | None, languages: tuple[str, ...]
) -> tuple[float | None, tuple[tuple[str, float], ...]]:
    """The probes' ``SECTION_QUANTILE`` section margin, and per language with
    ``MIN_PER_LANGUAGE`` active probes its own (None, (): no section margins)."""
    if sections is None or not len(sections):
        return None, ()
    names = np.asarray(languages)
    levels = tuple(
        (name, float(np.quantile(sections[names == name], SECTION_QUANTILE)))
        for name in sorted(set(languages))
        if len(names) == len(sections) and int(np.sum(names == name)) >= MIN_PER_LANGUAGE
    )
    return float(np.quantile(sections, SECTION_QUANTILE)), levels


def _nearest_probe(similarities: npt.NDArray[np.float32]) -> float:
    return float(similarities.max()) if similarities.size else 0.0


def section_margin(calibration: Calibration, best: float, section: Vectors) -> float:
    """How much nearer the query (its cosine ``best``) is to its best section (the vector
    ``section``) than the off-topic probe nearest that section (its language gap counted,
    as in :func:`probe_score`). A real question's best section answers it; an off-topic
    question's best section is the one nearest some everyday talk, and probes of that talk
    come as near it: the section side of the margin :func:`probe_score` takes from the query's
    side."""
    return best - _nearest_probe(calibration.probe_vectors @ section - calibration.probe_offsets)


def by_language(
    margins: npt.NDArray[np.float64], languages: tuple[str, ...]
) -> tuple[tuple[str, float, float], ...]:
    """Per language with ``MIN_PER_LANGUAGE`` active probes or more: its probes' median, and
    its level: that median plus ``LANGUAGE_QUANTILE``'s normal deviate (1.645) times the
    *spread* of the probes within their own language (the root mean square of each language's
    standard deviation). The language sets the centre: the cross-lingual gap moves
    all its scores alike. The spread is measured on every language's probes, three times as
    many: how far off-topic questions scatter about their language's centre is the model's and
    everyday talk's, not the language's, and one language's probes alone (translations of the
    same topics, phrased alike) scatter less than a user's questions. Their own 95th
    percentile, the second or third highest of about fifty, let a Turkish question on an
    English TV manual through at +0.007 ("günaydın, kahveni içtin mi", the level +0.005);
    with the spread of all probes it is +0.013."""
    names = np.asarray(languages)
    if len(margins) != len(names):
        return ()
    found = [n for n in sorted(set(languages)) if int(np.sum(names == n)) >= MIN_PER_LANGUAGE]
    if not found:
        return ()
    spread = math.sqrt(float(np.mean([np.var(margins[names == n]) for n in found])))
    deviate = NormalDist().inv_cdf(LANGUAGE_QUANTILE)
    medians = {n: float(np.median(margins[names == n])) for n in found}
    return tuple((n, medians[n], medians[n] + deviate * spread) for n in found)


def probe_score(calibration: Calibration, query: Vectors) -> float:
    """How close the query comes to off-topic small talk."""
    return nearest(calibration.probe_vectors @ query - calibration.probe_offsets)


@dataclass(frozen=True, slots=True)
class LexicalEvidence:
    """The query's words (one per group: a word and its spelling correction), how many
    sections hold each, the index size, and whether one section holds them all."""

    words: tuple[str, ...]
    frequencies: tuple[int, ...]
    sections: int
    all_words: bool
    # per best section (semantic, then lexical): which words it holds
    held: tuple[tuple[bool, ...], ...] = ()
    # per word: known only through a spelling correction that changes its stem (a guess,
    # :func:`guessed`): no support for the question (:meth:`supporting`)
    guesses: tuple[bool, ...] = ()

    @property
    def chance(self) -> float:
        """Sections that would hold every word by chance, were the words independent."""
        return self._chance(self.frequencies)

    def _chance(self, frequencies: tuple[int, ...]) -> float:
        expected = float(self.sections)
        for count in frequencies:
            expected *= count / max(self.sections, 1)
        return expected

    @property
    def strong(self) -> bool:
        return self.all_words and len(self.words) >= 2 and self.chance <= MAX_CHANCE

    def coverage(self) -> float:
        """The largest share of the query words' IDF mass one best section holds (0 without
        words or sections); a word no section holds has the highest IDF."""
        if not self.words or not self.held:
            return 0.0
        total = max(self.sections, 1)
        idf = [math.log(1.0 + total / (count + 0.5)) for count in self.frequencies]
        mass = sum(idf)
        held = max(sum(i for i, h in zip(idf, inside, strict=True) if h) for inside in self.held)
        return held / mass if mass > 0 else 0.0

    def _held(self) -> tuple[tuple[bool, ...], ...]:
        """Per best section, the words it holds, a guessed word never."""
        if not self.guesses:
            return self.held
        return tuple(
            tuple(h and not g for h, g in zip(inside, self.guesses, strict=True))
            for inside in self.held
        )

    def supporting(self) -> tuple[str, ...]:
        """The words of the first best section (semantic, then lexical) that holds every query
        word (two or more) specific together, or two or more that are ten times as specific,
        counting every set of as many of the query's words as specific (``PARTIAL_CHANCE``,
        :meth:`as_specific`); () if none. A guessed word (:func:`guessed`) is not held: "the
        offside rule in soccer" is no better supported for a section on "outside" and
        "docker"."""
        for inside in self._held():
            counts = tuple(n for n, held in zip(self.frequencies, inside, strict=True) if held)
            every = len(counts) == len(self.words)
            if len(counts) >= 2 and (
                self._chance(counts) <= MAX_CHANCE if every else self._partial(counts)
            ):
                return tuple(w for w, held in zip(self.words, inside, strict=True) if held)
        return ()

    def _partial(self, held: tuple[int, ...]) -> bool:
        """Whether some of the query's words (``held``: their section counts) support it:
        :meth:`as_specific` under ``PARTIAL_CHANCE``, counted only where the bounds leave it
        open (the held set alone past it; every set of as many present words as specific
        still under it)."""
        own = self._chance(held)
        if own > PARTIAL_CHANCE:
            return False
        present = sum(1 for n in self.frequencies if n > 0)
        if own * math.comb(present, len(held)) <= PARTIAL_CHANCE:
            return True
        return self.as_specific(held) <= PARTIAL_CHANCE

    def as_specific(self, held: tuple[int, ...]) -> float:
        """Sections that would hold, by chance, *some* ``len(held)`` of the query's words as
        specific together as the words a best section holds (``held``: their section counts):
        the chance of every such set summed, the held one included. Which words a section
        holds is not chosen in advance: of "latex table column is too wide for the page", a
        best section of 5,000 abstracts holding "table" and "column" (0.04 by chance) is one
        of fifteen pairs, and together pairs that specific come out at 0.2; of "void istegi
        22:57'de geldi, neden void_window_closed aliyoruz", the three words its answer holds
        (0.0065) are among sets as specific that add up to 0.04. Counting stops once the sum
        is past :data:`PARTIAL_CHANCE`, or after :data:`SUBSET_WALK` sets (a long paste of
        rare words; the sum is then said to be past it)."""
        total = float(max(self.sections, 1))
        shares = sorted(n / total for n in self.frequencies if n > 0)
        logs = [0.0, *itertools.accumulate(math.log(s) for s in shares)]  # prefix sums
        bound = math.log(self._chance(held)) + 1e-9  # log of a set as specific, at most
        found, walked = 0.0, 0

        def walk(start: int, left: int, product: float) -> bool:
            """Add the sets completing ``product`` (log of the sections holding the words chosen
            so far, by chance) with ``left`` more words from ``start`` on; True once counting
            can stop."""
            nonlocal found, walked
            if left == 0:
                found += math.exp(product)
                return found > PARTIAL_CHANCE
            for i in range(start, len(shares) - left + 1):
                if product + logs[i + left] - logs[i] > bound:
                    break  # the rarest completion from here is too common, and later ones more
                walked += 1
                if walked > SUBSET_WALK or walk(i + 1, left - 1, product + logs[i + 1] - logs[i]):
                    return True
            return False

        stopped = walk(0, len(held), math.log(total))
        return math.inf if stopped and found <= PARTIAL_CHANCE else found

    def foreign(self) -> bool:
        """At least half of the query's words are in no section: another language than the
        index's (or words it never uses), the case for the levels of the query's language."""
        return bool(self.words) and 2 * len(self.missing()) >= len(self.words)

    def present(self) -> float:
        """The share of the query's words some section holds (1.0 without words)."""
        return 1.0 - len(self.missing()) / len(self.words) if self.words else 1.0

    def missing(self) -> tuple[str, ...]:
        return tuple(w for w, n in zip(self.words, self.frequencies, strict=True) if n == 0)


@dataclass(frozen=True, slots=True)
class GateDecision:
    decision: Literal["kept", "empty"]
    reasons: tuple[str, ...]


def decide(
    lexical: LexicalEvidence | None,
    best: float | None,
    probe: float | None,
    threshold: float | None,
    floor: float | None = None,
    language: str | None = None,
    section: tuple[float, float] | None = None,
) -> GateDecision:
    """Kept on strong lexical evidence, on a score (semantic margin plus coverage) at the
    threshold, or on a score at the ``floor`` (the probes' median) with lexical support in a
    best section; else empty. ``best``/``probe``/``threshold`` are None without calibrated
    vectors. ``section``: the query's section margin and the level it needs
    (:func:`section_margin`); below it, a score at the threshold without lexical support
    keeps nothing. A supported score is not held to it: with a model whose vectors carry
    little meaning (a weak remote one) a real question's best section may be no nearer it
    than to everyday talk, and its words in a best section are the evidence then."""
    reasons = [_lexical_reason(lexical)]
    semantic = best is not None and probe is not None and threshold is not None
    if semantic:
        assert best is not None and probe is not None and threshold is not None
        covered = lexical.coverage() if lexical is not None else 0.0
        score = best - probe + COVERAGE_WEIGHT * covered
        side = "at or above" if score >= threshold else "below"
        reasons.append(
            f"semantic: best match {best:.3f}, nearest off-topic probes {probe:.3f}, margin "
            f"{best - probe:+.3f}; a best section holds {covered:.0%} of the words' IDF mass: "
            f"score {score:+.3f} is {side} this index's threshold"
            + (f" for questions in {language}" if language else "")
            + f" {threshold:+.3f}"
        )
        on_topic = score >= threshold
        support = lexical.supporting() if lexical is not None else ()
        if not on_topic and floor is not None and support:
            on_topic = score >= floor
            reasons.append(
                f"supported: a best section holds {', '.join(support)}; score {score:+.3f} "
                f"is {'at or above' if on_topic else 'below'} the probes' median {floor:+.3f}"
            )
        if on_topic and section is not None and not support:
            on_topic = _section_holds(section, reasons)
    else:
        reasons.append("semantic: no calibrated vectors in scope; lexical evidence decides")
        on_topic = False
    if lexical is not None and lexical.strong:
        return GateDecision("kept", tuple(reasons))
    return GateDecision("kept" if on_topic else "empty", tuple(reasons))


def _section_holds(section: tuple[float, float], reasons: list[str]) -> bool:
    margin, level = section
    holds = margin >= level
    reasons.append(
        f"section: the best section is nearer this question than the off-topic probe nearest "
        f"it by {margin:+.3f}, {'at or above' if holds else 'below'} the probes' "
        f"{SECTION_QUANTILE:.0%} level {level:+.3f}"
        + ("" if holds else ": as near some everyday talk as to this question")
    )
    return holds


def guessed(typed: str, corrections: tuple[str, ...]) -> bool:
    """Whether the spelling corrections of a word the index lacks are all guesses: none keeps
    its stem. Kept: the typed word with letters left out ("dedline": deadline), the same stem
    with another ending ("subaylari": subaylar, "cizimleri": cizimlerine), a word it begins
    with. A guess ("soccer": docker, "venice": device) helps the search find a section; as
    evidence that the index covers the question it is worth nothing."""
    if not corrections:
        return False
    stem = typed[: max(STEM, len(typed) - 3)]
    umlauts = umlaut_readings(typed)  # German typed with ae, oe, ue: "kuehlware", kuhlware
    return not any(
        is_subsequence(typed, word)
        or word.startswith(stem)
        or typed.startswith(word)
        or word in umlauts
        for word in corrections
    )


def _lexical_reason(lexical: LexicalEvidence | None) -> str:
    if lexical is None or not lexical.words:
        return "lexical: no query words to match"
    words = ", ".join(lexical.words)
    if lexical.all_words:
        strength = "strong" if lexical.strong else "weak"
        single = " (a single word)" if len(lexical.words) < 2 else ""
        return (
            f"lexical: {strength}{single}: one section holds every query word ({words}); by "
            f"chance {lexical.chance:.3g} of {lexical.sections} sections would "
            f"(strong at most {MAX_CHANCE:g}, IDF mass {_idf_mass(lexical):.1f} vs log N "
            f"{math.log(max(lexical.sections, 1)):.1f})"
        )
    missing = lexical.missing()
    absent = f"; not in the index: {', '.join(missing)}" if missing else ""
    return f"lexical: weak: no section holds every query word ({words}){absent}{_guesses(lexical)}"


def _guesses(lexical: LexicalEvidence) -> str:
    guessed_words = [w for w, g in zip(lexical.words, lexical.guesses, strict=False) if g]
    if not guessed_words:
        return ""
    return f"; spelling guesses, no support: {', '.join(guessed_words)}"


def _idf_mass(lexical: LexicalEvidence) -> float:
    total = max(lexical.sections, 1)
    return sum(math.log(total / n) for n in lexical.frequencies if n)
