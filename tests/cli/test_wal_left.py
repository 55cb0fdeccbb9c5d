"""The CLI leaves no SQLite ``-wal`` or ``-shm`` file beside the index when it exits (X0)."""

from __future__ import annotations

import os
import subprocess
import sys

from briefd.api import Briefd
from briefd.settings import Settings
from tests.conftest import WriteFiles


def test_commands_that_only_read_the_index_leave_no_wal_or_shm_beside_it(
    settings: Settings, write_files: WriteFiles
) -> None:
    """``briefd index`` with nothing changed and ``briefd version`` read the index through a
    read-only connection, which makes SQLite's -wal and -shm files and never removes them:
    after either exited, two stray files sat beside the index (seen by a user listing the
    folder; an index later made read-only or moved trips on them)."""
    write_files({"domain/refunds.md": "# Refunds\n\nPartial refunds within 30 days.\n"})
    with Briefd(settings, embedder=None) as api:
        api.index()
    folder = settings.db.parent
    beside = sorted(p.name for p in folder.iterdir() if p.name.startswith("index.db-"))
    assert beside == []  # the closed Briefd removed them
    env = {"BRIEFD_EMBEDDINGS__ENABLED": "false", "PATH": os.environ.get("PATH", "/usr/bin")}
    env |= {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}
    common = ["--db", str(settings.db)]
    for argv in (
        [*common, "index", "--source", str(settings.source)],
        [*common, "version", "--json"],
        [*common, "search", "partial refunds"],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "briefd", *argv],
            capture_output=True,
            text=True,
            env=env,
            cwd=folder,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        left = sorted(p.name for p in folder.iterdir() if p.name.startswith("index.db-"))
        assert (argv[2], left) == (argv[2], [])
