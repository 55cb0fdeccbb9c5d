"""``briefd eval --check``: the sets with trust limits (V4) — every mode, the off-topic set,
and for BEIR sets with ``--all-sets`` their seeded subsets."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from briefd.api import Briefd
from briefd.cli.index import ProgressLog
from briefd.cli.output import console, errors, printable
from briefd.eval.datasets import BeirSet, GoldenSet, load_beir
from briefd.eval.run import (
    SOURCE_FROM_FILE,
    EvalReport,
    beir_index,
    open_golden,
    refused,
    run_beir,
    run_golden,
)
from briefd.eval.thresholds import Gate, trust_shortfalls
from briefd.eval.trust import OffTopicQuery, TrustFigures, figures, offtopic_answered
from briefd.eval.variants import folded, subset
from briefd.model import SearchMode
from briefd.settings import Settings
from briefd.store.db import Store
from briefd.vectors import store as vector_store

EVERY_MODE: tuple[SearchMode, ...] = ("bm25", "vector", "hybrid")
OFFTOPIC_FILE = "offtopic.yaml"  # beside the thresholds file


@dataclass(frozen=True, slots=True)
class TrustedRun:
    reports: list[EvalReport]  # the set's own, checked against its minimums
    subset_reports: list[EvalReport]
    figures: list[TrustFigures]
    failures: list[str]


def gate_dataset(gate: Gate) -> BeirSet:
    """The BEIR set a gate names, with its queries folded when it says so; called by the set's
    name, as its lines of "below the eval gate" call it (its subsets: name@N)."""
    assert gate.dataset is not None
    dataset = load_beir(gate.dataset, gate.split)
    return folded(dataset, gate.name) if gate.fold else replace(dataset, name=gate.name)


def indexing(
    name: str,
    write: Callable[[str], object] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> ProgressLog:
    """The progress of an eval index's run, on stderr as ``briefd index`` logs it in a pipe
    (a line every 5 s while a stage lasts), named by its set: a first eval of a large set
    embedded it for minutes without a word. ``write``: where the lines go (stderr)."""

    def said(line: str) -> None:
        errors.print(line, markup=False, soft_wrap=True, highlight=False)

    out = write or said
    return ProgressLog(lambda line: out(f"{name}: indexing: {line}"), clock=clock)


def gate_golden(settings: Settings, gate: Gate) -> tuple[Briefd, GoldenSet]:
    """The golden set a gate names and an API over its index, called by the set's name (the
    query file's own ``name:`` may differ): the tables and the failure lines name one thing."""
    assert gate.queries is not None
    progress = indexing(gate.name)
    api, golden = open_golden(settings, gate.queries, None, SOURCE_FROM_FILE, progress)
    return api, replace(golden, name=gate.name)


def run_trusted(
    settings: Settings,
    gate: Gate,
    offtopic: tuple[OffTopicQuery, ...],
    all_sets: bool,
) -> TrustedRun:
    """Reports in every mode, trust figures and their shortfalls for ``gate`` (and with
    ``all_sets`` its subsets)."""
    assert gate.trust is not None
    if gate.queries is not None:
        api, golden = gate_golden(settings, gate)
        with api:
            reports = [run_golden(api, golden, m) for m in EVERY_MODE]
            found = _figures(api, gate.name, reports, offtopic)
        return TrustedRun(reports, [], [found], trust_shortfalls(gate.trust, found))
    dataset = gate_dataset(gate)
    reports, found = _beir(Briefd(beir_index(settings, dataset)), dataset, offtopic)
    subset_reports, figures_all = [], [found]
    if all_sets:
        parent = beir_index(settings, dataset).db
        for size in gate.subsets:
            part = subset(dataset, size)
            if part.queries:
                more, figures_part = _beir(_subset_api(settings, part, parent), part, offtopic)
                subset_reports += more
                figures_all.append(figures_part)
    failures = [line for f in figures_all for line in trust_shortfalls(gate.trust, f)]
    return TrustedRun(reports, subset_reports, figures_all, failures)


def _subset_api(settings: Settings, part: BeirSet, parent: Path) -> Briefd:
    """An API over the subset's index, its vectors taken from the full set's index."""
    api = Briefd(beir_index(settings, part))
    embedder = api.embedder
    if embedder is not None and parent.exists() and not api.settings.db.exists():
        store = Store.open(api.settings.db, create=True)
        try:
            vector_store.copy_from(store, parent, embedder.model_id)
        finally:
            store.close()
    return api


