"""A server follows the index another process changes: a ``briefd index`` from a git hook or
cron under a running ``briefd serve`` is loaded on the server's next flush tick, not by the
next query (which would wait for the vectors and postings: ~0.5 s at 50K chunks)."""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.service import create_app
from briefd.settings import Settings
from briefd.store import reloads
from tests.conftest import EXAMPLE
from tests.service.conftest import service_config
from tests.service.live import TOKEN
from tests.sync.test_routes import eventually

RELOADED = "the index changed: loaded again"
NOTE = "# Wombat desk\n\nThe wombat desk approves every wombat refund within two days.\n"


def index_elsewhere(settings: Settings, tmp_path: Path) -> None:
    """``briefd index`` in another process, of the example plus a new document."""
    source = tmp_path / "knowledge-copy"
    shutil.copytree(EXAMPLE, source)
    (source / "domain" / "wombat-desk.md").write_text(NOTE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    done = subprocess.run(
        [sys.executable, "-m", "briefd", "--db", str(settings.db), "index", "--source", str(source)],
        capture_output=True, text=True, cwd=tmp_path,
        env={**env, "BRIEFD_EMBEDDINGS__ENABLED": "false", "HOME": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_the_server_loads_an_index_another_process_changed_before_the_next_query(
    service_api: Briefd,
    service_settings: Settings,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="briefd.service.state")
    with TestClient(create_app(service_api, service_config(flush_seconds=0.1))) as client:
        assert eventually(lambda: "warm-up: the index loaded" in caplog.text, 10), caplog.text
        index_elsewhere(service_settings, tmp_path)
        assert eventually(lambda: RELOADED in caplog.text, 10), caplog.text
        assert _ticks(caplog) == 1  # once per change: later ticks find it loaded
        response = client.get(
            "/api/search",
            params={"q": "which desk approves a wombat refund"},
            headers={"authorization": f"Bearer {TOKEN}"},
        )
    assert response.status_code == 200, response.text
    paths = [hit["doc_path"] for hit in response.json()["hits"]]
    assert paths[0] == "domain/wombat-desk.md", paths


def test_an_unchanged_index_is_not_loaded_again(
    service_api: Briefd, caplog: pytest.LogCaptureFixture
) -> None:
    """The flush tick reads the content version, and nothing more while it stays the same —
    also not after this server's own writes (the query log, the counters)."""
    caplog.set_level(logging.INFO, logger="briefd.service.state")
    with TestClient(create_app(service_api, service_config(flush_seconds=0.05))) as client:
        for query in ("refund window", "idempotency key reused", "retry backoff"):
            response = client.get(
                "/api/search", params={"q": query}, headers={"authorization": f"Bearer {TOKEN}"}
            )
            assert response.status_code == 200, response.text
        assert eventually(lambda: "warm-up: the index loaded" in caplog.text, 10), caplog.text
        assert not eventually(lambda: RELOADED in caplog.text, 1), caplog.text


def _ticks(caplog: pytest.LogCaptureFixture) -> int:
    return sum(RELOADED in record.getMessage() for record in caplog.records)


def test_a_long_index_run_beside_the_server_is_said_once_a_minute(
    service_api: Briefd,
    service_settings: Settings,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A long run (`briefd index` embedding for minutes) commits a batch every few seconds:
    each was loaded and logged on the next flush tick, a line every 5 s for the whole run."""
    caplog.set_level(logging.INFO, logger="briefd.service.state")
    writer = Briefd(service_settings, embedder=None)
    source = tmp_path / "knowledge-copy"
    shutil.copytree(EXAMPLE, source)
    with writer, TestClient(create_app(service_api, service_config(flush_seconds=0.05))):
        assert eventually(lambda: "warm-up: the index loaded" in caplog.text, 10), caplog.text
        for n in range(3):  # three batches committed, each loaded again
            (source / "domain" / f"wombat-{n}.md").write_text(NOTE.replace("desk", f"desk {n}"))
            writer.index(source)
            assert eventually(lambda: RELOADED in caplog.text, 10), caplog.text
            eventually(lambda: False, 0.5)  # a few flush ticks: the batch is loaded
        assert _ticks(caplog) == 1
        monkeypatch.setattr(reloads, "SAID_EVERY", 0.0)  # the minute is up
        # each run commits its index, then the keyword levels measured on it (I8): two
        # changes a run (the first run's first said alone), or one where a tick finds both
        more = re.compile(r"the index changed (\d+) more times in the last ")
        assert eventually(lambda: more.search(caplog.text) is not None, 10), caplog.text
        said = more.search(caplog.text)
        assert said is not None and 2 <= int(said.group(1)) <= 5, caplog.text
    assert _ticks(caplog) == 1
