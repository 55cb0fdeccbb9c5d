"""The relevance gate (R4): an off-topic query returns nothing instead of noise.

A single global cosine floor does not work: how high an unrelated query scores depends on the
model, the language and the corpus. So every index is calibrated with probe queries about
things no team documents (recipes, sport, travel…, in English, Turkish and German), and a query
is judged by its *margin*: its best cosine against this index minus its best cosine against
the probes of the index's language. A query that resembles small talk more than anything in the index is off-topic.

    margin >= strong                      on-topic
    weak <= margin < strong               on-topic only with lexical corroboration: a chunk
                                          contains every query term, or the best semantic hit
                                          is also among the top lexical hits
    margin < weak                         off-topic: the result is empty

The decision is made on the whole candidate set, before top-k truncation. The probe cosines
per index (mean, spread, maximum) are stored alongside for diagnostics. Only the probes of the
index's own language are used (the language whose probes score highest against it).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

PROBES: dict[str, tuple[str, ...]] = {
    "en": (
        "what is the capital of australia",
        "how to train a puppy to sit",
        "lyrics of a famous love song",
        "best hiking trails in the alps",
        "how many moons does jupiter have",
        "recipe for lentil soup",
        "who painted the mona lisa",
        "tips for growing tomatoes on a balcony",
        "football match results from last weekend",
        "how to knit a scarf",
        "symptoms of the common cold",
        "cheap flights to lisbon in may",
        "history of the roman empire",
        "how to tune a guitar",
        "best movies of the eighties",
        "yoga poses for beginners",
        "how to make sourdough bread",
        "the rules of castling in chess",
        "weather forecast for tomorrow",
        "wedding speech ideas",
    ),
    "tr": (
        "istanbul'da gezilecek yerler",
        "mercimek çorbası tarifi",
        "dün akşamki futbol maçının sonucu",
        "kedi maması önerileri",
        "tatil için en iyi plajlar",
        "evde ekmek nasıl yapılır",
        "köpek eğitimi için ipuçları",
        "en güzel aşk şarkıları",
        "kış lastiği ne zaman takılır",
        "yeni başlayanlar için yoga hareketleri",
        "karadeniz turu fiyatları",
        "soğuk algınlığına iyi gelen bitkiler",
        "osmanlı padişahlarının listesi",
        "gitar akordu nasıl yapılır",
        "düğün konuşması örnekleri",
        "balkonda domates yetiştirmek",
        "satranç kuralları",
        "yarın hava nasıl olacak",
        "baklava tarifi",
        "en iyi bilim kurgu filmleri",
    ),
    "de": (
        "Rezept für Apfelkuchen",
        "Wetter morgen in Berlin",
        "beste Wanderwege in den Alpen",
        "wie lerne ich Gitarre spielen",
        "Hauptstadt von Australien",
    ),
}


@dataclass(frozen=True, slots=True)
class Calibration:
    """The probes of the index's own language and how they score against the index."""

    model: str
    fingerprint: str
    language: str
    probe_vectors: npt.NDArray[np.float32]
    mean: float
    std: float
    maximum: float


def calibrate(
    model: str,
    fingerprint: str,
    groups: Mapping[str, tuple[npt.NDArray[np.float32], Sequence[float]]],
) -> Calibration:
    """``groups``: language → (probe vectors, each probe's best cosine against the index).

    The language whose probes score highest is the index's language: queries are compared
    with small talk in that language (a Turkish corpus sits closer to Turkish small talk,
    and a Turkish question about an English corpus must not be judged by Turkish probes).
    """
    language = max(groups, key=lambda lang: statistics.fmean(groups[lang][1]))
    vectors, best = groups[language]
    values = list(best)
    return Calibration(
        model,
        fingerprint,
        language,
        vectors,
        statistics.fmean(values),
        statistics.pstdev(values),
        max(values),
    )


def probe_cosine(calibration: Calibration, query: npt.NDArray[np.float32]) -> float:
    """How close the query comes to off-topic small talk."""
    return float(np.max(calibration.probe_vectors @ query))


def on_topic(
    best_cosine: float | None,
    probe: float,
    corroborated: bool,
    strong: float,
    weak: float,
) -> bool:
    if best_cosine is None:  # nothing in scope has a vector: only lexical evidence counts
        return corroborated
    margin = best_cosine - probe
    return margin >= strong or (margin >= weak and corroborated)
