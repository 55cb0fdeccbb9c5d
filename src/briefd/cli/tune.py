"""``briefd tune``: random search of recall-time knobs, written as a file search/eval accept."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import typer
from rich.table import Table
from typer._click.exceptions import BadParameter, UsageError  # typer's own click (pinned)

from briefd.api import Briefd
from briefd.cli.eval_cmd import EMBEDDINGS_OFF
from briefd.cli.eval_trust import indexing
from briefd.cli.one_source import OneSource
from briefd.cli.output import completes, console, errors, print_json, reported_errors
from briefd.cli.project_files import stage, through_link
from briefd.cli.tuned import stale
from briefd.errors import ConfigError, EvalError
from briefd.eval.run import Case, UnitOf, beir_cases, golden_cases, open_beir, open_golden
from briefd.eval.trust import OffTopicQuery
from briefd.eval.tune import (
    OFFTOPIC_FILE,
    FoldScores,
    TuneResult,
    default_offtopic,
    tune,
    tune_fold_scores,
    vars_of,
)
from briefd.settings import Settings
from briefd.settings.raw import read_file


def register(app: typer.Typer) -> None:
    app.command("tune", cls=OneSource)(tune_command)


def tune_command(
    ctx: typer.Context,
    queries: Path | None = typer.Option(None, "--queries", help="Golden query YAML file."),
    source: Path | None = typer.Option(None, "--source", help="Knowledge dir for --queries."),
    dataset: Path | None = typer.Option(None, "--dataset", help="BEIR dataset folder."),
    split: str | None = typer.Option(
        None,
        "--split",
        help="Tune on another split's labels of --dataset (e.g. train); eval --dataset then "
        "scores its test split, which the tuning never saw.",
    ),
    objective: str = typer.Option(
        "hit_rate",
        "--objective",
        help="hit_rate (the share of queries with an expected section in the top 5) or mrr "
        "(MRR@10).",
        autocompletion=completes(("hit_rate", "mrr")),
    ),
    trials: int = typer.Option(50, "--trials", min=1, help="Random configurations to try."),
    seed: int = typer.Option(0, "--seed", help="Random seed (same seed, same trials)."),
    output: Path = typer.Option(Path("best.json"), "--output", help="Where to write the result."),
    json_output: bool = typer.Option(
        False, "--json", help="Print the written file (settings and fold scores) as JSON."
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="Replace an earlier result at --output even when no trial beat the current settings "
        "or its tuned values score at least as well.",
    ),
) -> None:
    """Tune fusion weights, field weights, candidate depth and gate margins on an eval set
    (hybrid search; nothing is re-embedded), reporting a tune fold and a holdout fold."""
    if objective not in ("hit_rate", "mrr"):  # usage errors: exit 2, like click's own
        raise BadParameter(f"'{objective}'; use hit_rate or mrr", param_hint="'--objective'")
    if (queries is None) == (dataset is None):
        raise UsageError("pass exactly one of --queries FILE or --dataset DIR", ctx)
    if source is not None and queries is None:
        raise UsageError("--source is the knowledge of --queries; a --dataset holds its own", ctx)
    if split is not None and dataset is None:
        raise UsageError("--split names the labels of a --dataset; give the --dataset", ctx)
    with reported_errors():
        _check_output(output)
        settings = ctx.obj.settings()
        api, cases, unit, where = _open_set(settings, queries, source, dataset, split)
        if api.embedder is None:
            raise EvalError(f"tuning needs embeddings (hybrid search); {EMBEDDINGS_OFF}")

        def progress(trial: int, total: int, best: float) -> None:
            if errors.is_terminal:
                errors.print(f"trial {trial}/{total}: best {objective} {best:.4f}", end="\r")

        offtopic = _offtopic()
        replace = force or _outdated(output, settings)
        with api:
            result = tune(api, cases, unit, objective, trials, seed, progress, where, offtopic)  # type: ignore[arg-type]
            earlier = None if replace else _earlier(api, cases, unit, where, output)
        tuned_on = str((queries or dataset or output).resolve())
        embeddings = settings.embeddings
        knowledge = str(source.resolve()) if source is not None else None
        config = result.as_config(
            tuned_on, embeddings.model, embeddings.window_words, knowledge, split
        )
        kept = earlier is not None and bool(result.knobs) and result.beaten_by(earlier)
        written = _write(output, config, replace, kept)
    if json_output:
        scored = {"earlier": vars_of(earlier, result.tune_queries)} if earlier else {}
        print_json({**config, "output": str(output), "written": written, **scored})
    else:
        the_set = _the_set(queries, source, dataset)
        _print(result, output, written, the_set, _briefd(ctx), split)


def _open_set(
    settings: Settings,
    queries: Path | None,
    source: Path | None,
    dataset: Path | None,
    split: str | None = None,
) -> tuple[Briefd, list[Case], UnitOf, str | None]:
    """The API over the set's knowledge, its cases, their unit, and where its queries live
    (the prefix of a broken query's error; None for a public set, whose refused queries are
    misses, as in eval: :func:`briefd.eval.run.run_beir`)."""
    if queries is not None:
        api, golden = open_golden(settings, queries, source, progress=indexing(queries.name))
        cases, unit = golden_cases(api, golden)  # a broken query is an error, as in eval
        return api, cases, unit, f"{queries}: "
    assert dataset is not None
    api, beir = open_beir(settings, dataset, split, indexing(dataset.name))
    cases, unit = beir_cases(beir)
    return api, cases, unit, None


def _the_set(queries: Path | None, source: Path | None, dataset: Path | None) -> str:
    """The options that name the set tuned on, as `briefd eval` takes them: without them eval
    runs briefd's own golden sets (outside its repository, nothing: a usage error)."""
    given = [("--queries", queries), ("--source", source), ("--dataset", dataset)]
    return " ".join(f"{option} {shlex.quote(str(path))}" for option, path in given if path)


