"""The tuner (V3): random search over recall-time knobs against an eval set.

Nothing is re-embedded or re-indexed: every trial changes only how candidates are scored and
gated. Queries are split into a tune fold and a holdout fold by a hash of their id, the search
optimises the tune fold only, and both folds are reported — a gain that does not hold out is
overfitting, and the report shows it.

The eval set holds real questions only, so loosening the relevance gate (a lower
``gate_offset``) never costs a trial anything there: every trial that beats the best so far is
also asked briefd's off-topic questions (``eval/offtopic.yaml``), and one that answers more of
them than the current settings is refused rather than written as a gain.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from briefd.api import Briefd
from briefd.errors import EvalError
from briefd.eval.metrics import mean
from briefd.eval.recall import shipped
from briefd.eval.run import Case, UnitOf, score_cases
from briefd.eval.trust import OffTopicQuery, load_offtopic, offtopic_answered
from briefd.retrieval.search import RANKING_VERSION
from briefd.settings import Settings, with_overrides

Objective = Literal["hit_rate", "mrr"]

# knob → (low, high, kind); all of them act at query time only.
SPACE: dict[str, tuple[float, float, str]] = {
    "search.vector_weight": (0.2, 0.9, "float"),
    "search.all_terms_bonus": (0.0, 0.5, "float"),
    "search.coverage_bonus": (0.0, 0.6, "float"),
    "search.any_term_weight": (0.05, 1.0, "float"),
    "search.title_weight": (1.0, 6.0, "float"),
    "search.heading_weight": (1.0, 5.0, "float"),
    "search.body_weight": (0.5, 2.0, "float"),
    "search.candidates": (20, 100, "int"),
    "search.gate_offset": (-0.03, 0.03, "float"),
}


@dataclass(frozen=True, slots=True)
class FoldScores:
    hit_rate: float
    mrr: float
    ndcg: float


@dataclass(frozen=True, slots=True)
class OffTopicFigures:
    """Of briefd's off-topic questions, how many the current settings and the tuned ones
    answer (anything not emptied by the relevance gate), and the trials refused for answering
    more of them than the current settings."""

    questions: int
    answered_baseline: int
    answered: int
    refused_trials: int = 0


@dataclass(frozen=True, slots=True)
class TuneResult:
    objective: Objective
    trials: int
    seed: int
    knobs: dict[str, float | int]
    baseline_tune: FoldScores
    baseline_holdout: FoldScores
    best_tune: FoldScores
    best_holdout: FoldScores
    tune_queries: int
    holdout_queries: int
    offtopic: OffTopicFigures | None = None  # None: no off-topic questions were asked

    @property
    def holds_out(self) -> bool:
        """False when the tuned knobs score worse than the current settings on the holdout
        fold (by the objective): they fit the tune fold's queries, not queries in general."""
        return self.objective_of(self.best_holdout) >= self.objective_of(self.baseline_holdout)

    def objective_of(self, scores: FoldScores) -> float:
        return scores.hit_rate if self.objective == "hit_rate" else scores.mrr

    def beaten_by(self, scores: FoldScores) -> bool:
        """``scores`` (other knobs on the same tune fold) are at least this run's best, by the
        objective and then nDCG@10, as the trials were ranked."""
        best = self.best_tune
        return (self.objective_of(scores), scores.ndcg) >= (self.objective_of(best), best.ndcg)

    def as_config(
        self,
        tuned_on: str | None = None,
        model: str | None = None,
        windows: int | None = None,
        source: str | None = None,
        split: str | None = None,
    ) -> dict[str, Any]:
        """The file `search --config`/`eval --config` read: settings sections plus a record
        of what was tuned: on which set (``tuned_on``, the query file or dataset folder; the
        ``source`` given for a query file, ``--source``; the dataset's ``split`` when not its
        test split, ``--split``), for which search mode, ranking,
        embedding ``model`` and section ``windows`` (``embeddings.window_words``), and how it
        scored."""
        search = {key.split(".", 1)[1]: value for key, value in self.knobs.items()}
        return {
            "search": search,
            "tuned": {
                **({"set": tuned_on} if tuned_on is not None else {}),
                **({"source": source} if source is not None else {}),
                **({"split": split} if split is not None else {}),
                "mode": "hybrid",
                "ranking_version": RANKING_VERSION,
                **({"embedding_model": model} if model is not None else {}),
                **({"window_words": windows} if windows is not None else {}),
                "objective": self.objective,
                "trials": self.trials,
                "seed": self.seed,
                "tune": vars_of(self.best_tune, self.tune_queries),
                "holdout": vars_of(self.best_holdout, self.holdout_queries),
                "baseline_tune": vars_of(self.baseline_tune, self.tune_queries),
                "baseline_holdout": vars_of(self.baseline_holdout, self.holdout_queries),
                "holds_out": self.holds_out,  # the text output's "the gain does not hold out"
                **({"offtopic": asdict(self.offtopic)} if self.offtopic is not None else {}),
            },
        }


