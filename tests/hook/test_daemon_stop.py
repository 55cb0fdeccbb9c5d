"""The recall daemon stopped while another process writes the index (I10, T3): ``briefd index``
from a git hook. Its last write of the prompts it answered waits for that run, bounded, instead
of giving them up after 200 ms."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

from briefd.hook.place import daemon_files
from tests.hook.conftest import RunHook
from tests.hook.test_daemon import DAEMON, as_json, daemons, db, no_daemon_left, running_daemon
from tests.recall.conftest import RELEVANT
from tests.service.test_stop_while_indexing import HOLD

__all__ = ["db", "no_daemon_left"]  # fixtures: the example index, no daemon left behind


def test_a_daemon_stopped_during_an_index_run_logs_its_prompts(
    db: Path, tmp_path: Path, run_hook: RunHook
) -> None:
    """`briefd recall --stop` (or SIGTERM at logout) while `briefd index` wrote for 1.5 s: the
    daemon's last flush gave up after 200 ms ("the query log waits: index … is busy") and
    exited, so the prompts it answered never reached `briefd gaps` or the usage report. It
    waits for the index run now (3 s at most, inside the 5 s `--stop` gives it)."""
    running_daemon(db, tmp_path, run_hook)  # its first prompt is answered in-process
    assert as_json(run_hook, RELEVANT, "s-2")["via"] == "daemon"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == b"locked"
    assert holder.stdin is not None
    release = threading.Timer(1.5, holder.stdin.close)  # the index run ends
    release.start()
    stopped = run_hook("--stop", env=DAEMON)
    release.join()
    holder.wait(10)
    holder.stdout.close()
    assert stopped.stdout == f"stopped the recall daemon of {db}\n", stopped.stderr
    assert daemons(tmp_path) == []
    with sqlite3.connect(db) as conn:
        logged = conn.execute("SELECT kind, surface FROM query_log").fetchall()
    log = Path(daemon_files(str(db), {}).log).read_text()
    assert logged == [("recall", "hook")], log
    assert "not logged" not in log and "the query log waits" not in log
