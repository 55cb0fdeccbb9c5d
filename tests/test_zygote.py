"""The suite's warm ``briefd`` (tests/zygote.py) answers as a real ``python -m briefd`` does:
the same exit codes, bytes on stdout and stderr, working folder, environment and stdin."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests import zygote
from tests.conftest import EXAMPLE


def both(args: list[str], cwd: Path, env: dict[str, str], input: str | None = None) -> None:
    warm = zygote.run(args, cwd=cwd, env=env, input=input)
    cold = subprocess.run(
        [sys.executable, "-m", "briefd", *args],
        cwd=cwd,
        env=env,
        input=input,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (warm.returncode, timeless(warm.stdout), timeless(warm.stderr)) == (
        cold.returncode,
        timeless(cold.stdout),
        timeless(cold.stderr),
    )


def timeless(text: str) -> str:
    return re.sub(r"\d+(\.\d+)? ?m?s\b", "T", text)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    return {**clean, "BRIEFD_EMBEDDINGS__ENABLED": "false", "BRIEFD_DB": str(tmp_path / "i.db")}


def test_a_warm_child_answers_as_a_spawned_briefd(tmp_path: Path, env: dict[str, str]) -> None:
    assert zygote.warm(env) is not None  # the worker's own variables: warm, whatever came first
    built = zygote.run(["index", "--source", str(EXAMPLE)], cwd=tmp_path, env=env)
    assert built.returncode == 0, built.stderr
    both(["--version"], tmp_path, env)
    both(["search", "refund deadline"], tmp_path, env)
    both(["nonsense"], tmp_path, env)  # exit 2, a usage line on stderr
    both(["search", "--limit", "0", "x"], tmp_path, env)
    both(["scopes"], tmp_path, {**env, "BRIEFD_DB": str(tmp_path / "none.db")})  # exit 1
    payload = json.dumps({"prompt": "how long is the refund window?", "session_id": "s"})
    both(["recall", "--no-server"], tmp_path, env, input=payload)


def test_a_variable_read_at_start_up_gets_a_warm_process_of_its_own(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(zygote, "_warm", {})  # this worker's, as if no test had asked before
    monkeypatch.setattr(zygote, "_asked", {})
    narrow = {**env, "COLUMNS": "50"}  # rich's Console reads it when briefd.cli is imported
    assert zygote.warm(narrow) is None  # the first time: a real spawn
    both(["search", "--help"], tmp_path, narrow)
    assert zygote.warm(narrow) is not None
    both(["search", "--help"], tmp_path, narrow)
    assert zygote.warm(env) is not zygote.warm(narrow)


def test_the_workers_own_variables_stay_warm_when_others_took_the_places(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """CI ran other environments' tests first on a worker: they took the three places, and
    every later command of the usual environment was spawned cold."""
    alive = zygote.warm(env)
    taken = {(("COLUMNS", str(n)),): alive for n in range(zygote.MAX_WARM)}
    monkeypatch.setattr(zygote, "_warm", taken)
    assert zygote.warm(env) is not None
    assert zygote.warm({**env, "COLUMNS": "7"}) is None  # no place left for another
