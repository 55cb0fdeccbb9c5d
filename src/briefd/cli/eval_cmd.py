"""``briefd eval``: golden sets and BEIR datasets through the real search; the CI gate."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Literal

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text
from typer._click.core import ParameterSource  # typer's own click (pinned)
from typer._click.exceptions import BadParameter, UsageError

from briefd.api import Briefd
from briefd.cli.eval_trust import (
    OFFTOPIC_FILE,
    gate_dataset,
    gate_golden,
    indexing,
    print_calibration,
    print_trust,
    run_trusted,
    set_calibration,
    warn_refused,
    with_offset,
)
from briefd.cli.one_source import OneSource
from briefd.cli.output import (
    completes,
    console,
    errors,
    fail,
    print_json,
    printable,
    reported_errors,
)
from briefd.cli.tuned import idle_knobs, tuned_settings
from briefd.errors import EvalError
from briefd.eval.datasets import BeirSet, all_of
from briefd.eval.metrics import METRICS
from briefd.eval.recall import (
    NOISE_FILE,
    RecallReport,
    default_noise_file,
    figures,
    load_noise,
    run_recall,
    shipped,
)
from briefd.eval.run import (
    DEPTH,
    EvalReport,
    QueryOutcome,
    beir_index,
    for_modes,
    open_beir,
    open_golden,
    outside_defaults,
    run_beir,
    run_golden,
)
from briefd.eval.thresholds import MODES, Gate, load_gates, recall_shortfalls, shortfalls
from briefd.eval.trust import TrustFigures, load_offtopic
from briefd.model import SearchMode
from briefd.settings import Settings

ALL_MODES: tuple[SearchMode, ...] = ("bm25", "vector", "hybrid")
DEFAULT_GOLDEN = ("eval/golden/queries.yaml", "eval/golden/queries-tr.yaml")
DEFAULT_THRESHOLDS = "eval/thresholds.yaml"
EMBEDDINGS_OFF = (
    "they are off in the settings: set embeddings.enabled: true (and an embeddings.adapter "
    "other than none) in briefd.yaml, or BRIEFD_EMBEDDINGS__ENABLED=true"
)
# Outside a clone of briefd's repository (an installed wheel) its golden sets are not there
NO_DEFAULT_SETS = (
    "no query set given; pass --queries FILE or --dataset DIR (without them, eval runs "
    f"{' and '.join(DEFAULT_GOLDEN)} from the working directory, as in the root of a clone of "
    "briefd's repository; the installed package does not carry them)"
)
NO_DEFAULT_GATE = (
    f"--all-sets alone checks {DEFAULT_THRESHOLDS}, which is not in the working directory (it is "
    "in the root of a clone of briefd's repository; the installed package does not carry it); "
    "pass --check FILE with a thresholds file of your own, or run it there"
)
RECALL_MODES: tuple[Literal["bm25", "hybrid"], ...] = ("bm25", "hybrid")


def register(app: typer.Typer) -> None:
    app.command("eval", cls=OneSource)(eval_command)


def eval_command(
    ctx: typer.Context,
    queries: list[Path] | None = typer.Option(None, "--queries", help="Golden query YAML file(s)."),
    source: Path | None = typer.Option(None, "--source", help="Knowledge dir for --queries."),
    dataset: list[Path] | None = typer.Option(None, "--dataset", help="BEIR dataset folder(s)."),
    split: str | None = typer.Option(
        None,
        "--split",
        help="Score --dataset with another split's labels (qrels.NAME.tsv or qrels/NAME.tsv; "
        "queries.NAME.jsonl when there is one), e.g. train: questions no change was tuned on.",
    ),
    mode: str = typer.Option(
        "bm25",
        "--mode",
        help="bm25, vector, hybrid or all.",
        autocompletion=completes((*MODES, "all")),
    ),
    check: Path | None = typer.Option(
        None, "--check", help="Thresholds file: run its sets and fail below any minimum."
    ),
    misses: bool = typer.Option(
        False, "--misses", help="List queries whose answer is not in the top 5."
    ),
    all_sets: bool = typer.Option(
        False,
        "--all-sets",
        help="Check every set of the thresholds file (default eval/thresholds.yaml), slow sets "
        "and subsets included.",
    ),
    tuned: Path | None = typer.Option(
        None, "--config", help="Tuned recall settings from `briefd tune` laid over the settings."
    ),
    json_output: bool = typer.Option(False, "--json", help="Print reports as JSON."),
    explain: bool = typer.Option(
        False, "--explain", help="With --check: also the relevance gate's calibration per index."
    ),
) -> None:
    """Measure retrieval: Recall@5, Recall@10, MRR@10 and nDCG@10, overall and per query type."""
    _refuse_ignored(ctx, check is not None or all_sets)
    if source is not None and dataset and not queries:
        raise UsageError("--source is the knowledge of --queries; a --dataset holds its own", ctx)
    if split is not None and not dataset and check is None and not all_sets:
        raise UsageError("--split names the labels of a --dataset; give the --dataset", ctx)
    with reported_errors():
        settings = tuned_settings(ctx.obj.settings(), tuned, ctx.info_name)
        modes = _modes(mode, settings)
        if mode == "all" and modes == ("bm25",):  # as --mode vector says, but not an error
            errors.print("--mode all: bm25 only (embeddings are off in the settings)", markup=False)
        if check is None and all_sets:
            check = Path(DEFAULT_THRESHOLDS)
            if not check.is_file():
                raise UsageError(NO_DEFAULT_GATE, ctx)
        _say_idle(tuned, settings, modes, check is not None)
        if check is not None:
            _check(settings, check, json_output, all_sets, explain)
            return
        reports: list[EvalReport] = []
        recall: list[RecallReport] = []
        golden = list(queries or [])
        if not golden and not dataset:
            golden = [Path(p) for p in DEFAULT_GOLDEN if Path(p).is_file()]
            if not golden:
                raise UsageError(NO_DEFAULT_SETS, ctx)
        for path in golden:
            reports += _golden_reports(settings, path, source, modes, recall)
        for folder in dataset or []:
            reports += _beir_reports(settings, folder, modes, split)
    if json_output:  # as --check prints it: the reports, and what prompt-time recall injects
        if misses:
            errors.print(MISSES_IN_JSON, markup=False, soft_wrap=True)
        print_json({"reports": reports, "recall": recall})
        return
    print_reports(reports)
    print_recall(recall)
    if misses:
        _print_misses(reports)
        _print_recall_losses(recall)


MISSES_IN_JSON = (
    "note: --misses lists nothing with --json, which holds every query's outcome: a miss is "
    "an outcome in reports[].outcomes whose recall@5 is below 1, and recall[].losses says "
    "why recall did not inject an expected section"
)
GATE_ONLY = ("explain",)  # what --check (and --all-sets) use
# the sets' own say instead
NOT_WITH_GATE = ("queries", "dataset", "split", "source", "mode", "misses")


def _refuse_ignored(ctx: typer.Context, gate: bool) -> None:
    """An option the run would ignore is a usage error: the thresholds file names the sets
    and modes of ``--check``, and ``--explain`` explains only the gate."""
    given = [
        name
        for name in (NOT_WITH_GATE if gate else GATE_ONLY)
        if ctx.get_parameter_source(name) not in (None, ParameterSource.DEFAULT)
    ]
    if given and gate:
        raise UsageError(
            f"--{given[0]} does nothing with --check or --all-sets, which run the sets and "
            "modes of the thresholds file; drop one of them",
            ctx,
        )
    if given:
        raise UsageError("--explain goes with --check (the gate's calibration per set)", ctx)


def _modes(mode: str, settings: Settings) -> tuple[SearchMode, ...]:
    """``all`` is every mode the configuration can run: bm25 alone when embeddings are off."""
    embeddings = settings.embeddings.enabled and settings.embeddings.adapter != "none"
    if mode == "all":
        return ALL_MODES if embeddings else ("bm25",)
    if mode not in MODES:
        raise BadParameter(f"'{mode}'; use bm25, vector, hybrid or all", param_hint="'--mode'")
    if mode != "bm25" and not embeddings:
        raise EvalError(f"--mode {mode} needs embeddings; {EMBEDDINGS_OFF}, or use --mode bm25")
    return (mode,)  # type: ignore[return-value]


def _say_idle(
    tuned: Path | None, settings: Settings, modes: tuple[SearchMode, ...], gate: bool
) -> None:
    """Warn when the tuned file's hybrid-only knobs act in none of the modes this eval runs."""
    if tuned is None:
        return
    embeddings = settings.embeddings.enabled and settings.embeddings.adapter != "none"
    ran = _modes("all", settings) if gate else modes  # --check: the modes embeddings allow
    warning = idle_knobs(tuned, ran, embeddings, gate)
    if warning is not None:
        errors.print(f"warning: {warning}", markup=False, soft_wrap=True)


