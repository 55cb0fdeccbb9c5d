"""A reader that goes away (``briefd index | head -1``, a ``jq`` that failed): the command
ends quietly, never with a BrokenPipeError traceback — real processes, stdout a pipe whose
reading end is already closed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import IO

from tests.conftest import EXAMPLE


def unread(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``briefd ARGS`` writing into a pipe nobody reads."""
    read, write = os.pipe()
    os.close(read)
    try:
        return briefd_into(write, args, cwd)
    finally:
        os.close(write)


def briefd_into(
    stdout: int | IO[str], args: tuple[str, ...], cwd: Path
) -> subprocess.CompletedProcess[str]:
    """``briefd ARGS`` with its output into ``stdout``, embeddings off."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    env["BRIEFD_EMBEDDINGS__ENABLED"] = "false"
    return subprocess.run(
        [sys.executable, "-m", "briefd", *args],
        cwd=cwd,
        env=env,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
    )


def test_an_unchanged_index_run_into_a_closed_pipe_is_quiet(tmp_path: Path) -> None:
    """The run that finds nothing changed is answered before the full command line (the stamp,
    then the fast path), which printed a BrokenPipeError traceback where the full command
    line exits 1 without a word."""
    source = ("index", "--source", str(EXAMPLE))
    first = unread(*source, cwd=tmp_path)  # the full command line
    assert (first.returncode, first.stderr) == (1, "")
    answered = unread(*source, cwd=tmp_path)  # the stamp's answer
    assert (answered.returncode, answered.stderr) == (1, "")
    (tmp_path / ".briefd" / "briefd.db.stamp").unlink()
    fast = unread(*source, "--json", cwd=tmp_path)  # the fast path's
    assert (fast.returncode, fast.stderr) == (1, "")
    search = unread("search", "retry policy", "--json", cwd=tmp_path)
    assert (search.returncode, search.stderr) == (1, "")


def test_a_command_started_with_stdout_closed_says_nothing(tmp_path: Path) -> None:
    """``briefd docs >&-``: Python starts without a stdout, and the table goes nowhere."""
    assert unread("index", "--source", str(EXAMPLE), cwd=tmp_path).returncode == 1
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    closed = subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, "-m", "briefd", "docs"],
        cwd=tmp_path,
        env={**env, "BRIEFD_EMBEDDINGS__ENABLED": "false"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (closed.returncode, closed.stderr) == (0, "")


def full(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``briefd ARGS > /dev/full``: every write to stdout fails with ENOSPC, as on a full disk."""
    with Path("/dev/full").open("w") as device:
        return briefd_into(device, args, cwd)


def test_output_to_a_full_device_is_one_error_line(tmp_path: Path) -> None:
    """``briefd search x > /dev/full`` printed an OSError traceback: a write to stdout that
    fails is said in one line on stderr, exit 1, on every path (the full command line, the
    stamp's answer, the fast path; text and JSON)."""
    said = (1, "error: could not write the output: No space left on device\n")
    source = ("index", "--source", str(EXAMPLE))
    first = full(*source, cwd=tmp_path)  # the full command line
    assert (first.returncode, first.stderr) == said
    answered = full(*source, cwd=tmp_path)  # the stamp's answer
    assert (answered.returncode, answered.stderr) == said
    (tmp_path / ".briefd" / "briefd.db.stamp").unlink()
    fast = full(*source, "--json", cwd=tmp_path)  # the fast path's
    assert (fast.returncode, fast.stderr) == said
    for json in ((), ("--json",)):
        search = full("search", "retry policy", *json, cwd=tmp_path)
        assert (search.returncode, search.stderr) == said
