"""A full disk, a killed process, a file taken away: the index says what went wrong and what to
do, and the next run recovers without anyone cleaning up by hand."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.conftest import WriteFiles, full_disk


def briefd(
    tmp_path: Path, *args: str, preexec_fn: Callable[[], None] | None = None
) -> subprocess.CompletedProcess[str]:
    """``briefd --db <tmp_path>/idx/briefd.db ARGS`` in a process of its own, BM25 only."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    return subprocess.run(
        [sys.executable, "-m", "briefd", "--db", str(tmp_path / "idx" / "briefd.db"), *args],
        cwd=tmp_path, env={**env, "BRIEFD_EMBEDDINGS__ENABLED": "false", "COLUMNS": "1000"},
        capture_output=True, text=True, timeout=120, preexec_fn=preexec_fn,
    )  # fmt: skip


def test_a_new_index_on_a_full_disk_says_the_disk_is_full(
    tmp_path: Path, write_files: WriteFiles
) -> None:
    """The first migration of a new index failed on the full disk, SQLite ended the
    transaction itself, and the ROLLBACK after it said 'cannot rollback - no transaction is
    active': every command on that index said so, naming neither the disk nor a fix."""
    source = write_files({"domain/retry.md": "# Retry\n\nRetry soft declines three times.\n"})
    db = tmp_path / "idx" / "briefd.db"
    full = "index", "--source", str(source)
    for args in (full, ("search", "soft declines")):
        done = briefd(tmp_path, *args, preexec_fn=full_disk())
        assert (done.returncode, done.stderr) == (
            1,
            f"error: cannot write index {db}: disk I/O error; free disk space and run the "
            "command again\n",
        )
    indexed = briefd(tmp_path, *full)  # space freed: no cleanup needed
    assert indexed.returncode == 0, indexed.stderr
    assert ": 1 document, 1 chunk in " in indexed.stdout
    found = briefd(tmp_path, "search", "soft declines")
    assert "domain/retry.md" in found.stdout