def _golden_reports(
    settings: Settings,
    path: Path,
    source: Path | None,
    modes: tuple[SearchMode, ...],
    recall: list[RecallReport] | None = None,
) -> list[EvalReport]:
    """Search reports per mode; with ``recall``, also what prompt-time recall injects (bm25
    and hybrid modes, when the recall-noise file is there)."""
    progress = indexing(path.name)
    api, golden = open_golden(for_modes(settings, modes), path, source, progress=progress)
    noise = default_noise_file()
    with api:
        reports = [run_golden(api, golden, m) for m in modes]  # a bad query is named here
        note = outside_defaults(api, golden)
        if note is not None:
            errors.print(f"note: {note}", markup=False, soft_wrap=True)
        if recall is not None and noise is not None:
            prompts = load_noise(noise)
            recall += [run_recall(api, golden, prompts, m) for m in modes if m != "vector"]
        return reports


def _recall_check(
    settings: Settings, gate: Gate, noise: Path, available: tuple[SearchMode, ...]
) -> tuple[list[RecallReport], list[str]]:
    """Prompt-time recall through a golden set's index, against the set's ``recall:`` limits."""
    assert gate.queries is not None
    modes = tuple(m for m in RECALL_MODES if m in available and m in gate.recall)
    if not modes:
        return [], []
    api, golden = gate_golden(settings, gate)
    with api:
        found = [run_recall(api, golden, load_noise(noise), m) for m in modes]
    failures = [line for r in found for line in recall_shortfalls(gate, r.mode, figures(r))]
    return found, failures


