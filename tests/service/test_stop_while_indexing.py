"""SIGTERM while another process writes the index (O2, I7, K3): ``briefd index`` run by a git
hook or cron, another replica's sync. The server's last flush of the counters, the query log
and the writes kept for later waits for it, bounded, instead of giving up after 200 ms."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import httpx

from tests.conftest import EXAMPLE
from tests.service.live import free_port
from tests.service.test_cli_serve import until_up

# another process's long write: the index's write lock held until a line comes on stdin
HOLD = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.readline()
conn.execute("ROLLBACK")
"""


def test_a_stop_while_another_process_writes_the_index_saves_the_query_log(
    tmp_path: Path,
) -> None:
    """The last flush waited 200 ms for the index, as a periodic one does (it tries again
    later), so a `docker stop` during a 1.5 s index run from a git hook lost every search
    since the last flush and the counters: "could not save counters and the query log at
    shutdown: index … is busy (database is locked)". It waits now (said once), and saves."""
    source = tmp_path / "knowledge"
    shutil.copytree(EXAMPLE, source)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    env.update(BRIEFD_EMBEDDINGS__ENABLED="false", COLUMNS="1000")
    db = tmp_path / "x.db"
    briefd = [sys.executable, "-m", "briefd", "--db", str(db)]
    built = subprocess.run(
        [*briefd, "index", "--source", str(source)], env=env, capture_output=True, timeout=120
    )
    assert built.returncode == 0, built.stderr
    port = free_port()
    server = subprocess.Popen(
        [*briefd, "serve", "--no-index", "--source", str(source), "--port", str(port)],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    until_up(server, base + "/api/health")
    for n in range(5):
        assert httpx.get(base + "/api/search", params={"q": f"retry policy {n}"}).is_success
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == b"locked"
    assert holder.stdin is not None
    release = threading.Timer(1.5, holder.stdin.close)  # the index run ends
    server.send_signal(signal.SIGTERM)
    release.start()
    _, err = server.communicate(timeout=30)
    release.join()
    holder.wait(10)
    holder.stdout.close()
    with sqlite3.connect(db) as conn:
        logged = conn.execute("SELECT query FROM query_log ORDER BY id").fetchall()
    assert logged == [(f"retry policy {n}",) for n in range(5)], err
    assert "another process is writing the index: waiting up to 8 s to save" in err
    assert "at shutdown" not in err
