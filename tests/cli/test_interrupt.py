"""Ctrl-C on the command line (O2): exit 130 and one line, never a traceback, nothing run
again — real processes, the signal raised where a user's lands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import EXAMPLE

# The process runs briefd's console script after ``before`` (Python) has set the trap.
LAUNCH = "import sys\n{before}\nsys.argv[0] = 'briefd'\nfrom briefd.cli.launch import run\nrun()\n"


def interrupted_run(before: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    env["BRIEFD_EMBEDDINGS__ENABLED"] = "false"
    return subprocess.run(
        [sys.executable, "-c", LAUNCH.format(before=before), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_ctrl_c_inside_a_function_sqlite_calls_is_an_interruption(tmp_path: Path) -> None:
    """The index run folds text for search through briefd_fold, a Python function SQLite
    calls; a KeyboardInterrupt raised there is swallowed by sqlite3, whose statement then
    fails with 'user-defined function raised exception' — said as an index error, exit 1."""
    trap = (
        "import signal, briefd.store.db as db\n"
        "fold, calls = db.fold, []\n"
        "def folding(text):\n"
        "    calls.append(text)\n"
        "    if len(calls) == 50:\n"
        "        signal.raise_signal(signal.SIGINT)\n"
        "    return fold(text)\n"
        "db.fold = folding\n"
    )
    result = interrupted_run(trap, "index", "--source", str(EXAMPLE), cwd=tmp_path)
    assert (result.returncode, result.stderr, result.stdout) == (130, "error: interrupted\n", "")
    again = interrupted_run("", "scopes", "--json", cwd=tmp_path)
    assert again.returncode == 0, again.stderr  # nothing half-written: the run rolled back
    assert '"scopes": []' in again.stdout


def test_ctrl_c_while_the_command_line_loads_is_one_line(tmp_path: Path) -> None:
    """A Ctrl-C during the imports (a second on a cold or busy machine) came before any
    handler: a traceback through typer's or numpy's import machinery."""
    trap = (
        "import importlib.abc, signal\n"
        "class Finder(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'typer':\n"
        "            signal.raise_signal(signal.SIGINT)\n"
        "sys.meta_path.insert(0, Finder())\n"
    )
    result = interrupted_run(trap, "search", "retry", cwd=tmp_path)
    assert (result.returncode, result.stderr, result.stdout) == (130, "error: interrupted\n", "")


def test_ctrl_c_while_the_results_print_is_one_line(tmp_path: Path) -> None:
    """Outside a command's error handling (its table being printed), typer turned the
    KeyboardInterrupt into exit 130 without a word."""
    assert interrupted_run("", "index", "--source", str(EXAMPLE), cwd=tmp_path).returncode == 0
    trap = (
        "import signal, briefd.cli.search as search\n"
        "def printing(*_):\n"
        "    signal.raise_signal(signal.SIGINT)\n"
        "search.print_result = printing\n"
    )
    result = interrupted_run(trap, "search", "retry policy", cwd=tmp_path)
    assert (result.returncode, result.stderr, result.stdout) == (130, "error: interrupted\n", "")


def test_ctrl_c_while_the_embedding_model_loads_is_one_line(tmp_path: Path) -> None:
    """A Ctrl-C in the first seconds of an index run lands while onnxruntime's extension
    initialises (~0.1 s of it, seen live at 3.5 s into `briefd index`), which turns the
    KeyboardInterrupt into 'ImportError: initialization failed' (pybind11 raises that from
    whatever its module init raised): a 70-line traceback, exit 1. The trap raises the real
    signal inside that extension's loading and converts it as pybind11 does."""
    trap = (
        "import importlib.abc, importlib.machinery, signal\n"
        "NAME = 'onnxruntime.capi.onnxruntime_pybind11_state'\n"
        "class Initialising(importlib.machinery.ExtensionFileLoader):\n"
        "    def create_module(self, spec):\n"
        "        try:\n"
        "            signal.raise_signal(signal.SIGINT)\n"
        "        except KeyboardInterrupt as exc:\n"
        "            raise ImportError('initialization failed') from exc\n"
        "class Finder(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name != NAME:\n"
        "            return None\n"
        "        spec = importlib.machinery.PathFinder.find_spec(name, path)\n"
        "        spec.loader = Initialising(spec.loader.name, spec.loader.path)\n"
        "        return spec\n"
        "sys.meta_path.insert(0, Finder())\n"
    )
    source = tmp_path / "knowledge" / "domain"
    source.mkdir(parents=True)
    (source / "retry.md").write_text("# Retry\n\nRetry soft declines three times.\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    result = subprocess.run(
        [sys.executable, "-c", LAUNCH.format(before=trap), "index", "--source", "knowledge"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert (result.returncode, result.stderr, result.stdout) == (130, "error: interrupted\n", "")