def _beir_reports(
    settings: Settings, folder: Path, modes: tuple[SearchMode, ...], split: str | None = None
) -> list[EvalReport]:
    api, dataset = open_beir(for_modes(settings, modes), folder, split, indexing(folder.name))
    with api:
        reports = [run_beir(api, dataset, m) for m in modes]
    warn_refused(reports)
    return reports


def _check(
    settings: Settings, path: Path, json_output: bool, all_sets: bool, explain: bool = False
) -> None:
    failures: list[str] = []
    reports: list[EvalReport] = []
    trust: list[TrustFigures] = []
    recall: list[RecallReport] = []
    offtopic = None
    explained: list[tuple[str, dict[str, object] | None]] = []  # set → gate knobs (--explain)
    say = errors if json_output else console  # --json: stdout holds the JSON alone
    offset = settings.search.gate_offset  # the settings' or --config's: moves every threshold
    gates = load_gates(path)
    _prompt_files(path, gates, settings, all_sets)
    for gate in gates:
        # public data absent here is skipped; a file in its place is a mistake, said below
        if gate.dataset is not None and not gate.dataset.exists():
            say.print(f"skipped {gate.name}: {gate.dataset} not found", markup=False)
            continue
        settings_for_set, available = _available(settings, gate, all_sets, say)
        if gate.trust is not None and "hybrid" in available:
            offtopic = offtopic or load_offtopic(_beside(path, OFFTOPIC_FILE, gate, "trust"))
            run = run_trusted(settings, gate, offtopic, all_sets)
            found, trust, failures = run.reports, trust + run.figures, failures + run.failures
            reports += run.subset_reports
            explained += [(f.name, with_offset(f.calibration, offset)) for f in run.figures]
        else:
            modes = tuple(m for m in gate.minimums if m in available)
            if gate.queries is not None:
                api, golden = gate_golden(settings_for_set, gate)
                with api:
                    found = [run_golden(api, golden, m) for m in modes]
            else:
                found = _dataset_reports(settings_for_set, gate_dataset(gate), modes)
            if explain and "hybrid" in modes:  # the gate acts in hybrid search only
                fitted = set_calibration(settings_for_set, gate)
                explained.append((gate.name, with_offset(fitted, offset)))
        for report in found:
            failures += shortfalls(gate, report.mode, report.overall)
        reports += found
        if gate.queries is not None and gate.recall:
            limited, missed = _recall_check(
                settings_for_set, gate, _beside(path, NOISE_FILE.name, gate, "recall"), available
            )
            recall, failures = recall + limited, failures + missed
    if json_output:
        payload: dict[str, object] = {"reports": reports, "trust": trust, "recall": recall}
        payload["failures"] = failures
        if explain:  # the gate's knobs per set, as the text lines give them
            payload["calibration"] = dict(explained)
        print_json(payload)
    else:
        print_reports(reports)
        print_trust(trust)
        print_recall(recall)
        if explain:
            print_calibration(explained)
    if failures:
        fail("below the eval gate: " + "; ".join(failures))
    if not reports and not recall:  # every set skipped, or none listed: it checked nothing
        fail(f"no set of {path} was checked; list a set whose queries or dataset exist")
    say.print("eval gate passed", markup=False)