def _beir(
    api: Briefd, dataset: BeirSet, offtopic: tuple[OffTopicQuery, ...]
) -> tuple[list[EvalReport], TrustFigures]:
    with api:
        api.index(progress=indexing(dataset.name))
        reports = [run_beir(api, dataset, m) for m in EVERY_MODE]
        warn_refused(reports)
        return reports, _figures(api, dataset.name, reports, offtopic)


def warn_refused(reports: Sequence[EvalReport]) -> None:
    """Once per set (not per mode): the queries search refused, counted as misses."""
    for line in dict.fromkeys(filter(None, map(refused, reports))):
        errors.print(f"warning: {line}", markup=False, soft_wrap=True)


def _figures(
    api: Briefd, name: str, reports: list[EvalReport], offtopic: tuple[OffTopicQuery, ...]
) -> TrustFigures:
    documents = sum(s.documents for s in api.scopes())
    found = figures(name, documents, reports, offtopic, offtopic_answered(api, offtopic))
    return replace(found, calibration=_calibration(api))


def _calibration(api: Briefd) -> dict[str, object] | None:
    model = api.embedder.model_id if api.embedder is not None else ""
    return api.gate_calibration().get(model)


def set_calibration(settings: Settings, gate: Gate) -> dict[str, object] | None:
    """``--explain`` for a set without trust limits: the gate's knobs fitted to its eval
    index (built by its run, so only opened here)."""
    if gate.queries is not None:
        api, _ = open_golden(settings, gate.queries, None, SOURCE_FROM_FILE)
    else:
        api = Briefd(beir_index(settings, gate_dataset(gate)))
    with api:
        return _calibration(api)


def with_offset(calibration: dict[str, object] | None, offset: float) -> dict[str, object] | None:
    """A set's fitted knobs with the ``search.gate_offset`` its search ran with (the settings'
    or a tuned file's): the threshold in force is the fitted one plus it, as `briefd search
    --explain` gives it ("below this index's threshold +0.016")."""
    if calibration is None:
        return None
    return {**calibration, "gate_offset": offset}


def _threshold(knobs: dict[str, object]) -> str:
    """The fitted threshold, and with an offset the sum that gates: ``0.0106 + gate_offset
    0.0054 = 0.016``."""
    fitted, offset = knobs.get("threshold"), knobs.get("gate_offset") or 0.0
    if not isinstance(fitted, int | float) or not isinstance(offset, int | float) or not offset:
        return str(fitted)
    return (
        f"{fitted} {'+' if offset > 0 else '-'} gate_offset {abs(offset)} = {fitted + offset:.4f}"
    )


def print_calibration(found: list[tuple[str, dict[str, object] | None]]) -> None:
    """``--explain``: the gate's knobs fitted to each index, and the offset laid over them."""
    for name, calibration in found:
        knobs = calibration or {}
        scores = knobs.get("probe_scores", {})
        console.print(
            f"{name}: gate threshold {_threshold(knobs)} (probe scores {scores}; "
            f"{knobs.get('active_probes')}/{knobs.get('probes')} probes active, left out: "
            f"{', '.join(knobs.get('left_out_topics', [])) or 'none'})",  # type: ignore[arg-type]
            markup=False,
        )


def print_trust(found: list[TrustFigures]) -> None:
    if not found:  # no set with trust limits ran: no empty table
        return
    table = Table(title="briefd eval: trust (hybrid)")
    columns = (
        "set",
        "docs",
        "queries",
        "emptied",
        "off-topic en/tr/de",
        "nDCG b/v/h",
        "hybrid − better side",
    )
    for column in columns:
        table.add_column(column, justify="left" if column == "set" else "right")
    for f in found:
        rejected = "/".join(
            f"{f.offtopic_rejected.get(lang, 0.0):.2f}" for lang in ("en", "tr", "de")
        )
        ndcg = "/".join(f"{f.ndcg.get(m, 0.0):.3f}" for m in EVERY_MODE)
        # as the README shows it; a tie (or less than 0.0005) is +0.000, never -0.000
        gap = "" if f.fusion_gap is None else f"{round(-f.fusion_gap, 3) + 0.0:+.3f}"
        table.add_row(
            Text(printable(f.name)),
            str(f.documents),
            str(f.queries),
            f"{f.emptied} ({f.emptied_share:.1%})",
            rejected,
            ndcg,
            gap,
        )
    # a log (CI, a pipe) is 80 columns to rich: cells would be cut to "0.784/0.760…"
    wide = (
        console
        if console.is_terminal
        else Console(width=140, highlight=False, emoji=False, file=console.file)
    )
    wide.print(table)
