"""Shell completion as a user installs it (`briefd --show-completion bash`, the script that
`--install-completion` writes), run by a real bash: commands, and the values of the options
that take one of a few."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer._completion_classes import BashComplete
from typer.main import get_command

from briefd.cli.main import app
from tests.conftest import REPO

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def _completions(tmp_path: Path, *words: str) -> list[str]:
    """What bash's TAB offers after ``briefd WORDS…`` (the last word being completed), through
    the completion script briefd prints for bash and a ``briefd`` on the PATH."""
    shim = tmp_path / "bin" / "briefd"
    if not shim.exists():
        shim.parent.mkdir()
        shim.write_text(f'#!/bin/sh\nexec {sys.executable} -m briefd "$@"\n')
        shim.chmod(0o755)
    words_array = " ".join(f"'{w}'" for w in ("briefd", *words))
    script = (
        'eval "$(briefd --show-completion bash)"\n'
        f"COMP_WORDS=({words_array}); COMP_CWORD={len(words)}\n"
        '_briefd_completion briefd; printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    env["PATH"] = f"{shim.parent}{os.pathsep}{env['PATH']}"
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if line]


def _offered(*words: str) -> list[str]:
    """What the completion briefd's shell scripts call offers after ``briefd WORDS…`` (the last
    word being completed), asked in this process: the same answer bash or zsh get."""
    complete = BashComplete(get_command(app), {}, "briefd", "_BRIEFD_COMPLETE")
    return [item.value for item in complete.get_completions(list(words[:-1]), words[-1])]


def test_bash_completes_commands_and_the_values_of_an_option(tmp_path: Path) -> None:
    """I7: `briefd search --mode <TAB>` offered nothing (bash then listed the folder's files):
    --mode was a text option checked after the fact. Commands were completed; now the values
    are too, through the script `briefd --show-completion bash` prints, in a real bash."""
    assert "search" in _completions(tmp_path, "se")
    assert _completions(tmp_path, "search", "--mode", "") == ["bm25", "vector", "hybrid"]


def test_the_options_that_take_one_of_a_few_values_complete_them() -> None:
    """I7: as search's --mode, eval's --mode, tune's --objective, bundle's and context's
    --mode, proposals' --status, init's --client and --transport and model pull's --model
    offered no value to complete."""
    assert _offered("search", "--mode", "h") == ["hybrid"]
    assert _offered("search", "--query-mode", "") == ["text", "advanced"]
    assert _offered("eval", "--mode", "") == ["bm25", "vector", "hybrid", "all"]
    assert _offered("tune", "--objective", "") == ["hit_rate", "mrr"]
    assert _offered("bundle", "--mode", "m") == ["markdown", "manifest"]
    assert _offered("context", "domain/refunds.md", "--mode", "p") == ["package"]
    assert _offered("proposals", "--status", "") == ["local", "pushed", "open", "merged", "closed"]
    assert _offered("init", "--client", "c") == ["claude-code", "cursor", "codex"]
    assert _offered("init", "--transport", "") == ["http", "stdio"]
    assert "multilingual-e5-small" in _offered("model", "pull", "--model", "mult")
