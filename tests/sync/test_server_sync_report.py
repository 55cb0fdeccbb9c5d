"""K3, T1: what a sync the server runs did besides reindexing (the forge's error, each
proposal's change of status) reaches its log and its job, as `briefd sync` prints it."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.proposals import ProposalRequest
from briefd.service import create_app
from tests.proposals.test_github import NEW_RETRY, PULLS, TOKEN_ENV, FakeGitHub, forge_settings
from tests.service.conftest import service_config
from tests.service.live import TOKEN
from tests.sync.gitrepo import Remote

pytest_plugins = ["tests.proposals.test_github"]  # its fake GitHub fixture


@pytest.fixture
def client(
    tmp_path: Path, remote: Remote, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[TestClient, Briefd]]:
    monkeypatch.setenv(TOKEN_ENV, "ghp_test")
    with Briefd(forge_settings(tmp_path, remote, github), embedder=None) as api:
        api.sync()
        with TestClient(create_app(api, service_config())) as http:
            http.headers["Authorization"] = f"Bearer {TOKEN}"
            yield http, api


def synced(http: TestClient) -> dict[str, object]:
    """The job of an admin sync, once it ended."""
    assert http.post("/api/admin/sync").status_code == 202
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        job = http.get("/api/stats").json()["jobs"]["sync"]
        if job["finished_at"]:
            return dict(job)
        time.sleep(0.05)
    raise AssertionError("the sync did not end")


def test_a_servers_sync_logs_and_tells_the_forge_error_and_the_status_changes(
    client: tuple[TestClient, Briefd], github: FakeGitHub, caplog: pytest.LogCaptureFixture
) -> None:
    """Run by `briefd serve` (polling, a webhook, the dashboard), a sync whose forge answered
    5xx said so nowhere (`briefd sync` by hand warns), and a proposal merged or closed left no
    line in the server's log: a team learnt of neither."""
    http, api = client
    made = api.propose_update(ProposalRequest("domain/retry.md", "four tries", NEW_RETRY))
    github.fail_reads = True
    with caplog.at_level(logging.INFO, logger="briefd.sync"):
        job = synced(http)
    failed = f"GitHub GET {PULLS}/1 answered 500"
    assert job["error"] is None
    summary = job["summary"]
    assert isinstance(summary, dict) and summary["proposals_changed"] == []
    assert str(summary["forge_error"]).startswith(failed), summary
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert [m for m in warned if m.startswith("pull request statuses not refreshed: ")] == [
        f"pull request statuses not refreshed: {summary['forge_error']}"
    ]
    github.fail_reads = False
    github.merge(1)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="briefd.sync"):
        job = synced(http)
    assert job["summary"] == {**job["summary"], "proposals_changed": [f"{made.id}: open → merged"]}
    assert job["summary"]["forge_error"] is None
    assert f"proposal {made.id}: open → merged" in [r.getMessage() for r in caplog.records]
