"""Ctrl-C on the command line (O2): exit 130 and one line, never a traceback, nothing run
again — real processes, the signal raised where a user's lands."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
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


def answered_in_a_terminal(key: bytes, *args: str, cwd: Path) -> tuple[int, str]:
    """Run briefd on a real terminal (a pty), press ``key`` at its first prompt; the exit code
    and what the terminal showed (stdout and stderr, as the user sees them)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    pid, fd = pty.fork()
    if pid == 0:  # the child: briefd, its stdin, stdout and stderr the terminal
        try:
            os.chdir(cwd)
            os.execve(sys.executable, [sys.executable, "-m", "briefd", *args], env)
        finally:
            os._exit(127)  # never back into pytest
    shown, pressed, deadline = b"", False, time.monotonic() + 60
    while time.monotonic() < deadline:
        if select.select([fd], [], [], 0.1)[0]:
            try:
                shown += os.read(fd, 65536)
            except OSError:  # the terminal closed: briefd ended
                break
        if not pressed and shown.endswith(b"[y/N]: "):  # the whole prompt, then its read
            time.sleep(0.3)
            os.write(fd, key)
            pressed = True
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), shown.decode().replace("\r\n", "\n")


def test_ctrl_c_at_a_prompt_is_an_interruption(tmp_path: Path) -> None:
    """`briefd init` asks before it writes; Ctrl-C there said "^Caborted" on the prompt's
    line, exit 1, where every other Ctrl-C is `error: interrupted`, exit 130 (README)."""
    code, shown = answered_in_a_terminal(b"\x03", "init", cwd=tmp_path)
    assert (code, shown.splitlines()[-2:]) == (
        130,
        ["Write these changes? [y/N]: ^C", "error: interrupted"],
    )
    assert list(tmp_path.iterdir()) == []  # nothing written
    code, shown = answered_in_a_terminal(b"\x04", "init", cwd=tmp_path)  # Ctrl-D: no answer
    assert (code, shown.splitlines()[-2:]) == (1, ["Write these changes? [y/N]: ", "aborted"])
