"""An intact index on a disk that filled up while no process had it open: SQLite cannot size
the -shm it reads a WAL index through there, so every reader failed with "cannot write index
…: disk I/O error; free disk space…". Readers now read it read-only (as on a read-only mount)
until space is freed; writes say the disk is full."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.conftest import WriteFiles
from tests.ports import free_port
from tests.store.test_crash_safety import briefd, fill
from tests.store.test_crash_safety import small_disk as small_disk

FULL = "free disk space and run the command again"


def test_a_full_disk_still_searches_the_last_good_index(
    tmp_path: Path, write_files: WriteFiles, small_disk: Path
) -> None:
    """`briefd search` answered 'error: cannot write index …: disk I/O error; free disk space
    and run the command again' for an intact index it only reads. It now searches it; an index
    run says the disk is full and changes nothing, and once space is freed it takes the change."""
    source = write_files({"domain/retry.md": "# Retry\n\nRetry soft declines three times.\n"})
    full = "index", "--source", str(source)
    assert briefd(tmp_path, *full).returncode == 0
    for _ in range(2):  # before and after an index run refused for the full disk
        filler = fill(left_by_the_last_reader(small_disk / "briefd.db"))
        found = briefd(tmp_path, "search", "soft declines")
        assert (found.returncode, found.stderr) == (0, ""), found.stderr
        assert "domain/retry.md" in found.stdout
        (source / "domain" / "retry.md").write_text("# Retry\n\nRetry soft declines four times.\n")
        refused = briefd(tmp_path, *full)
        assert (refused.returncode, refused.stderr.endswith(f"; {FULL}\n")) == (1, True)
    assert "three times" in briefd(tmp_path, "search", "soft declines", "--json").stdout
    filler.unlink()
    assert briefd(tmp_path, *full).returncode == 0
    assert "four times" in briefd(tmp_path, "search", "soft declines", "--json").stdout


def left_by_the_last_reader(db: Path) -> Path:
    """``db``'s folder with no -wal / -shm beside it, as SQLite leaves it when the last
    connection closes (the CLI's may stay open until its process ends, leaving them)."""
    assert not Path(f"{db}-wal").exists() or Path(f"{db}-wal").stat().st_size == 0
    for end in ("-wal", "-shm"):
        Path(f"{db}{end}").unlink(missing_ok=True)
    return db.parent


def _ask(url: str, body: object = None) -> tuple[int, dict[str, object]]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return answer.status, json.loads(answer.read())


def test_serve_on_a_full_disk_serves_the_index_degraded_and_writes_once_space_is_freed(
    tmp_path: Path, write_files: WriteFiles, small_disk: Path
) -> None:
    """`briefd serve --no-index` refused to start on a full disk ("cannot write index …: disk
    I/O error"), so a container restarted there stopped serving. It now serves the index
    read-only: /api/health says degraded and why, search answers, a usage report waits in
    memory; after space is freed the next write opens the index again and both reports land."""
    source = write_files({"domain/retry.md": "# Retry\n\nRetry soft declines three times.\n"})
    assert briefd(tmp_path, "index", "--source", str(source)).returncode == 0
    db = small_disk / "briefd.db"
    filler = fill(left_by_the_last_reader(db))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    command = [sys.executable, "-m", "briefd", "--db", str(db), "serve", "--no-index"]
    server = subprocess.Popen(
        [*command, "--port", str(port)], cwd=tmp_path, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, env={**env, "BRIEFD_EMBEDDINGS__ENABLED": "false"},
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/api"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, server.communicate()[0]
            try:
                health = _ask(f"{url}/health")[1]
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert health["status"] == "degraded", health
        assert health["state_error"] == (
            f"the index {db} is opened read-only: its disk is full (free disk space, and "
            "briefd writes it again); the query log and usage reports wait in memory "
            "meanwhile (lost if the server stops first), proposals are refused; search and "
            "bundles go on from it"
        )
        hits = _ask(f"{url}/search?q=soft+declines")[1]["hits"]
        assert [hit["doc_path"] for hit in hits] == ["domain/retry.md"]  # type: ignore[index]
        bundle = _ask(f"{url}/bundle", {"task": "retry soft declines"})[1]["bundle_id"]
        assert _ask(f"{url}/usage", {"bundle_id": bundle})[0] == 200
        filler.unlink()
        assert _ask(f"{url}/usage", {"bundle_id": bundle})[0] == 200
        assert _ask(f"{url}/health")[1]["status"] == "ok"
    finally:
        server.send_signal(signal.SIGTERM)
        log = server.communicate(timeout=30)[0]
    with contextlib.closing(sqlite3.connect(db)) as conn:
        assert conn.execute("SELECT count(*) FROM usage_events").fetchone()[0] == 2, log
