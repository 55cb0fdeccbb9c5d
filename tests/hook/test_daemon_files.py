"""The recall daemon's own files (I10): its state record written whole or not at all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from briefd.hook.place import daemon_files
from briefd.hook.starter import _state

FAIL_MID_WRITE = """
import resource, signal, sys
from briefd.hook import daemon
from briefd.hook.place import daemon_files
files = daemon_files(sys.argv[1], {})
daemon._write_starting(files)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG)
resource.setrlimit(resource.RLIMIT_FSIZE, (120, 120))  # as a disk filling up mid-write
daemon._write_failure(files, RuntimeError("the model is missing: " + "x" * 400), None)
"""


def test_a_failure_record_cut_short_leaves_the_record_before_it(tmp_path: Path) -> None:
    """The daemon wrote its failure over the state file in place: cut short (a full disk, a
    kill) it left torn JSON ('{"pid": 4242, "index": "/…/k.db", "failed": 17…'), which the hook
    read as no record at all. The record is written beside it and moved over it: the file
    holds the record before it (the daemon starting), whole, and nothing is left beside it."""
    db = tmp_path / "k.db"
    db.touch()
    env = {**os.environ, "XDG_RUNTIME_DIR": str(tmp_path), "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", FAIL_MID_WRITE, str(db)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    files = daemon_files(str(db), {"XDG_RUNTIME_DIR": str(tmp_path)})
    record = json.loads(Path(files.state).read_text(encoding="utf-8"))
    assert set(record) == {"pid", "index", "starting"}, record
    assert _state(files) == record
    assert [p.name for p in Path(files.state).parent.iterdir() if ".state." in p.name] == []