def _check_output(output: Path) -> None:
    """Fail before the trials (minutes of work) when the result could not be written."""
    folder = output.parent
    if output.is_dir():
        raise EvalError(f"--output {output} is a directory; name a file, e.g. {output}/best.json")
    if not folder.is_dir():
        state = "is a file, not a folder" if folder.exists() else "does not exist"
        raise EvalError(f"--output: the folder {folder} {state}; create it or pick another")
    if not os.access(folder, os.W_OK) or (output.exists() and not os.access(output, os.W_OK)):
        raise EvalError(f"--output: {output} is not writable; pass --output FILE")
    if output.is_file() and not _replaceable(output):
        raise EvalError(
            f"--output {output} holds something other than a result of `briefd tune` (a golden "
            "set, settings?), which it would replace; name a new file, e.g. --output best.json"
        )


def _earlier(
    api: Briefd, cases: list[Case], unit: UnitOf, where: str | None, output: Path
) -> FoldScores | None:
    """What the tuned values of an earlier result at ``output`` score on this run's tune fold
    (None: it holds none, or knobs these settings do not take)."""
    if not _tuned_values(output):
        return None
    search = read_file(output)["search"]
    if not isinstance(search, dict):  # a hand-edited file: replaced, as any other
        return None
    knobs = {f"search.{key}": value for key, value in search.items()}
    try:
        return tune_fold_scores(api, cases, unit, knobs, where)
    except ConfigError:
        return None


def _write(output: Path, config: dict[str, object], force: bool, kept: bool = False) -> bool:
    """Write the result, unless ``output`` holds an earlier result's tuned values and this
    one found nothing (``search: {}``, which would erase them) or, ``kept``, values that score
    no better on the tune fold than the earlier ones: said on stderr; ``--force`` writes."""
    if kept and not force:
        errors.print(
            f"kept {output}: the tuned values it holds from an earlier run score at least as "
            "well on this run's tune fold as this run's best, which would replace them; pass "
            "--force to replace them",
            markup=False,
            soft_wrap=True,
        )
        return False
    if not config["search"] and not force and _tuned_values(output):
        errors.print(
            f"kept {output}: no trial beat the current settings, and it holds the tuned values "
            "of an earlier run, which this empty result would erase; pass --force to replace it",
            markup=False,
            soft_wrap=True,
        )
        return False
    target = through_link(output)  # a link to the file stays a link
    try:  # beside it first: a full disk or a kill mid-write leaves the earlier file whole
        staged = stage(target, json.dumps(config, indent=2) + "\n")
        try:
            staged.replace(target)
        except OSError:
            staged.unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise EvalError(f"cannot write {output}: {exc.strerror}; pass --output FILE") from exc
    return True


def _outdated(output: Path, settings: Settings) -> bool:
    """``output`` is an earlier result tuned for another ranking, embedding model or section
    windows than ``settings`` run: every command given it warns to tune again into it, so
    this run replaces it, whatever it scores (kept, the warning never went away)."""
    return _tuned_values(output) and bool(stale(output, settings))


def _tuned_values(output: Path) -> bool:
    """``output`` is an earlier result of ``briefd tune`` with knobs in its ``search``."""
    if not output.is_file():
        return False
    try:
        data = read_file(output)
    except ConfigError:
        return False
    return bool(data) and bool(data.get("search"))


def _offtopic() -> tuple[OffTopicQuery, ...]:
    """briefd's off-topic questions, which keep a trial from loosening the relevance gate (the
    eval set's real questions never show what a looser gate lets through); none when this
    installation lacks the file, said on stderr."""
    questions = default_offtopic()
    if not questions:
        errors.print(
            f"warning: briefd's {OFFTOPIC_FILE} is missing from this installation, so trials "
            "that loosen the relevance gate are not checked against off-topic questions",
            markup=False,
            soft_wrap=True,
        )
    return questions


