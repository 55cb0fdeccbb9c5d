"""An index on a file system mounted read-only (a read-only bind mount, a ``:ro`` volume):
the advice is to remount or move the index, not a chmod that cannot help there."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.test_cli import briefd
from tests.conftest import EXAMPLE

MOUNTED = "is on a file system mounted read-only, so no permission change (chmod, chown) lets"


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """tmp_path/idx holding a built index (no -wal / -shm left), then bind-mounted read-only."""
    folder = tmp_path / "idx"
    folder.mkdir()
    built = briefd("--db", "idx/k.db", "index", "--source", str(EXAMPLE), cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    for end in ("-wal", "-shm"):
        (folder / f"k.db{end}").unlink(missing_ok=True)
    mount = ["mount", "--bind", str(folder), str(folder)]
    if subprocess.run(mount, capture_output=True).returncode != 0:
        pytest.skip("mounting needs root (CAP_SYS_ADMIN)")
    try:
        remount = ["mount", "-o", "remount,bind,ro", str(folder), str(folder)]
        subprocess.run(remount[:-1], check=True, capture_output=True)
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_a_read_only_mount_is_named_as_such_and_rebuild_says_so(
    tmp_path: Path, read_only: Path
) -> None:
    """``briefd index --rebuild`` on it crashed with a traceback (OSError: [Errno 30]
    Read-only file system, deleting the index to start over), and with the -wal / -shm there,
    advised "make them writable (chmod u+w …)"; a reader was told to check "that its directory
    exists and is writable by you". Each now says the file system is mounted read-only."""
    for args in (
        ("--db", "idx/k.db", "index", "--source", str(EXAMPLE), "--rebuild"),
        ("--db", "idx/k.db", "search", "refund window"),
        ("--db", "idx/new/k.db", "index", "--source", str(EXAMPLE)),
    ):
        done = briefd(*args, cwd=tmp_path)
        said = " ".join(done.stderr.split())
        assert (done.returncode, said[:7]) == (1, "error: "), said
        assert f"{read_only} {MOUNTED} briefd write there; remount it read-write" in said
        assert "Traceback" not in said and "chmod u+w" not in said, said
    assert (read_only / "k.db").stat().st_size > 0  # left as it was
