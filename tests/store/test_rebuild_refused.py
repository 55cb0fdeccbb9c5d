"""``briefd index --rebuild`` starts over only on an index damaged inside: one it may not
open (another user's files, a folder it cannot write) is left as it is, saying why."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.test_cli import briefd
from tests.conftest import EXAMPLE

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder every user may enter (pytest's own tmp folders are root's alone)."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv to run briefd as another user")
    folder = Path(tempfile.mkdtemp(prefix="briefd-shared-"))
    folder.chmod(0o755)
    shutil.copytree(EXAMPLE, folder / "kn")  # outside this repository: root's git, not theirs
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


def as_nobody(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    env |= {"BRIEFD_EMBEDDINGS__ENABLED": "false", "HOME": str(cwd)}
    run = [*NOBODY, sys.executable, "-m", "briefd", *args]
    return subprocess.run(run, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_rebuild_leaves_an_index_it_may_not_open(shared: Path) -> None:
    """A server's index (its -wal and -shm 0600, as SQLite makes them) made readable to all
    in a folder every user may write: another user's ``index --rebuild`` could not open the
    -shm, took "unable to open database file" for damage, deleted the index (its query log,
    feedback and proposals with it) and built its own in its place."""
    folder = shared / "idx"
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)
    assert briefd("--db", "idx/k.db", "index", "--source", "kn", cwd=shared).returncode == 0
    db = folder / "k.db"
    server = sqlite3.connect(db)  # a server holding it: its -wal and -shm stay
    try:
        assert server.execute("SELECT count(*) FROM documents").fetchone() == (45,)
        db.chmod(0o644)
        before = db.stat()
        done = as_nobody("--db", str(db), "index", "--source", "kn", "--rebuild", cwd=shared)
        said = " ".join(done.stderr.split())
        assert done.returncode == 1 and "Traceback" not in said, said
        assert said.startswith(f"error: cannot use the index {db} (unable to open database"), said
        assert f"{db}-shm" in said, said
        after = db.stat()
        assert server.execute("SELECT count(*) FROM documents").fetchone() == (45,)
    finally:
        server.close()
    assert (after.st_ino, after.st_size, after.st_uid) == (before.st_ino, before.st_size, 0)


def test_rebuild_in_a_folder_it_cannot_write_says_so(shared: Path) -> None:
    """An index file and its folder read-only for the user: ``--rebuild`` crashed with a
    traceback (PermissionError, deleting the index to start over); it now says which file
    and folder to make writable, and the index stays."""
    folder = shared / "ro"
    folder.mkdir()
    assert briefd("--db", "ro/k.db", "index", "--source", "kn", cwd=shared).returncode == 0
    for end in ("-wal", "-shm"):
        (folder / f"k.db{end}").unlink(missing_ok=True)
    (folder / "k.db").chmod(0o444)
    size = (folder / "k.db").stat().st_size
    done = as_nobody("--db", "ro/k.db", "index", "--source", "kn", "--rebuild", cwd=shared)
    said = " ".join(done.stderr.split())
    assert done.returncode == 1 and "Traceback" not in said, said
    assert "error: cannot write the index ro/k.db (attempt to write a readonly database)" in said
    assert "ro/k.db is read-only for you, and so is its folder" in said, said
    assert (folder / "k.db").stat().st_size == size
