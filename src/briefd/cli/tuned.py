"""A tuned file (``--config`` after a command) laid over the settings, and said when stale."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from briefd.cli.output import errors, named_config
from briefd.retrieval.search import RANKING_VERSION
from briefd.settings import Settings, apply_tuned
from briefd.settings.raw import read_file


def tuned_settings(settings: Settings, path: Path | None, command: str | None) -> Settings:
    """``settings`` with the tuned file ``path`` laid over them (see
    :func:`briefd.settings.apply_tuned`); a file tuned for another ranking or embedding model
    than these settings run with is still applied, with a warning on stderr."""
    applied = apply_tuned(settings, path, command)
    if path is not None:
        for line in stale(path, applied):
            errors.print(f"warning: {line}", markup=False, soft_wrap=True)
    return applied


def stale(path: Path, settings: Settings) -> list[str]:
    """Why the knobs of the tuned file ``path`` were not chosen for what ``settings`` run: the
    ranking of another briefd, or another embedding model or section windows (whose cosines
    the fusion weights and the gate's offset were fitted to)."""
    record: Any = read_file(path).get("tuned")
    if not isinstance(record, dict):
        return []
    again = _again(path, record)
    lines = []
    version = record.get("ranking_version")
    if isinstance(version, str) and version != RANKING_VERSION:
        lines.append(
            f"{path} was tuned for ranking {version}, and this briefd ranks with "
            f"{RANKING_VERSION}: its knobs were chosen for a ranking it no longer has; {again}"
        )
    model = record.get("embedding_model")
    current = settings.embeddings.model
    if isinstance(model, str) and settings.embeddings.enabled and model != current:
        lines.append(
            f"{path} was tuned with the embedding model {model}, and the settings use "
            f"{current}: its fusion weights and gate offset were fitted to the other model's "
            f"scores; {again}"
        )
    windows = record.get("window_words")
    now = settings.embeddings.window_words
    if isinstance(windows, int) and settings.embeddings.enabled and windows != now:
        lines.append(
            f"{path} was tuned with embeddings.window_words {windows}, and the settings use "
            f"{now}: its fusion weights and gate offset were fitted to the cosines of "
            f"{_windows(windows)}, and search now meets {_windows(now)}; {again}"
        )
    return lines


def _again(path: Path, record: dict[str, Any]) -> str:
    """How to tune again on the set of ``record`` into ``path`` itself: the command, with the
    knowledge source the file was tuned with given as ``--source`` (without it, a query file
    that names no source of its own is refused), its objective, and ``--output path`` (without
    it the result went to ./best.json, and the stale file stayed as it was); a record that
    names no set (hand-written files) says ``briefd tune`` alone."""
    tuned_on, source = record.get("set"), record.get("source")
    if not isinstance(tuned_on, str):
        return "run `briefd tune` again"
    option = "--dataset" if Path(tuned_on).is_dir() else "--queries"
    settings = [word for path in named_config for word in ("--config", str(path))]
    words = ["briefd", *settings, "tune", option, tuned_on]  # with this run's settings file
    if isinstance(source, str) and option == "--queries":
        words += ["--source", source]
    split = record.get("split")
    if isinstance(split, str) and option == "--dataset":
        words += ["--split", split]
    if record.get("objective") == "mrr":  # tune's default objective is hit_rate
        words += ["--objective", "mrr"]
    command = " ".join(shlex.quote(word) for word in [*words, "--output", str(path)])
    return f"run `{command}` again"


def _windows(words: int) -> str:
    return f"windows of {words} words" if words else "whole sections (no windows)"


HYBRID_ONLY = ("vector_weight", "all_terms_bonus", "coverage_bonus", "gate_offset")


def idle_knobs(path: Path, modes: Sequence[str], embeddings: bool, gate: bool) -> str | None:
    """A warning when the tuned file ``path`` sets knobs that act in hybrid search only (score
    fusion, the relevance gate) and none of the ``modes`` an eval runs is hybrid: they change
    nothing there. ``gate``: ``--check``, whose modes are the thresholds file's (with
    embeddings on, hybrid among them)."""
    search: Any = read_file(path).get("search")
    idle = [f"search.{k}" for k in HYBRID_ONLY if isinstance(search, dict) and k in search]
    if not idle or "hybrid" in modes:
        return None
    steps = [] if embeddings else ["turn embeddings on (embeddings.enabled: true)"]
    steps += [] if gate else ["pass --mode hybrid"]
    return (
        f"{path} sets {', '.join(idle)}, which act in hybrid search only, and this eval runs "
        f"{', '.join(modes)}: they change nothing here; to measure them, {' and '.join(steps)}"
    )
