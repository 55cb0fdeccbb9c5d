"""The CI gate (V2): ``eval/thresholds.yaml`` lists sets and the minimum each metric must reach.

```yaml
sets:
  - name: golden-en
    queries: eval/golden/queries.yaml      # or  dataset: ../shared/eval-data/scifact
    min:
      bm25: {recall@5: 0.80}
```
Relative paths are read from the thresholds file's own folder (a team's ``ci/gate.yaml`` says
``queries: queries.yaml``, wherever briefd runs); in a folder named ``eval/`` also from the
folder above it, as this repository's file names its sets. A dataset folder that is absent is skipped (public data lives outside the repository). A set
marked ``slow: true`` (embedding it from a cold cache takes many minutes on 2 cores) has its
vector and hybrid minimums checked only with ``briefd eval --check … --all-sets``.

``split: train`` scores a dataset with the labels (and queries) of that split, on the same
index: questions no ranking change was tried on, held out beside the test split.

Trust figures (V4, ``briefd.eval.trust``) have limits of their own, for the set and for its
seeded subsets (BEIR sets; subsets run only with ``--all-sets``); ``fold: turkish`` scores the
set's queries typed without Turkish diacritics:
```yaml
    fold: turkish
    subsets: [8, 30, 200]
    trust: {max_emptied: 0.01, min_offtopic_rejected: 0.95, max_fusion_gap: 0.005}
```
A golden set may also gate prompt-time recall (see :mod:`briefd.eval.recall`):
``recall: {hybrid: {recall@5: 0.82, noise_share: 0.05, noise_tokens: 300}}`` — Recall@5 through
the recall engine is a minimum (and ``shown@5``, its sections whose content is printed, not a
pointer's source line alone); the share of recall-noise prompts that inject anything and the
most tokens one of them injects are maximums.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from briefd.errors import EvalError
from briefd.eval.datasets import read_yaml
from briefd.eval.metrics import METRICS
from briefd.eval.trust import TrustFigures

MODES = ("bm25", "vector", "hybrid")
RECALL_MODES = ("bm25", "hybrid")
RECALL_MINIMUMS = ("recall@5", "shown@5")
RECALL_MAXIMUMS = ("noise_share", "noise_tokens")


@dataclass(frozen=True, slots=True)
class Gate:
    name: str
    queries: Path | None
    dataset: Path | None
    minimums: dict[str, dict[str, float]]  # mode → metric → minimum
    slow: bool = False  # embedding it from cold takes long: vector/hybrid only with --all-sets
    trust: TrustLimits | None = None
    subsets: tuple[int, ...] = ()
    fold: bool = False
    recall: dict[str, dict[str, float]] = field(default_factory=dict)  # mode → limit (I8)
    split: str | None = None  # a dataset's other labels (``train``): datasets.load_beir


@dataclass(frozen=True, slots=True)
class TrustLimits:
    max_emptied: float = 1.0
    min_offtopic_rejected: float = 0.0
    max_fusion_gap: float = 1.0


def load_gates(path: Path) -> list[Gate]:
    data = read_yaml(path, "thresholds file")
    if not isinstance(data, dict) or not isinstance(data.get("sets"), list):
        raise EvalError(f"{path}: expected a mapping with a 'sets:' list")
    gates = [_gate(path, _bases(path), item, number) for number, item in enumerate(data["sets"], 1)]
    names = [gate.name for gate in gates]
    twice = next((name for name in names if names.count(name) > 1), None)
    if twice is not None:  # its lines of "below the eval gate" would not say which set failed
        raise EvalError(f"{path}: set name '{twice}' is used twice; names must be unique")
    return gates


SET_KEYS = (
    "name",
    "queries",
    "dataset",
    "split",
    "min",
    "slow",
    "trust",
    "subsets",
    "fold",
    "recall",
)
NEEDS = "every set needs 'name', 'min' and 'queries' or 'dataset'"


def _bases(path: Path) -> tuple[Path, ...]:
    """Where a set's relative paths are read from: the thresholds file's own folder, as
    briefd.yaml's paths are; for a file in a folder named ``eval/``, also the folder above it,
    as the bundled ``eval/thresholds.yaml`` is written (``queries: eval/golden/queries.yaml``)."""
    own = path.resolve().parent
    return (own, own.parent) if own.name == "eval" else (own,)


def _gate(path: Path, bases: tuple[Path, ...], item: Any, number: int) -> Gate:
    """One set; an error names it (by its number until it has a name), and a mistyped key
    (``mins:``) is named as such rather than as the key it misses."""
    if not isinstance(item, dict):
        raise EvalError(f"{path}: set #{number} is not a mapping; {NEEDS}")
    where = f"{path}: set '{item['name']}'" if "name" in item else f"{path}: set #{number}"
    unknown = [str(key) for key in item if key not in SET_KEYS]
    if unknown:
        raise EvalError(f"{where}: unknown key '{unknown[0]}'; a set takes {', '.join(SET_KEYS)}")
    missing = [key for key in ("name", "min") if key not in item]
    if missing:
        raise EvalError(f"{where}: no '{missing[0]}'; {NEEDS}")
    name = str(item["name"])
    queries = _place(where, bases, item, "queries")
    dataset = _place(where, bases, item, "dataset")
    if (queries is None) == (dataset is None):
        raise EvalError(f"{where} needs exactly one of 'queries' or 'dataset'")
    fold = item.get("fold")
    if fold not in (None, "turkish"):
        raise EvalError(f"{where}: fold must be 'turkish'")
    gate = Gate(
        name,
        queries,
        dataset,
        _limits(where, "min", item["min"], MODES, METRICS),
        _flag(where, item.get("slow", False)),
        _trust(where, item.get("trust")),
        _subsets(where, item.get("subsets")),
        fold == "turkish",
        _limits(
            where,
            "recall",
            item.get("recall") or {},
            RECALL_MODES,
            RECALL_MINIMUMS + RECALL_MAXIMUMS,
        ),
        _split(where, item.get("split")),
    )
    if not gate.minimums and not gate.recall and gate.trust is None:  # `min: {}`: a pass of nothing
        raise EvalError(
            f"{where}: min names no limit; give one, e.g. min: {{bm25: {{recall@5: 0.8}}}}"
        )
    _check_kind(where, gate)
    return gate


def _check_kind(where: str, gate: Gate) -> None:
    """Refuse what the set's kind never runs: checked nowhere, a limit would pass unseen."""
    if gate.dataset is not None and gate.recall:
        raise EvalError(
            f"{where}: recall limits are measured on a golden set (queries:), not a dataset; "
            "drop them or point the set at a golden query file"
        )
    if gate.queries is not None and (gate.fold or gate.subsets or gate.split):
        key = "fold" if gate.fold else "subsets" if gate.subsets else "split"
        raise EvalError(
            f"{where}: {key} is for a dataset (BEIR) set, not a golden query file; drop it"
        )
    if gate.subsets and gate.trust is None:
        raise EvalError(
            f"{where}: subsets are measured against trust limits; add trust: or drop them"
        )


