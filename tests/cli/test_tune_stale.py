"""A tuned file gone stale (another ranking, model or windows) as a team meets it: the warning
every command gives names a command that, run as written, makes the warning go away."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from briefd.retrieval.search import RANKING_VERSION
from tests.cli.test_cli import briefd
from tests.cli.test_operator_cli import bag_of_words, ollama_env, tune_then_compare, two_documents
from tests.embeddings.fakehttp import fake_server
from tests.eval.test_eval import _split_set


def _stale_file(tmp_path: Path) -> Path:
    """A set of two questions on ``kb``, and ``tuned/team.json``: tuned values from an earlier
    ranking, as a team's file reads after an upgrade of briefd."""
    two_documents(tmp_path / "kb")
    (tmp_path / "q.yaml").write_text(
        "source: kb\nqueries:\n  - {id: a, query: refund window, type: keyword, "
        "expected: [{path: domain/refunds.md, heading: Window}]}\n"
        "  - {id: b, query: fees charges, type: keyword, "
        "expected: [{path: domain/fees.md, heading: Charges}]}\n"
    )
    record = {
        "set": str(tmp_path / "q.yaml"),
        "mode": "hybrid",
        "ranking_version": "r1",
        "embedding_model": "nomic-embed-text",
        "window_words": 0,
        "objective": "mrr",
        "trials": 20,
        "seed": 0,
    }
    tuned = tmp_path / "tuned" / "team.json"
    tuned.parent.mkdir()
    tuned.write_text(json.dumps({"search": {"candidates": 40}, "tuned": record}, indent=2))
    return tuned


def test_tuning_again_as_a_stale_file_says_replaces_it_and_the_warning_goes(
    tmp_path: Path,
) -> None:
    """V3: a file tuned for ranking r1 warned "run `briefd tune --queries …` again"; run as
    written, that command wrote ./best.json (no --output) and left the file stale, and given
    `--output tuned/team.json` it kept the file ("kept …: no trial beat the current settings
    …" or "… score at least as well …"), so the warning never went away. The command it names
    now writes into the file itself, with the file's objective, and tune replaces a stale
    result whatever it scores."""
    tuned = _stale_file(tmp_path)
    measure = ("eval", "--queries", "q.yaml", "--mode", "hybrid", "--config", "tuned/team.json")
    with fake_server() as ollama:  # Ollama's /api/embed wire format, on 127.0.0.1
        ollama.on("POST", "/api/embed", bag_of_words)
        env = ollama_env(ollama.url)
        warned = briefd(*measure, cwd=tmp_path, env=env)
        assert warned.returncode == 0, warned.stderr
        said = " ".join(warned.stderr.split())
        command = (
            f"briefd tune --queries {shlex.quote(str(tmp_path / 'q.yaml'))} --objective mrr "
            "--output tuned/team.json"
        )
        assert f"it no longer has; run `{command}` again" in said, said
        found = re.search(r"run `briefd ([^`]+)` again", said)
        assert found is not None
        again = briefd(*shlex.split(found.group(1)), "--trials", "2", cwd=tmp_path, env=env)
        assert again.returncode == 0, again.stderr
        assert "kept" not in again.stderr
        after = briefd(*measure, cwd=tmp_path, env=env)
    assert after.returncode == 0, after.stderr
    assert "warning" not in after.stderr, after.stderr
    record = json.loads(tuned.read_text())["tuned"]
    assert (record["ranking_version"], record["objective"]) == (RANKING_VERSION, "mrr")
    assert not (tmp_path / "best.json").exists()


