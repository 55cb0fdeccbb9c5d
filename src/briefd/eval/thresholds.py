"""The CI gate (V2): ``eval/thresholds.yaml`` lists sets and the minimum each metric must reach.

```yaml
sets:
  - name: golden-en
    queries: eval/golden/queries.yaml      # or  dataset: ../shared/eval-data/scifact
    min:
      bm25: {recall@5: 0.80}
```
A dataset folder that is absent is skipped (public data lives outside the repository). A set
marked ``slow: true`` (embedding it from a cold cache takes many minutes on 2 cores) has its
vector and hybrid minimums checked only with ``briefd eval --check … --all-sets``.

A golden set may also gate prompt-time recall (see :mod:`briefd.eval.recall`):
``recall: {hybrid: {recall@5: 0.82, noise_share: 0.05, noise_tokens: 300}}`` — Recall@5 through
the recall engine is a minimum; the share of recall-noise prompts that inject anything and the
most tokens one of them injects are maximums.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from briefd.errors import EvalError
from briefd.eval.metrics import METRICS

MODES = ("bm25", "vector", "hybrid")
RECALL_MINIMUMS = ("recall@5",)
RECALL_MAXIMUMS = ("noise_share", "noise_tokens")


@dataclass(frozen=True, slots=True)
class Gate:
    name: str
    queries: Path | None
    dataset: Path | None
    minimums: dict[str, dict[str, float]]  # mode → metric → minimum
    slow: bool = False  # embedding it from cold takes long: vector/hybrid only with --all-sets
    recall: dict[str, dict[str, float]] = field(default_factory=dict)  # mode → limit (I8)


def load_gates(path: Path) -> list[Gate]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise EvalError(f"cannot read thresholds file {path}: {exc.strerror}") from None
    except yaml.YAMLError:
        raise EvalError(f"{path} is not valid YAML; fix its syntax") from None
    if not isinstance(data, dict) or not isinstance(data.get("sets"), list):
        raise EvalError(f"{path}: expected a mapping with a 'sets:' list")
    base = path.resolve().parent.parent if path.parent.name == "eval" else Path.cwd()
    return [_gate(path, base, item) for item in data["sets"]]


def _gate(path: Path, base: Path, item: Any) -> Gate:
    if not isinstance(item, dict) or "name" not in item or "min" not in item:
        raise EvalError(f"{path}: every set needs 'name', 'min' and 'queries' or 'dataset'")
    name = str(item["name"])
    queries = base / item["queries"] if "queries" in item else None
    dataset = base / item["dataset"] if "dataset" in item else None
    if (queries is None) == (dataset is None):
        raise EvalError(f"{path}: set '{name}' needs exactly one of 'queries' or 'dataset'")
    minimums: dict[str, dict[str, float]] = {}
    for mode, metrics in dict(item["min"]).items():
        if mode not in MODES:
            raise EvalError(f"{path}: set '{name}': mode must be one of {', '.join(MODES)}")
        for metric, value in dict(metrics).items():
            if metric not in METRICS:
                raise EvalError(f"{path}: set '{name}': metric must be one of {', '.join(METRICS)}")
            minimums.setdefault(mode, {})[metric] = float(value)
    recall = _recall_limits(path, name, item.get("recall") or {})
    return Gate(name, queries, dataset, minimums, bool(item.get("slow", False)), recall)


def _recall_limits(path: Path, name: str, given: Any) -> dict[str, dict[str, float]]:
    limits: dict[str, dict[str, float]] = {}
    for mode, metrics in dict(given).items():
        if mode not in ("bm25", "hybrid"):
            raise EvalError(f"{path}: set '{name}': recall mode must be bm25 or hybrid")
        for metric, value in dict(metrics).items():
            if metric not in (*RECALL_MINIMUMS, *RECALL_MAXIMUMS):
                known = ", ".join((*RECALL_MINIMUMS, *RECALL_MAXIMUMS))
                raise EvalError(f"{path}: set '{name}': recall metric must be one of {known}")
            limits.setdefault(mode, {})[metric] = float(value)
    return limits


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


def shortfalls(gate: Gate, mode: str, overall: dict[str, float]) -> list[str]:
    """Metrics below their minimum, as readable lines."""
    return [
        f"{gate.name} {mode} {metric} = {overall[metric]:.4f} < {minimum:.4f}"
        for metric, minimum in gate.minimums.get(mode, {}).items()
        if overall[metric] + 1e-9 < minimum
    ]