def _place(where: str, bases: tuple[Path, ...], item: dict[Any, Any], key: str) -> Path | None:
    """The set's ``queries`` file or ``dataset`` folder (``~``: the user's home): relative, the
    first of ``bases`` it exists under, else the last (an absent dataset is skipped, named)."""
    if key not in item:
        return None
    value = item[key]
    if not isinstance(value, str) or not value:
        raise EvalError(f"{where}: {key} must be one path, got {value!r}")
    given = Path(value).expanduser()
    found = [base / given for base in bases if (base / given).exists()]
    return found[0] if found else bases[-1] / given


def _limits(
    where: str, key: str, given: Any, modes: tuple[str, ...], metrics: tuple[str, ...]
) -> dict[str, dict[str, float]]:
    """``{mode: {metric: number}}`` of a set's ``min`` or ``recall``, every part checked."""
    form = f"{key} must map modes to metrics, e.g. {key}: {{{modes[0]}: {{{metrics[0]}: 0.8}}}}"
    if not isinstance(given, dict):
        raise EvalError(f"{where}: {form}")
    limits: dict[str, dict[str, float]] = {}
    for mode, values in given.items():
        if mode not in modes:
            raise EvalError(f"{where}: {key} mode must be one of {', '.join(modes)}, got {mode!r}")
        if not isinstance(values, dict):
            raise EvalError(f"{where}: {form}")
        for metric, value in values.items():
            if metric not in metrics:
                raise EvalError(
                    f"{where}: {key}.{mode} metric must be one of {', '.join(metrics)}, "
                    f"got {metric!r}"
                )
            name = f"{key}.{mode}.{metric}"
            number = _number(where, name, value)
            limits.setdefault(mode, {})[metric] = (
                number if metric in COUNTS else _fraction(where, name, number)
            )
    return limits


