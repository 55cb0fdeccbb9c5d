"""A signed webhook delivery is received once by the whole cluster (K3, S1): a delivery
captured and replayed to another replica behind the load balancer is a replay there too,
and while PostgreSQL is away each replica still refuses what it received itself."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from briefd.service import create_app
from briefd.sync.webhook import signature
from tests.postgres import Postgres
from tests.replicas.conftest import synced_pair
from tests.service.conftest import service_config

pytestmark = pytest.mark.replicas
SECRET = "replay-secret-5c2a"


@pytest.fixture
def replicas(tmp_path: Path, postgres: Postgres) -> Iterator[tuple[TestClient, TestClient]]:
    keys = {"sync.webhook_secret": SECRET, "sync.interval": 0, "state.timeout_seconds": 1.0}
    with synced_pair(tmp_path, postgres, **keys) as (a, b, _), ExitStack() as stack:
        clients = [
            stack.enter_context(TestClient(create_app(api, service_config()))) for api in (a, b)
        ]
        yield clients[0], clients[1]


def deliver(client: TestClient, body: bytes, delivery: str, event: str = "push") -> httpx.Response:
    headers = {
        "X-Hub-Signature-256": signature(SECRET, body),
        "X-GitHub-Delivery": delivery,
        "X-GitHub-Event": event,
        "Content-Type": "application/json",
    }
    return client.post("/webhook/git", content=body, headers=headers)


def push(marker: str) -> bytes:
    repository = {"pushed_at": int(time.time()), "description": marker}
    return json.dumps({"ref": "refs/heads/main", "repository": repository}).encode()


def test_a_delivery_replayed_to_another_replica_is_refused(
    replicas: tuple[TestClient, TestClient],
) -> None:
    """Each replica remembered only its own deliveries: the one replayed to replica b was
    accepted (202) and, broadcast, made every replica sync again."""
    a, b = replicas
    body = push("first")

    assert deliver(a, body, "d-1").status_code == 202
    again = deliver(b, body, "d-1")
    renamed = deliver(b, body, "d-2")

    assert again.status_code == 409
    assert again.json()["detail"] == (
        "delivery d-1 was already received; a replayed delivery starts nothing"
    )
    assert renamed.status_code == 409
    assert renamed.json()["detail"] == (
        "the same body was already received; a replayed delivery starts nothing"
    )
    assert deliver(b, push("second"), "d-2").status_code == 202  # a refusal spent no id


def test_without_postgresql_a_replica_refuses_its_own_replays(
    replicas: tuple[TestClient, TestClient], postgres: Postgres
) -> None:
    a, _ = replicas
    postgres.stop()
    try:
        first = deliver(a, push("while away"), "d-away", event="ping")
        replayed = deliver(a, push("while away"), "d-away", event="ping")
    finally:
        postgres.start()

    assert first.status_code == 202 and first.json()["sync"] == "skipped"
    assert replayed.status_code == 409
    assert replayed.json()["detail"].startswith("delivery d-away was already received")
