"""`briefd mcp` (I9) and `briefd serve` stopped while a first index still runs beside them
(longer than their wait, ``serve.index_wait_seconds``), on the default model: the process ends
with its own status, not with SIGABRT from the embedding runtime the index thread is inside."""

from __future__ import annotations

import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import EXAMPLE, REPO
from tests.ports import free_port

pytestmark = pytest.mark.slow
pytest.importorskip("openvino")  # the passage engine whose threads aborted the exit


COPIES = 8  # of the example's 129 domain sections, each its own text: ~1,370 sections
WAIT_S = 3  # serve.index_wait_seconds in the tests that stop the process once it is over


def knowledge(tmp_path: Path) -> Path:
    """The example knowledge and copies of its domain notes, each heading marked with its copy
    (identical sections are embedded once): a first index that still runs when the wait is
    over, also on a fast machine (two unmarked copies, 596 sections, took 16.7 s on OpenVINO
    with AMX); the process is stopped then, so the copies cost no test time."""
    root = tmp_path / "knowledge"
    shutil.copytree(EXAMPLE, root)
    for copy in range(COPIES):
        for source in (EXAMPLE / "domain").rglob("*.md"):
            target = root / "projects" / f"copy-{copy}" / source.relative_to(EXAMPLE / "domain")
            target.parent.mkdir(parents=True, exist_ok=True)
            text = source.read_text(encoding="utf-8")
            marked = re.sub(r"^(#{1,6} .*)$", rf"\1 (copy {copy})", text, flags=re.MULTILINE)
            target.write_text(marked, encoding="utf-8")
    return root


def started(tmp_path: Path, *command: str, wait: float | None = None) -> subprocess.Popen[str]:
    """``briefd <command>`` on a new index of :func:`knowledge`; ``wait``: its
    ``serve.index_wait_seconds`` (None: the default, 20 s)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    env["PYTHONPATH"] = str(REPO / "src")
    env["BRIEFD_EMBEDDINGS__PASSAGE_ENGINE"] = "openvino"
    if wait is not None:
        env["BRIEFD_SERVE__INDEX_WAIT_SECONDS"] = str(wait)
    db = str(tmp_path / "fresh.db")
    return subprocess.Popen(
        [sys.executable, "-m", "briefd", "--db", db, *command, "--source", str(knowledge(tmp_path))],
        cwd=tmp_path, env=env, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip


def still_indexing(process: subprocess.Popen[str], until: str = "still indexing after") -> str:
    """stderr up to the line that says the first index goes on beside the server (``until``)."""
    assert process.stderr is not None
    said = ""
    deadline = time.monotonic() + 120
    while until not in said:
        assert time.monotonic() < deadline and process.poll() is None, said
        if select.select([process.stderr], [], [], 1)[0]:
            said += process.stderr.readline()
    return said


def estimated(process: subprocess.Popen[str]) -> str:
    """stderr up to the embedding's first line with its time left: a clean clone's model
    builds its graph first (the first line comes seconds later), and a stop before the run
    has an estimate waits for it as for any run."""
    return still_indexing(process, "s left)")


def ended(process: subprocess.Popen[str]) -> str:
    """What the stopped process said on stderr (its pipes closed)."""
    assert process.stdin and process.stdout is not None and process.stderr is not None
    try:
        process.stdout.read()
        return process.stderr.read()
    finally:
        for stream in (process.stdin, process.stdout, process.stderr):
            stream.close()


def test_mcp_ends_cleanly_when_the_client_closes_stdin_during_a_first_index(
    tmp_path: Path,
) -> None:
    process = started(tmp_path, "mcp", wait=WAIT_S)
    assert f"still indexing after {WAIT_S} s: answering MCP" in still_indexing(process)
    estimated(process)
    assert process.stdin is not None
    process.stdin.close()
    status = process.wait(timeout=60)
    said = ended(process)
    assert "terminate called" not in said
    assert status == 0, said
    assert "stopping before" in said  # the index keeps its last committed state
    assert "not waiting for the first index to finish: it says ~" in said  # 8 s, for nothing


def test_serve_ends_cleanly_on_ctrl_c_during_a_first_index(tmp_path: Path) -> None:
    port = free_port()
    process = started(tmp_path, "serve", "--port", str(port), wait=WAIT_S)
    assert f"still indexing after {WAIT_S} s: serving" in still_indexing(process)
    deadline = time.monotonic() + 30
    while True:  # listening, the index still building: Ctrl-C goes to uvicorn
        try:
            health = httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=2)
            break
        except httpx.TransportError:
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.2)
    assert health.json()["status"] == "building"
    estimated(process)
    process.send_signal(signal.SIGINT)
    status = process.wait(timeout=60)
    said = ended(process)
    assert "terminate called" not in said
    assert status == 130, said
    assert "not waiting for the first index to finish: it says ~" in said


def embedding(process: subprocess.Popen[str], db: Path) -> str:
    """stderr up to the first index's line, then the wait until its embedding writes to the
    index (the WAL grows twice): inside the runtime's threads, before the 20 s wait is over."""
    assert process.stderr is not None
    said, sizes = "", [0]
    deadline = time.monotonic() + 60
    while "for the first time" not in said:
        assert time.monotonic() < deadline and process.poll() is None, said
        if select.select([process.stderr], [], [], 1)[0]:
            said += process.stderr.readline()
    wal = db.with_name(db.name + "-wal")
    while len(sizes) < 3:
        assert time.monotonic() < deadline and process.poll() is None, said
        size = wal.stat().st_size if wal.exists() else 0
        if size > sizes[-1]:
            sizes.append(size)
        time.sleep(0.05)
    return said


@pytest.mark.parametrize("command", ["serve", "mcp"])
def test_ctrl_c_while_the_first_index_is_awaited_ends_cleanly(tmp_path: Path, command: str) -> None:
    """Ctrl-C in the first 20 s of `briefd serve` (or `briefd mcp`) on a new project, while it
    waits for the first index before listening, printed 'error: interrupted', then 'terminate
    called without an active exception', and the process died of SIGABRT: the thread it had
    waited for looked ended (an interrupted join marks it so) and the interpreter's exit tore
    down the embedding runtime under it."""
    args = ("--port", str(free_port())) if command == "serve" else ()
    process = started(tmp_path, command, *args)
    embedding(process, tmp_path / "fresh.db")
    process.send_signal(signal.SIGINT)
    status = process.wait(timeout=60)
    said = ended(process)
    assert "terminate called" not in said
    assert (status, said.splitlines()[-1]) == (130, "error: interrupted"), said
    assert "still indexing after" not in said  # stopped before the wait was over