def _prompt_files(path: Path, gates: list[Gate], settings: Settings, all_sets: bool) -> None:
    """Every prompt file the sets' limits need, checked before any set runs: a missing one
    stopped the run after the sets before it (minutes of indexing), then the next run at the
    next missing file."""
    hybrid = "hybrid" in _modes("all", settings)
    needed: dict[str, tuple[Gate, str]] = {}
    for gate in gates:
        if gate.dataset is not None and not gate.dataset.exists():
            continue  # skipped, as said when its turn comes
        if gate.trust is not None and hybrid and not (gate.slow and not all_sets):
            needed.setdefault(OFFTOPIC_FILE, (gate, "trust"))
        if gate.queries is not None and gate.recall:
            needed.setdefault(NOISE_FILE.name, (gate, "recall"))
    problems = []
    for name, (gate, limits) in needed.items():
        try:
            _beside(path, name, gate, limits)
        except EvalError as exc:
            problems.append(str(exc))
    if problems:
        raise EvalError(all_of(problems))


def _beside(thresholds: Path, name: str, gate: Gate, limits: str) -> Path:
    """The prompts a set's ``trust`` or ``recall`` limits are measured with, read from the
    thresholds file's folder; missing, the error says which set needs them and what to do."""
    found = thresholds.parent / name
    if not found.is_file():
        own = shipped(name)  # a wheel's copy: an installed briefd has no eval/ folder to copy
        copy = f"briefd's own ({own})" if own is not None else f"briefd's eval/{name}"
        raise EvalError(
            f"{thresholds}: set '{gate.name}' has {limits} limits, measured on the prompts of "
            f"{found} beside it, which does not exist; copy {copy} there or drop the set's "
            f"{limits}: limits"
        )
    return found


def _available(
    settings: Settings, gate: Gate, all_sets: bool, say: Console
) -> tuple[Settings, tuple[SearchMode, ...]]:
    """The settings and modes a gate runs with: a slow set is BM25 only without --all-sets, and
    every set is with embeddings off (said, so a pass does not read as its limits all met)."""
    if gate.slow and not all_sets:
        say.print(f"{gate.name}: bm25 only (slow set; --all-sets runs the rest)", markup=False)
        return replace(settings, embeddings=replace(settings.embeddings, enabled=False)), ("bm25",)
    modes = _modes("all", settings)
    unchecked = [m for m in MODES if m not in modes and (m in gate.minimums or m in gate.recall)]
    unchecked += ["trust"] if gate.trust is not None and "hybrid" not in modes else []
    if unchecked:
        say.print(
            f"{gate.name}: bm25 only (embeddings are off in the settings): its "
            f"{', '.join(unchecked)} limits are not checked",
            markup=False,
        )
    return settings, modes


