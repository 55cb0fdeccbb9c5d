from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.cli.tune import _print
from briefd.embeddings.fake import FakeEmbedder
from briefd.errors import ConfigError, EvalError
from briefd.eval.run import Case
from briefd.eval.tune import SPACE, FoldScores, TuneResult, split, tune
from briefd.retrieval.search import RANKING_VERSION
from briefd.settings import Settings, apply_tuned
from tests.conftest import WriteFiles


def test_split_is_deterministic_and_proportional() -> None:
    cases: list[Case] = [(f"q{i}", "x", "keyword", {}) for i in range(20)]
    tune_fold, holdout = split(cases)
    assert len(holdout) == 6 and len(tune_fold) == 14
    assert split(list(reversed(cases))) == (tune_fold, holdout)
    assert not {c[0] for c in tune_fold} & {c[0] for c in holdout}


def test_tune_reports_both_folds_and_writes_a_usable_file(
    settings: Settings, write_files: WriteFiles, tmp_path: Path
) -> None:
    docs = {
        f"domain/d{i}.md": f"# Doc {i}\n\n## Topic {i}\n\nword{i} alpha beta {i}\n"
        for i in range(12)
    }
    write_files(docs)
    cases: list[Case] = [
        (f"q{i}", f"word{i} alpha", "keyword", {(f"domain/d{i}.md", f"Topic {i}"): 1.0})
        for i in range(12)
    ]
    with Briefd(settings, embedder=FakeEmbedder()) as api:
        api.index()
        result = tune(api, cases, lambda h: (h.doc_path, h.heading), "mrr", trials=5, seed=3)
        again = tune(api, cases, lambda h: (h.doc_path, h.heading), "mrr", trials=5, seed=3)
    assert result == again  # same seed, same trials, same answer
    assert (result.tune_queries, result.holdout_queries) == (8, 4)
    assert result.best_tune.mrr >= result.baseline_tune.mrr
    assert set(result.knobs) <= set(SPACE)
    path = tmp_path / "best.json"
    config = result.as_config(str(tmp_path / "golden.yaml"))
    path.write_text(json.dumps(config))
    # the file says what it was tuned on and for: found later, it can be traced and re-run
    record = {k: config["tuned"][k] for k in ("set", "mode", "ranking_version", "objective")}
    assert record == {
        "set": str(tmp_path / "golden.yaml"),
        "mode": "hybrid",
        "ranking_version": RANKING_VERSION,
        "objective": "mrr",
    }
    tuned = apply_tuned(settings, path)
    for key, value in result.knobs.items():
        assert getattr(tuned.search, key.split(".")[1]) == value


def test_one_query_is_refused_rather_than_held_out_against_itself(
    settings: Settings, write_files: WriteFiles
) -> None:
    """V3: a set of one query was tuned on it and "held out" on the same query, so the
    holdout row reported the tuned gain as one that holds."""
    write_files({"domain/d.md": "# Doc\n\n## Topic\n\nword alpha beta\n"})
    cases: list[Case] = [("q1", "word alpha", "keyword", {("domain/d.md", "Topic"): 1.0})]
    with Briefd(settings, embedder=FakeEmbedder()) as api:
        api.index()
        with pytest.raises(EvalError) as caught:
            tune(api, cases, lambda h: (h.doc_path, h.heading), "mrr", trials=2)
    assert str(caught.value) == (
        "tuning needs 2 queries or more, got 1: 30% are held out to show whether a gain holds "
        "on queries it was not tuned on; add queries to the set"
    )


def test_tuned_file_errors_name_the_file(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "best.json"
    path.write_text('{"search": {"vector_weigth": 0.5}}')
    with pytest.raises(
        ConfigError,
        match=r"best.json: unknown key 'search.vector_weigth' \(did you mean 'search.vector_weight'\?\)",
    ):
        apply_tuned(settings, path)
    path.write_text('{"index": {}}')
    with pytest.raises(ConfigError, match="a tuned file holds 'search' and 'tuned', not 'index'"):
        apply_tuned(settings, path)


def test_a_gain_that_does_not_hold_out_is_said_beside_the_table(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """V3: a tune whose best knobs lost on the holdout fold (hit_rate 1.0000 → 0.9286 on the
    golden set, 5 trials) printed only the table and "use it with `briefd search|bundle|serve
    --config`", recommending settings that score worse on queries they were not tuned on."""
    fold = FoldScores(1.0, 0.85, 0.88)
    result = TuneResult(
        "hit_rate",
        5,
        0,
        {"search.candidates": 30},
        fold,
        fold,
        fold,
        FoldScores(0.9286, 0.88, 0.89),
        33,
        14,
    )
    _print(result, tmp_path / "best.json")
    said = capsys.readouterr().out
    assert (
        "The gain does not hold out: holdout hit_rate fell from 1.0000 to 0.9286, so the tuned "
        "knobs fit the tune fold's queries rather than queries in general; add queries to the "
        "set and tune again, or keep the current settings."
    ) in " ".join(said.split())
    _print(replace(result, best_holdout=fold), tmp_path / "best.json")  # held: nothing said
    assert "does not hold out" not in capsys.readouterr().out
