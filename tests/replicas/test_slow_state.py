"""A PostgreSQL that answers but not in time (S1): a lock held on briefd's tables by another
session (a replica frozen mid-transaction, an operator's VACUUM FULL or LOCK TABLE) costs a
call ``state.timeout_seconds`` at most; bundles are served and health says degraded."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import psycopg
import pytest
from fastapi.testclient import TestClient

from briefd.service import create_app
from tests.postgres import Postgres
from tests.replicas.conftest import synced_pair
from tests.service.conftest import service_config
from tests.service.live import TOKEN

pytestmark = pytest.mark.replicas
AUTH = {"authorization": f"Bearer {TOKEN}"}


def test_a_bundle_is_served_while_a_lock_is_held_on_the_shared_state(
    tmp_path: Path, postgres: Postgres
) -> None:
    """A bundle asked while another session held a lock on bundle_manifests waited for as
    long as it was held (for good, with a replica frozen mid-transaction): the agent's call
    hung, though README says bundles go on from the local index."""
    with (
        synced_pair(tmp_path, postgres, **{"state.timeout_seconds": 1.0}) as (a, _, _),
        TestClient(create_app(a, service_config())) as http,
        psycopg.connect(postgres.url) as holder,
    ):
        holder.execute("LOCK TABLE bundle_manifests IN ACCESS EXCLUSIVE MODE")
        let_go = threading.Timer(8, holder.rollback)  # without a bound, the bundle waits this
        let_go.start()
        started = time.perf_counter()
        served = http.post("/api/bundle", json={"task": "how are refunds retried"}, headers=AUTH)
        took = time.perf_counter() - started
        anonymous = http.get("/api/health").json()
        operator = http.get("/api/health", headers=AUTH).json()
        let_go.cancel()
        holder.rollback()
    assert served.status_code == 200 and served.json()["items"]
    assert took < 3
    assert " did not answer within 1 s (state.timeout_seconds;" in served.json()["state_error"]
    assert anonymous["status"] == operator["status"] == "degraded"
    assert anonymous["state_error"].startswith("the shared state does not answer in time; ")
    assert "statement timeout" in operator["state_error"]
