"""What one replica's stats (I2, and the dashboard's Proposals panel, I5) say about the team's
proposals (T1), read from the shared PostgreSQL state: every status, as on one node."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from briefd.proposals import ProposalRequest
from briefd.service import create_app
from tests.postgres import Postgres
from tests.replicas.conftest import synced_pair
from tests.service.conftest import service_config
from tests.service.live import TOKEN

pytestmark = pytest.mark.replicas


def test_a_pushed_proposal_is_counted_on_every_replica(tmp_path: Path, postgres: Postgres) -> None:
    with synced_pair(tmp_path, postgres) as (a, b, remote):
        new = (remote.work / "domain" / "refunds.md").read_text() + "\nRefunds close in 90 days.\n"
        made = a.propose_update(ProposalRequest("domain/refunds.md", "90 days", new))
        assert made.status == "pushed"
        with TestClient(create_app(b, service_config())) as http:
            http.headers["Authorization"] = f"Bearer {TOKEN}"
            counts = http.get("/api/stats").json()["proposals"]
            listed = http.get("/api/proposals").json()["proposals"]
    assert [p["status"] for p in listed] == ["pushed"]
    assert counts == {"open": 0, "merged": 0, "closed": 0, "pushed": 1}