COUNTS = ("noise_tokens",)  # the one limit that is not a share


def _number(where: str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise EvalError(f"{where}: {key} must be a number, got {value!r}")
    return float(value)


def _fraction(where: str, key: str, value: float, low: float = 0.0) -> float:
    """Every figure but a token count is a share: a limit of 80 (a percentage) could never
    be met, or, as a maximum, never be passed, and would not read as the mistake it is."""
    if not low <= value <= 1.0:
        hint = " (0.8, not 80)" if value > 1 else ""
        raise EvalError(f"{where}: {key} must be a fraction from {low:g} to 1{hint}, got {value:g}")
    return value


def _flag(where: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise EvalError(f"{where}: slow must be true or false, got {value!r}")
    return value


def _split(where: str, value: Any) -> str | None:
    """A split's name (``train``): the labels ``qrels.train.tsv`` or ``qrels/train.tsv``."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise EvalError(f"{where}: split must be the name of a split of the dataset, e.g. train")
    return value


def _subsets(where: str, value: Any) -> tuple[int, ...]:
    sizes = value or []
    if not isinstance(sizes, list) or not all(
        isinstance(size, int) and not isinstance(size, bool) and size > 0 for size in sizes
    ):
        raise EvalError(f"{where}: subsets must be a list of document counts, e.g. [8, 30]")
    return tuple(sizes)


def recall_shortfalls(gate: Gate, mode: str, figures: dict[str, float]) -> list[str]:
    """Recall figures past their limit (below a minimum, above a maximum), as readable lines."""
    out = []
    for metric, limit in gate.recall.get(mode, {}).items():
        value = figures[metric]
        if metric in RECALL_MINIMUMS and value + 1e-9 < limit:
            out.append(f"{gate.name} recall {mode} {metric} = {value:.4f} < {limit:.4f}")
        if metric in RECALL_MAXIMUMS and value > limit + 1e-9:
            out.append(f"{gate.name} recall {mode} {metric} = {value:.4f} > {limit:.4f}")
    return out


def _trust(where: str, item: Any) -> TrustLimits | None:
    if item is None:
        return None
    known = set(TrustLimits.__dataclass_fields__)
    if not isinstance(item, dict) or not set(item) <= known:
        raise EvalError(f"{where}: trust takes {', '.join(sorted(known))}")
    return TrustLimits(
        **{
            key: _fraction(
                where, f"trust.{key}", _number(where, f"trust.{key}", v), GAP_LOW.get(key, 0.0)
            )
            for key, v in item.items()
        }
    )


GAP_LOW = {"max_fusion_gap": -1.0}  # hybrid nDCG@10 may be required above its better side


def shortfalls(gate: Gate, mode: str, overall: dict[str, float]) -> list[str]:
    """Metrics below their minimum, as readable lines."""
    return [
        f"{gate.name} {mode} {metric} = {overall[metric]:.4f} < {minimum:.4f}"
        for metric, minimum in gate.minimums.get(mode, {}).items()
        if overall[metric] + 1e-9 < minimum
    ]


def trust_shortfalls(limits: TrustLimits, figures: TrustFigures) -> list[str]:
    """Trust figures beyond their limits, as readable lines."""
    name = figures.name
    lines = []
    if figures.emptied_share > limits.max_emptied + 1e-9:
        lines.append(
            f"{name} emptied {figures.emptied}/{figures.queries} real queries "
            f"({figures.emptied_share:.4f} > {limits.max_emptied:.4f})"
        )
    for lang, share in figures.offtopic_rejected.items():
        if share + 1e-9 < limits.min_offtopic_rejected:
            lines.append(
                f"{name} off-topic rejected ({lang}) = {share:.4f} < {limits.min_offtopic_rejected:.4f}"
            )
    gap = figures.fusion_gap
    if gap is not None and gap > limits.max_fusion_gap + 1e-9:
        lines.append(f"{name} hybrid nDCG@10 {gap:.4f} below its better side")
    return lines
