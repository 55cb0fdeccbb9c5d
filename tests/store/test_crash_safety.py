"""A full disk, a killed process, a file taken away: the index says what went wrong and what to
do, and the next run recovers without anyone cleaning up by hand."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

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


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """tmp_path/idx as a real 2 MB file system of its own (tmpfs): a disk that fills up."""
    folder = tmp_path / "idx"
    folder.mkdir()
    mount = ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(folder)]
    if subprocess.run(mount, capture_output=True).returncode != 0:
        pytest.skip("mounting needs root (CAP_SYS_ADMIN)")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def fill(folder: Path) -> Path:
    """A file in ``folder`` that takes every free block of its file system."""
    filler = folder / "filler"
    # unbuffered: a write the disk takes only in part leaves nothing for close() to write
    # again (which raised ENOSPC past the suppress once the space left was no multiple of 64K)
    with filler.open("wb", buffering=0) as file, contextlib.suppress(OSError):
        while True:
            file.write(b"\0" * 65_536)
            file.flush()
    return filler


def test_an_index_run_on_a_disk_that_is_full_says_so_in_one_line(
    tmp_path: Path, write_files: WriteFiles, small_disk: Path
) -> None:
    """With the disk full when `briefd index` started, the run's holder line (pid, start)
    stayed in the lock file's buffer: writing the index failed, and closing the lock file
    tried that line again and ended in an OSError traceback ('No space left on device') in
    place of the error that says to free disk space. The index before stays served, and the
    run after space is freed takes the change."""
    source = write_files({"domain/retry.md": "# Retry\n\nRetry soft declines three times.\n"})
    full = "index", "--source", str(source)
    assert briefd(tmp_path, *full).returncode == 0
    filler = fill(small_disk)
    (source / "domain" / "retry.md").write_text("# Retry\n\nRetry soft declines four times.\n")
    done = briefd(tmp_path, *full)
    db = small_disk / "briefd.db"
    said = done.stderr.replace("database or disk is full", "disk I/O error")  # SQLite's word
    assert (done.returncode, said) == (
        1,
        f"error: cannot write index {db}: disk I/O error; free disk space and run the "
        "command again\n",
    )
    assert "three times" in briefd(tmp_path, "search", "soft declines").stdout
    filler.unlink()
    assert briefd(tmp_path, *full).returncode == 0
    assert "four times" in briefd(tmp_path, "search", "soft declines").stdout
