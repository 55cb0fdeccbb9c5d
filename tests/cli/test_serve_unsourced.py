"""``briefd serve`` of an index built with ``briefd index --source DIR``, with no source
configured: it serves that index as it was and never reads the folder again. It said nothing
of it, so a new user who edited a document and restarted the server got the old text."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from briefd.cli.serve import UNSOURCED
from tests.ports import free_port


def said_at_start(cwd: Path, *args: str) -> str:
    """What ``briefd serve`` prints on stdout, once it answers ``/api/health``, then stopped."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    env.update(BRIEFD_EMBEDDINGS__ENABLED="false", COLUMNS="1000")
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "briefd", "serve", "--port", str(port), *args],
        cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=2):
                    break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline
                time.sleep(0.2)
    finally:
        server.send_signal(signal.SIGINT)
        out, _ = server.communicate(timeout=30)
    return out


def test_serve_says_an_index_with_no_source_is_served_as_it_was(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    (kb / "domain").mkdir(parents=True)
    (kb / "domain" / "refunds.md").write_text("# Refunds\n\n## Window\n\n30 days.\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    env["BRIEFD_EMBEDDINGS__ENABLED"] = "false"
    subprocess.run(
        [sys.executable, "-m", "briefd", "index", "--source", str(kb)],
        cwd=tmp_path, env=env, capture_output=True, timeout=120, check=True,
    )  # fmt: skip
    said = said_at_start(tmp_path)
    db = Path(".briefd/briefd.db")
    assert "briefd serving on http://127.0.0.1:" in said
    assert UNSOURCED.format(db=db) + "\n" in said
    assert "edits are not read" in UNSOURCED and "--source DIR" in UNSOURCED
    # with its source it reads the folder first, and so says nothing of it
    assert "no knowledge source" not in said_at_start(tmp_path, "--source", str(kb))
    assert "no knowledge source" not in said_at_start(tmp_path, "--no-index")  # chosen