def _replaceable(output: Path) -> bool:
    """An existing ``--output`` may be replaced when it is empty or an earlier tune's result."""
    try:
        data = read_file(output)
    except ConfigError:
        return False
    return not data or ("tuned" in data and set(data) <= {"search", "tuned"})


def _briefd(ctx: typer.Context) -> str:
    """``briefd`` with the settings file this run was given (``--config`` before the command):
    without it, the commands suggested after a run read other settings (another layout,
    model or gate) than the ones the file was tuned with."""
    config = ctx.obj.config
    return "briefd" if config is None else f"briefd --config {shlex.quote(str(config))}"


def _print(
    result: TuneResult,
    output: Path,
    written: bool = True,
    the_set: str = "",
    briefd: str = "briefd",
    split: str | None = None,
) -> None:
    table = Table(title=f"briefd tune ({result.objective}, {result.trials} trials)")
    for column in ("fold", "queries", "", "hit_rate", "mrr@10", "ndcg@10"):
        table.add_column(column, justify="left" if column in ("fold", "") else "right")

    def row(fold: str, n: int, label: str, s: FoldScores) -> None:
        table.add_row(fold, str(n), label, f"{s.hit_rate:.4f}", f"{s.mrr:.4f}", f"{s.ndcg:.4f}")

    row("tune", result.tune_queries, "baseline", result.baseline_tune)
    row("tune", result.tune_queries, "best", result.best_tune)
    row("holdout", result.holdout_queries, "baseline", result.baseline_holdout)
    row("holdout", result.holdout_queries, "best", result.best_holdout)
    console.print(table)
    _say_offtopic(result)
    console.print(
        "hit_rate: the share of queries with an expected section in the top 5; mrr@10 and "
        "ndcg@10 as `briefd eval` reports them.",
        markup=False,
        soft_wrap=True,
    )
    tuned = shlex.quote(str(output))
    eval_args = f"{the_set} " if the_set else ""
    unseen = f" on its test split, which tuning on {split} never saw" if split else ""
    compare = f"compare with `{briefd} eval {eval_args}--mode hybrid --config {tuned}`{unseen}"
    if not result.knobs:
        if not written:  # an earlier result's values kept (said on stderr)
            console.print(
                f"No trial beat the current settings; {output} is left as it was.", markup=False
            )
            return
        console.print(
            f"No trial beat the current settings: {output} holds no tuned value, so the current "
            f"settings are the ones to keep (--config with it changes nothing; {compare})",
            markup=False,
            soft_wrap=True,
        )
        return
    console.print(f"tuned: {_values(result.knobs)}", markup=False, soft_wrap=True)
    _say_overfit(result)
    if not written:  # the earlier result's values do as well (said on stderr)
        console.print(
            f"{output} is left as it was: the values it holds from an earlier run score at "
            "least as well on the tune fold.",
            markup=False,
        )
        return
    console.print(
        f"wrote {output} (tuned for hybrid search); use it with `{briefd} search|bundle|serve "
        f"--config {tuned}`, and {compare}",
        markup=False,
        soft_wrap=True,
    )


def _values(knobs: dict[str, float | int]) -> str:
    """The tuned values as settings name them: ``search.vector_weight 0.55, …``."""
    return ", ".join(f"{key} {value:g}" for key, value in sorted(knobs.items()))


def _say_overfit(result: TuneResult) -> None:
    """Say so when the tuned knobs score worse than the current settings on the holdout fold:
    they fit the tune fold's queries, and the file recommended below would lose elsewhere."""
    key = result.objective
    before, after = (
        result.objective_of(result.baseline_holdout),
        result.objective_of(result.best_holdout),
    )
    if not result.holds_out:
        console.print(
            f"The gain does not hold out: holdout {key} fell from {before:.4f} to {after:.4f}, "
            "so the tuned knobs fit the tune fold's queries rather than queries in general; "
            "add queries to the set and tune again, or keep the current settings.",
            markup=False,
        )


def _say_offtopic(result: TuneResult) -> None:
    """How many of briefd's off-topic questions the current and the tuned settings answer, and
    the trials refused for answering more of them (a looser gate scores better on real
    questions alone, and would have been written as a gain)."""
    off = result.offtopic
    if off is None:
        return
    console.print(
        f"off-topic questions answered (of {off.questions}, none about your knowledge): "
        f"baseline {off.answered_baseline}, best {off.answered}",
        markup=False,
    )
    if off.refused_trials:
        trials = "trial" if off.refused_trials == 1 else "trials"
        console.print(
            f"{off.refused_trials} {trials} scored higher on the tune fold but answered more "
            f"off-topic questions than the current settings (a looser relevance gate), so "
            f"{'it was' if off.refused_trials == 1 else 'they were'} not taken.",
            markup=False,
        )
