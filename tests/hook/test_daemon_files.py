"""The recall daemon's own files (I10): its state record written whole or not at all, and
what it watches for an upgrade — briefd's files and the model runtimes it loaded — checked
one file a prompt and all of them once a second."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import tokenizers

from briefd.hook.codewatch import CodeWatch, code_files
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


def test_an_upgraded_model_runtime_is_seen_like_briefd_itself(tmp_path: Path) -> None:
    """The daemon watched briefd's files alone: ``pip install -U onnxruntime`` (or tokenizers)
    left it answering with the old runtime, whose version is in the model id the index's next
    run embeds with. The top module of each runtime it loaded is watched too."""
    watched = code_files()
    assert str(Path(tokenizers.__file__)) in watched
    assert any(Path(p).parts[-3:] == ("briefd", "hook", "codewatch.py") for p in watched)


def test_a_prompt_stats_one_file_and_the_loop_all(tmp_path: Path) -> None:
    """Every prompt stat'ed every file the daemon runs (~160, 0.65 ms of a warm prompt);
    one file a prompt in turn, and all of them once per ``every`` seconds, still find a
    file replaced: at once when it is the one in turn, else at the next full check."""
    paths = [tmp_path / f"m{n}.py" for n in range(5)]
    for path in paths:
        path.write_text("x = 1\n")
    watch = CodeWatch(code_files_of(paths), every=3600)  # no full check due: one file a call
    assert [watch.changed() for _ in range(7)] == [None] * 7  # m0-m4, m0, m1
    replaced(paths[4])
    assert [watch.changed(), watch.changed()] == [None, None]  # m2, m3: not the one replaced
    assert watch.changed(prompt=True) == str(paths[4])  # m4's turn
    assert watch.changed() == str(paths[4])  # once found, it stays found
    every = CodeWatch(code_files_of(paths), every=0)  # a full check due at every call…
    replaced(paths[1])
    assert every.changed(prompt=True) is None  # …but a prompt stats m0 alone
    assert every.changed() == str(paths[1])


def replaced(path: Path) -> None:
    """``path`` written anew and moved into place, as pip writes a file."""
    fresh = path.with_name("new.py")
    fresh.write_text("x = 2\n")
    fresh.replace(path)


def code_files_of(paths: list[Path]) -> dict[str, tuple[int, int, int]]:
    stats = {str(p): p.stat() for p in paths}
    return {p: (s.st_ino, s.st_mtime_ns, s.st_size) for p, s in stats.items()}