def vars_of(scores: FoldScores, queries: int) -> dict[str, float | int]:
    return {
        "queries": queries,
        "hit_rate": round(scores.hit_rate, 4),
        "mrr": round(scores.mrr, 4),
        "ndcg@10": round(scores.ndcg, 4),
    }


def split(cases: Sequence[Case], holdout_share: float = 0.3) -> tuple[list[Case], list[Case]]:
    """Deterministic folds: queries ordered by a hash of their id, the first share held out."""
    ordered = sorted(cases, key=lambda case: hashlib.sha256(case[0].encode()).hexdigest())
    cut = round(len(ordered) * holdout_share)
    return ordered[cut:], ordered[:cut]


def sample(rng: random.Random) -> dict[str, float | int]:
    knobs: dict[str, float | int] = {}
    for key, (low, high, kind) in SPACE.items():
        value = rng.uniform(low, high)
        knobs[key] = round(value) if kind == "int" else round(value, 4)
    return knobs


OFFTOPIC_FILE = "offtopic.yaml"


def default_offtopic() -> tuple[OffTopicQuery, ...]:
    """briefd's own off-topic questions (``eval/offtopic.yaml``); none when this installation
    lacks the file."""
    path = shipped(OFFTOPIC_FILE)
    return load_offtopic(path) if path is not None else ()


@dataclass(frozen=True, slots=True)
class _Trials:
    """How settings score: the eval queries of a fold, and the off-topic questions answered."""

    api: Briefd
    unit: UnitOf
    where: str | None
    offtopic: Sequence[OffTopicQuery]

    def scores(self, settings: Settings, fold: Sequence[Case]) -> FoldScores:
        self.api.settings = settings
        rows = score_cases(self.api, "hybrid", fold, self.unit, self.where)
        hits = sum(1 for r in rows if r["recall@5"] > 0) / len(rows)
        avg = mean(rows)
        return FoldScores(hits, avg["mrr@10"], avg["ndcg@10"])

    def answered(self, settings: Settings) -> int:
        """How many off-topic questions search with ``settings`` answers (not emptied)."""
        if not self.offtopic:
            return 0
        self.api.settings = settings
        return len(offtopic_answered(self.api, self.offtopic))


def tune_fold_scores(
    api: Briefd, cases: Sequence[Case], unit: UnitOf, knobs: dict[str, Any], where: str | None = ""
) -> FoldScores:
    """What ``knobs`` (``search.…`` keys, as an earlier result holds them) score on the tune
    fold :func:`tune` splits ``cases`` into: an earlier result and a new one compared on the
    same queries. A knob these settings do not take is a ConfigError."""
    tune_cases, _ = split(cases)
    base = api.settings
    try:
        return _Trials(api, unit, where, ()).scores(with_overrides(base, knobs), tune_cases)
    finally:
        api.settings = base


def tune(
    api: Briefd,
    cases: Sequence[Case],
    unit: UnitOf,
    objective: Objective,
    trials: int,
    seed: int = 0,
    progress: Callable[[int, int, float], None] | None = None,
    where: str | None = "",
    offtopic: Sequence[OffTopicQuery] | None = None,
) -> TuneResult:
    """The best of ``trials`` random settings on the tune fold; ``where``: the file of the
    queries, as an error about one of them starts (None: a public set, see
    :func:`score_cases`). A trial that
    answers more of the ``offtopic`` questions (None: briefd's own) than the current settings
    is refused."""
    tune_cases, holdout_cases = split(cases)
    if not tune_cases or not holdout_cases:  # one query: its "holdout" would be the tune fold
        raise EvalError(
            f"tuning needs 2 queries or more, got {len(cases)}: 30% are held out to show "
            "whether a gain holds on queries it was not tuned on; add queries to the set"
        )
    base = api.settings
    rng = random.Random(seed)
    run = _Trials(api, unit, where, default_offtopic() if offtopic is None else offtopic)
    scores, answered = run.scores, run.answered

    def rank(s: FoldScores) -> tuple[float, float]:
        return (s.hit_rate if objective == "hit_rate" else s.mrr), s.ndcg

    try:
        baseline_tune, allowed = scores(base, tune_cases), answered(base)
        best, best_knobs, refused = baseline_tune, {}, 0
        for trial in range(1, trials + 1):
            knobs = sample(rng)
            trial_settings = with_overrides(base, knobs)
            candidate = scores(trial_settings, tune_cases)
            if rank(candidate) > rank(best):
                if answered(trial_settings) > allowed:  # a looser gate, not a better ranking
                    refused += 1
                else:
                    best, best_knobs = candidate, knobs
            if progress:
                progress(trial, trials, rank(best)[0])
        best_settings = with_overrides(base, best_knobs)
        figures = OffTopicFigures(len(run.offtopic), allowed, answered(best_settings), refused)
        return TuneResult(
            objective,
            trials,
            seed,
            best_knobs,
            baseline_tune,
            scores(base, holdout_cases),
            best,
            scores(best_settings, holdout_cases),
            len(tune_cases),
            len(holdout_cases),
            figures if run.offtopic else None,
        )
    finally:
        api.settings = base
