"""Stopping the server while a rebuild or a sync runs (X0, K3, I5): the shutdown waits for it,
bounded, instead of closing the index under a thread that is still writing (its work lost,
the last flush of counters and query log refused as busy, at worst a crash on the way out)."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import replace

import pytest
from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.embeddings.base import EmbeddingKind, Vectors
from briefd.embeddings.fake import FakeEmbedder
from briefd.service import create_app
from briefd.service.state import ServiceState
from briefd.settings import Settings
from tests.service.conftest import service_config
from tests.service.live import TOKEN


class SlowPassages(FakeEmbedder):
    """The fake model, taking a second for each batch of passages once ``slow`` is set."""

    slow = False

    def embed_batch(self, texts: Sequence[str], kind: EmbeddingKind) -> Vectors:
        if self.slow and kind == "passage":
            time.sleep(1.0)
        return super().embed_batch(texts, kind)


def test_a_rebuild_running_at_shutdown_is_waited_for_and_said(
    service_settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    settings = replace(
        service_settings,
        embeddings=replace(service_settings.embeddings, enabled=True, batch_size=8),
    )
    model = SlowPassages()
    with Briefd(settings, embedder=model) as api:
        api.index()
        model.slow = True
        with caplog.at_level(logging.WARNING, logger="briefd.service"):
            with TestClient(create_app(api, service_config())) as client:
                client.headers["Authorization"] = f"Bearer {TOKEN}"
                assert client.post("/api/admin/rebuild").status_code == 202
                time.sleep(0.3)  # embedding its first batch now
                state: ServiceState = client.app.state.briefd  # type: ignore[attr-defined]
                assert state.jobs["rebuild"].running
            job = state.jobs["rebuild"]
            assert job.finished_at is not None, "the server closed with the rebuild running"
            assert job.error is None and job.summary["documents"] == 45
        assert "waiting up to 8 s for the running sync or rebuild to finish" in caplog.text
        with api.store.read() as conn:
            assert tuple(conn.execute("SELECT count(*) FROM documents").fetchone()) == (45,)


def test_waiting_for_syncs_covers_the_running_one_and_the_one_queued_behind_it() -> None:
    from briefd.sync.runner import SyncRunner
    from briefd.sync.state import SyncReport

    runs: list[float] = []

    def run_once() -> SyncReport:
        time.sleep(0.4)
        runs.append(time.monotonic())
        raise RuntimeError("no source here")  # what the run returns does not matter

    runner = SyncRunner(run_once)
    assert runner.idle
    assert runner.trigger() is True
    time.sleep(0.1)
    assert runner.trigger() is False  # queued behind the running one
    time.sleep(0.4)  # the first has ended, the queued one runs
    assert not runner.idle
    deadline = time.monotonic() + 5
    while not runner.idle and time.monotonic() < deadline:
        time.sleep(0.02)
    assert runner.idle and len(runs) == 2
