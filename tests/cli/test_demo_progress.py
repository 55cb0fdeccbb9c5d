"""``briefd demo`` (and ``briefd serve``) say how their first index goes, as ``briefd index``
does in a log: a user was left for a minute with "indexing … for the first time" alone."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.cli.test_operator_cli import ollama_env
from tests.embeddings.fakehttp import Reply, Request, fake_server
from tests.embeddings.test_ollama import embed_reply
from tests.ports import free_port

SLOW_BATCHES = 7  # of the example's 11 batches of passages: 7 s, past the log's 5 s


def slow_embed() -> Callable[[Request], Reply]:
    """A model on a busy CPU, 1 s a batch, for the first passages: the log line is due after
    5 s; the rest of the run (more passages, the calibration's probes) is answered at once."""
    calls = itertools.count(1)

    def embed(request: Request) -> Reply:
        if next(calls) <= SLOW_BATCHES:
            time.sleep(1.0)
        return embed_reply(request)

    return embed


def test_demo_logs_the_progress_of_its_first_index_when_stderr_is_a_pipe(tmp_path: Path) -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    with fake_server() as ollama:  # Ollama's /api/embed wire format, on 127.0.0.1
        ollama.on("POST", "/api/embed", slow_embed())
        env = {
            **clean,
            **ollama_env(ollama.url),
            "BRIEFD_EMBEDDINGS__BATCH_SIZE": "32",
            "XDG_DATA_HOME": str(tmp_path / "data"),
        }
        demo = subprocess.Popen(
            [sys.executable, "-m", "briefd", "demo", "--port", str(free_port())],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        lines: list[str] = []
        try:
            assert demo.stderr is not None
            while not lines or not lines[-1].startswith(("indexed ", "error")):
                line = demo.stderr.readline()
                assert line, "".join(lines)
                lines.append(line)
        finally:
            demo.terminate()
            demo.communicate(timeout=30)
    said = "".join(lines)
    assert "for the first time" in said
    progress = [x for x in lines if x.startswith("embed: ")]
    assert progress, said
    assert re.fullmatch(r"embed: \d+/338 \(\d+\.\d/s, ~\d+ s left\)\n", progress[0]), progress
    assert lines[-1].startswith("indexed "), said
