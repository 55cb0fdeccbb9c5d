"""Stopping the server while its disk is full (O2, T1, I7): a proposal record and a usage report
the index could not take when they were made (kept in memory for a later flush) are what a
client was told is stored; what the last flush still cannot write is named at shutdown, the
proposal with its branch, never lost in silence."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from tests.conftest import EXAMPLE, full_disk
from tests.service.live import free_port
from tests.service.test_cli_serve import until_up

DOC = "domain/retry-policy.md"


def knowledge_checkout(tmp_path: Path, db: Path) -> Path:
    """The example knowledge as a git checkout whose proposals stay local branches, indexed
    into ``db``."""
    source = tmp_path / "knowledge"
    shutil.copytree(EXAMPLE, source)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "Knowledge"]):
        subprocess.run([*git, *args], cwd=source, check=True)
    (tmp_path / "briefd.yaml").write_text(f"source: {source}\nproposals:\n  enabled: true\n")
    built = subprocess.run(
        [sys.executable, "-m", "briefd", "--db", str(db), "index"],
        cwd=tmp_path, env=environment(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    return source


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    env.update(BRIEFD_EMBEDDINGS__ENABLED="false", BRIEFD_SERVE__FLUSH_SECONDS="0.2")
    return {**env, "COLUMNS": "1000"}


class Server:
    """``briefd serve`` whose files may not grow past ``room`` bytes (RLIMIT_FSIZE), its
    stderr read as it comes."""

    def __init__(self, tmp_path: Path, db: Path, room: int | None = None) -> None:
        port = free_port()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "briefd", "--db", str(db), "serve", "--no-index", "--port",
             str(port)],
            cwd=tmp_path, env=environment(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True, preexec_fn=None if room is None else full_disk(room),
        )  # fmt: skip
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.base = f"http://127.0.0.1:{port}"
        until_up(self.process, self.base + "/api/health")

    def _read(self) -> None:
        assert self.process.stderr is not None
        self.lines.extend(self.process.stderr)

    def fill(self) -> None:
        """Bundles of long tasks (their rows, then their query log) until the periodic flush
        says the disk is full."""
        deadline = time.monotonic() + 30
        n = 0
        while not any("could not save counters and the query log:" in s for s in self.lines):
            assert time.monotonic() < deadline, "the disk never filled"
            n += 1
            task = f"card retry policy {n} " * 300
            assert httpx.post(self.base + "/api/bundle", json={"task": task}).status_code == 200
            time.sleep(0.05)

    def propose(self, source: Path, db: Path) -> str:
        """Proposals until one is answered (201) and listed but not in the index ``db``: the
        full disk kept its record in memory. Its id."""
        text = (source / DOC).read_text()
        for n in range(5, 40):
            change = {
                "doc_path": DOC,
                "change_description": f"{n} retries",
                "new_content": f"{text}\nRetried at most {n} times.\n",
            }
            made = httpx.post(self.base + "/api/proposals", json=change, timeout=60)
            assert made.status_code == 201, made.text
            listed = httpx.get(self.base + "/api/proposals").json()["proposals"]
            made_id = str(made.json()["id"])
            assert made_id in [p["id"] for p in listed]  # while it waits too
            if not rows(db, f"SELECT id FROM proposals WHERE id = '{made_id}'"):
                return made_id
        raise AssertionError("every proposal's record found room on the full disk")

    def report_usage(self) -> None:
        bundle = httpx.post(
            self.base + "/api/bundle", json={"task": "retry policy for card payments"}
        ).json()
        used = {
            "bundle_id": bundle["bundle_id"],
            "useful_chunk_ids": [bundle["items"][0]["chunk_id"]],
        }
        assert httpx.post(self.base + "/api/usage", json=used).json()["stored"] == 1

    def stop(self) -> str:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(30)
        self.reader.join(10)
        assert self.process.stderr is not None
        self.process.stderr.close()
        return "".join(self.lines)


def rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def test_what_a_full_disk_keeps_out_at_the_stop_is_named(tmp_path: Path) -> None:
    """No room even with the write-ahead log given back (the index cannot grow either): the
    shutdown names the proposal lost, with its branch (which stands in the checkout), where
    it said nothing of it."""
    db = tmp_path / "x.db"
    source = knowledge_checkout(tmp_path, db)
    server = Server(tmp_path, db, 40_960)
    try:
        server.fill()
        proposal = server.propose(source, db)
    finally:
        err = server.stop()
    branch = f"briefd/proposal-{proposal}"
    assert rows(db, f"SELECT id FROM proposals WHERE id = '{proposal}'") == []
    (said,) = [line for line in err.splitlines() if "lost with this stop: proposal" in line]
    assert f"proposal {proposal} ({DOC}, branch {branch})" in said
    assert "stands where it was made (pushed to the remote, or a local branch of" in said
    assert "until a sync adopts it" in said and "open a pull request" not in said
    listed = subprocess.run(["git", "branch", "--list", branch], cwd=source, capture_output=True)
    assert branch in listed.stdout.decode()
    (flush,) = [line for line in err.splitlines() if " at shutdown: " in line]
    assert flush.endswith(
        f"at shutdown: cannot write index {db}: disk I/O error (lost with this stop)"
    )