def _dataset_reports(
    settings: Settings, dataset: BeirSet, modes: tuple[SearchMode, ...]
) -> list[EvalReport]:
    with Briefd(beir_index(settings, dataset)) as api:
        api.index(progress=indexing(dataset.name))
        reports = [run_beir(api, dataset, m) for m in modes]
    warn_refused(reports)
    return reports


def print_reports(reports: list[EvalReport]) -> None:
    if not reports:  # a gate of recall limits alone, or none checked: no empty table
        return
    table = Table(title="briefd eval")
    for column in ("set", "mode", "queries", *METRICS):
        table.add_column(column, justify="left" if column in ("set", "mode") else "right")
    for report in reports:
        table.add_row(
            Text(printable(f"{report.name} ({report.level})")),  # a set's name: never markup
            report.mode,
            str(report.queries),
            *(f"{report.overall[m]:.4f}" for m in METRICS),
        )
        for qtype, metrics in report.by_type.items():
            count = sum(1 for o in report.outcomes if o.type == qtype)
            table.add_row(f"  {qtype}", "", str(count), *(f"{metrics[m]:.4f}" for m in METRICS))
    console.print(table)


def print_recall(reports: list[RecallReport]) -> None:
    """Prompt-time recall (I8): Recall@5 of the golden queries through the recall engine, and
    what the generic prompts of eval/recall-noise.yaml inject."""
    if not reports:
        return
    table = Table(title="briefd recall (prompt-time hook)")
    columns = (
        "set",
        "mode",
        "recall@5",
        "shown@5",
        "at default budget",
        "noise injecting",
        "noise max tokens",
    )
    for column in columns:
        table.add_column(column, justify="left" if column in ("set", "mode") else "right")
    for r in reports:
        table.add_row(
            Text(printable(r.name)),
            r.mode,
            f"{r.recall_at_5:.4f}",
            f"{r.shown_at_5:.4f}",
            f"{r.recall_at_5_default_budget:.4f}",
            f"{r.noise_injected}/{r.noise_prompts} ({r.noise_share:.1%})",
            str(r.noise_tokens_max),
        )
    console.print(table)


def _print_misses(reports: list[EvalReport]) -> None:
    for report in reports:
        for outcome in report.outcomes:
            if outcome.metrics["recall@5"] < 1.0:
                console.print(
                    f"{report.name}/{report.mode} {outcome.id} [{outcome.type}] {outcome.query}\n"
                    f"    expected: {'; '.join(_ranked(outcome))}\n"
                    f"    top 5:    {'; '.join(outcome.top) or '(nothing)'}"
                    + (f"\n    refused:  {outcome.refused}" if outcome.refused else ""),
                    markup=False,
                )


def _ranked(outcome: QueryOutcome) -> list[str]:
    """Each expected section with where it ranked: "domain/a.md # Window (ranked 8)"."""
    ranks = outcome.ranks if len(outcome.ranks) == len(outcome.expected) else ()
    if not ranks or outcome.refused:  # not searched: nothing ranked
        return list(outcome.expected)
    return [
        f"{label} (ranked {rank})" if rank else f"{label} (not among the top {DEPTH} hits)"
        for label, rank in zip(outcome.expected, ranks, strict=True)
    ]


def _print_recall_losses(reports: list[RecallReport]) -> None:
    """Golden queries whose expected section recall did not print, and why."""
    for report in reports:
        for lost in report.losses:
            z = "" if lost.specificity is None else f", specificity {lost.specificity:.2f}"
            lines = [f"{report.name}/recall {report.mode} {lost.id} ({lost.confidence}{z})"]
            lines += [f"    {lost.query}"]
            lines += [f"    {unit}: {cause}" for unit, cause in lost.causes]
            console.print("\n".join(lines), markup=False)