def test_the_compare_command_tune_suggests_reads_the_settings_it_tuned_with(
    tmp_path: Path,
) -> None:
    """V3: `briefd --config team.yaml tune …` (a team's layout: scopes `docs`) ended "compare
    with `briefd eval --queries q.yaml --mode hybrid --config best.json`": without the team's
    settings that command read the default layout, in which the knowledge holds no document,
    and stopped (exit 1). The commands it suggests keep the settings file it was given."""
    (tmp_path / "kb" / "docs").mkdir(parents=True)
    (tmp_path / "kb" / "docs" / "refunds.md").write_text("# Refunds\n\n## Window\n\n30 days.\n")
    (tmp_path / "kb" / "docs" / "fees.md").write_text("# Fees\n\n## Charges\n\nNo charge.\n")
    (tmp_path / "team.yaml").write_text("scopes:\n  - {folder: docs, default: true}\n")
    (tmp_path / "q.yaml").write_text(
        "source: kb\nqueries:\n  - {id: a, query: refund window, type: keyword, "
        "expected: [{path: docs/refunds.md, heading: Window}]}\n"
        "  - {id: b, query: fees charges, type: keyword, "
        "expected: [{path: docs/fees.md, heading: Charges}]}\n"
    )
    tune = ("--config", "team.yaml", "tune", "--queries", "q.yaml", "--trials", "1")
    compared = tune_then_compare(
        tmp_path,
        tune,
        bag_of_words,
        "--config team.yaml eval --queries q.yaml --mode hybrid --config best.json",
    )
    assert re.search(r"q \(section\) +│ hybrid +│ +2 │", compared.stdout), compared.stdout


def test_a_stale_files_warning_names_the_settings_file_of_the_run(tmp_path: Path) -> None:
    """V3: run with a team's settings file (`briefd --config team.yaml eval … --config
    tuned.json`), a stale tuned file's warning named `briefd tune --queries …` without it:
    pasted, that tuned under the default layout and model, not the team's."""
    (tmp_path / "kb" / "docs").mkdir(parents=True)
    (tmp_path / "kb" / "docs" / "refunds.md").write_text("# Refunds\n\n## Window\n\n30 days.\n")
    (tmp_path / "team.yaml").write_text("scopes:\n  - {folder: docs, default: true}\n")
    (tmp_path / "q.yaml").write_text(
        "source: kb\nqueries:\n  - {id: a, query: refund window, type: keyword, "
        "expected: [{path: docs/refunds.md, heading: Window}]}\n"
    )
    record = {"set": str(tmp_path / "q.yaml"), "mode": "hybrid", "ranking_version": "r1"}
    (tmp_path / "tuned.json").write_text(
        json.dumps({"search": {"candidates": 40}, "tuned": record})
    )
    run = ("--config", "team.yaml", "eval", "--queries", "q.yaml", "--config", "tuned.json")
    result = briefd(*run, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    command = (
        f"briefd --config team.yaml tune --queries {shlex.quote(str(tmp_path / 'q.yaml'))} "
        "--output tuned.json"
    )
    assert f"it no longer has; run `{command}` again" in " ".join(result.stderr.split())


def test_tuning_on_a_train_split_records_it_and_compares_on_the_test_split(tmp_path: Path) -> None:
    """V1, V3: ``briefd tune --dataset d --split train`` tunes on the train split's questions;
    its record names the split, the compare command it suggests scores the test split the tuning
    never saw, and a stale file's "tune again" command tunes on the same split."""
    _split_set(tmp_path / "mine")
    tune = ("tune", "--dataset", "mine", "--split", "train", "--trials", "2", "--output", "t.json")
    compared = tune_then_compare(
        tmp_path, tune, bag_of_words, "eval --dataset mine --mode hybrid --config t.json"
    )
    assert "│ mine " in compared.stdout and "mine:train" not in compared.stdout  # the test split
    record = json.loads((tmp_path / "t.json").read_text())["tuned"]
    folder = str((tmp_path / "mine").resolve())
    assert (record["set"], record["split"], record["tune"]["queries"]) == (folder, "train", 1)
    record["ranking_version"] = "r1"  # as after an upgrade of briefd
    (tmp_path / "t.json").write_text(json.dumps({"search": {}, "tuned": record}))
    warned = briefd("search", "--config", "t.json", "picture", cwd=tmp_path)
    said = " ".join(warned.stderr.split())
    assert f"run `briefd tune --dataset {folder} --split train --output t.json` again" in said
