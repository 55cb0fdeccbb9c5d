"""The relevance gate (R4): an off-topic query returns nothing instead of noise.

A single global cosine floor does not work — how high an unrelated query scores depends on the
model and on the corpus. So each index is calibrated: a fixed set of probe queries about things
no team documents (recipes, sports, travel…, in several languages) is run against the index, and
the mean and spread of their best cosines describe "noise" for this index. A hit then needs a
cosine ``soft_sigma`` spreads above that mean, or lexical corroboration (it contains every query
term) and at least ``hard_sigma`` spreads; below that it is dropped. The gate runs before top-k
truncation, so gated-out candidates never push out eligible ones.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

PROBES: tuple[str, ...] = (
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
    "how do volcanoes form",
    "which dog breeds shed the least",
    "how to remove a red wine stain",
    "istanbul'da gezilecek yerler",
    "mercimek çorbası tarifi",
    "dün akşamki futbol maçının sonucu",
    "kedi maması önerileri",
    "tatil için en iyi plajlar",
    "Rezept für Apfelkuchen",
    "Wetter morgen in Berlin",
)


@dataclass(frozen=True, slots=True)
class Calibration:
    """How unrelated queries score against one index (best cosine per probe)."""

    model: str
    fingerprint: str
    mean: float
    std: float
    maximum: float
    probes: int


@dataclass(frozen=True, slots=True)
class Thresholds:
    hard: float
    soft: float


def calibrate(model: str, fingerprint: str, best_cosines: Sequence[float]) -> Calibration:
    values = list(best_cosines)
    return Calibration(
        model,
        fingerprint,
        statistics.fmean(values),
        statistics.pstdev(values),
        max(values),
        len(values),
    )


def thresholds(
    calibration: Calibration,
    hard_sigma: float,
    soft_sigma: float,
    hard_floor: float | None = None,
    soft_floor: float | None = None,
) -> Thresholds:
    """Floors from the calibration, unless absolute floors are configured."""
    hard = calibration.mean + hard_sigma * calibration.std
    soft = calibration.mean + soft_sigma * calibration.std
    return Thresholds(
        hard if hard_floor is None else hard_floor, soft if soft_floor is None else soft_floor
    )


def passes(cosine: float | None, corroborated: bool, limits: Thresholds) -> bool:
    """Keep a confident semantic match, or a lexically corroborated one above the hard floor.
    A chunk without a vector (not embedded yet) needs lexical corroboration."""
    if cosine is None:
        return corroborated
    if cosine >= limits.soft:
        return True
    return corroborated and cosine >= limits.hard
