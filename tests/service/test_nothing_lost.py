"""Failure 5 of issue 16: lost writes. Invalid Unicode is refused (400) before anything is
queued and never costs the pending query log; a failed log write is retried and drops
nothing; a bundle compiled while another process writes the index is served, recognised by
``report_usage`` and recorded later; an index file deleted or replaced under the server is
noticed (inode), reopened, refilled, and ``/api/health`` says so."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.errors import StoreError
from briefd.service import create_app
from briefd.service.state import ServiceState
from briefd.settings import Settings
from tests.service.conftest import service_config
from tests.service.live import TOKEN
from tests.sync.test_routes import eventually

HOLD = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.readline()
conn.execute("ROLLBACK")
"""


@contextmanager
def another_process_writing(db: Path) -> Iterator[None]:
    """A second process holding the index's write lock, as a long reindex does."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == b"locked"
    try:
        yield
    finally:
        assert holder.stdin is not None
        holder.stdin.write(b"\n")
        holder.stdin.close()
        holder.wait(10)
        holder.stdout.close()


def rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


@pytest.fixture
def http(service_api: Briefd) -> Iterator[TestClient]:
    """The app with a flush interval longer than any test: flushes happen when a test asks."""
    with TestClient(create_app(service_api, service_config(flush_seconds=3600))) as client:
        client.headers["Authorization"] = f"Bearer {TOKEN}"
        yield client


def state_of(client: TestClient) -> ServiceState:
    state: ServiceState = client.app.state.briefd  # type: ignore[attr-defined]
    return state


def test_a_lone_surrogate_is_refused_and_the_pending_log_survives(http: TestClient) -> None:
    for n in range(26):
        assert http.get("/api/search", params={"q": f"chargeback evidence {n}"}).status_code == 200
    for field in ("prompt", "session_id"):
        body = {"prompt": "refund window", "session_id": "s1"}
        raw = json.dumps(body).replace('"' + body[field] + '"', '"\\ud800' + body[field] + '"')
        response = http.post(
            "/api/hook/recall", content=raw, headers={"Content-Type": "application/json"}
        )
        assert response.status_code == 400, response.text
        assert response.json()["detail"] == (
            f"body.{field} is not valid Unicode: a lone surrogate (U+D800) at character 0; "
            "send the text as UTF-8 (in JSON, \\ud800–\\udfff escapes only as pairs)"
        )
    call = (
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": '
        '"search_context", "arguments": {"query": "refund \\udfff"}}}'
    )
    mcp = http.post(
        "/mcp",
        content=call,
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
    )
    assert mcp.status_code == 400
    said = mcp.json()["error"]["message"]  # a JSON-RPC error, which MCP clients show
    assert said.startswith("body.params.arguments.query is not valid Unicode")
    state = state_of(http)
    state.flush()
    logged = [e.query for e in state.api.state.recent_queries(100)]
    assert sorted(logged) == sorted(f"chargeback evidence {n}" for n in range(26))
    assert http.get("/api/search", params={"q": "still answering"}).status_code == 200


def test_a_failed_log_write_is_retried_and_drops_nothing(
    http: TestClient, service_settings: Settings
) -> None:
    state = state_of(http)
    for n in range(5):
        http.get("/api/search", params={"q": f"soft decline {n}"})
    with another_process_writing(service_settings.db):
        with pytest.raises(StoreError, match=r"is busy"):
            state.flush()
        state.log_query("search", "bad \ud800 text", (), 0, None, 1.0, None)  # past the front ends
        http.get("/api/search", params={"q": "soft decline 5"})
    state.flush()
    logged = [e.query for e in state.api.state.recent_queries(100)]
    assert sorted(logged) == sorted([f"soft decline {n}" for n in range(6)] + ["bad \ufffd text"])


def test_a_bundle_served_while_another_process_writes_is_recorded(
    http: TestClient, service_settings: Settings
) -> None:
    db = service_settings.db
    with another_process_writing(db):
        started = time.monotonic()
        bundle = http.post("/api/bundle", json={"task": "retry a soft decline", "format": "json"})
        assert bundle.status_code == 200 and time.monotonic() - started < 5
        served = bundle.json()
        chunk = served["items"][0]["chunk_id"]
        usage = http.post(
            "/api/usage", json={"bundle_id": served["bundle_id"], "useful_chunk_ids": [chunk]}
        )
        assert usage.status_code == 200, usage.text
        assert usage.json()["stored"] == 1
        assert rows(db, "SELECT count(*) FROM usage_events") == [(0,)]  # not yet: locked
    state_of(http).flush()
    assert rows(db, "SELECT bundle_id, chunk_id FROM usage_events") == [
        (served["bundle_id"], chunk)
    ]
    assert rows(db, f"SELECT count(*) FROM bundles WHERE id = '{served['bundle_id']}'") == [(1,)]


def test_a_deleted_index_file_is_noticed_reopened_and_refilled(
    service_api: Briefd, service_settings: Settings
) -> None:
    """The queries answered before the deletion and not yet saved are saved into the new file
    (while it is filled, requests are told it is being built: tests/service/test_refill.py)."""
    db = service_settings.db
    with TestClient(create_app(service_api, service_config(flush_seconds=60))) as client:
        client.headers["Authorization"] = f"Bearer {TOKEN}"
        assert client.get("/api/health").json()["notice"] is None
        for n in range(21):
            client.get("/api/search", params={"q": f"refund window {n}"})
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        health = client.get("/api/health").json()
        assert health["notice"].startswith("the index file was deleted at ")
        assert eventually(lambda: client.get("/api/health").json()["documents"] == 45)
        hits = client.get("/api/search", params={"q": "chargeback evidence deadline"})
        assert hits.json()["hits"], hits.text
        state_of(client).flush()
    logged = {q for (q,) in rows(db, "SELECT query FROM query_log")}
    assert {f"refund window {n}" for n in range(21)} <= logged


def test_a_replaced_index_file_is_reopened(
    service_api: Briefd, service_settings: Settings, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    (other / "domain").mkdir(parents=True)
    (other / "domain" / "wombats.md").write_text("# Wombats\n\nWombat onboarding checklist.\n")
    built = tmp_path / "built.db"
    shutil.copyfile(service_settings.db, built)
    from dataclasses import replace

    with Briefd(replace(service_settings, db=built), embedder=None) as builder:
        builder.index(other)
    with TestClient(create_app(service_api, service_config())) as client:
        client.headers["Authorization"] = f"Bearer {TOKEN}"
        assert client.get("/api/search", params={"q": "wombat"}).json()["hits"] == []
        built.replace(service_settings.db)
        Path(f"{service_settings.db}-wal").unlink(missing_ok=True)
        Path(f"{service_settings.db}-shm").unlink(missing_ok=True)
        hits = client.get("/api/search", params={"q": "wombat onboarding"}).json()["hits"]
        assert [h["doc_path"] for h in hits] == ["domain/wombats.md"]
        health = client.get("/api/health").json()
        assert health["documents"] == 1
        assert health["notice"].startswith("the index file was replaced at ")


def test_an_index_damaged_while_serving_is_a_503_that_says_rebuild(
    service_api: Briefd, service_settings: Settings
) -> None:
    """Pages of the open index lost (a truncated or damaged file) surface on a read past the
    open: the answer is the store's 503 naming the file and `briefd index --rebuild`, and the
    MCP tool says the same as an error result, never an unhandled 500."""
    db = service_settings.db
    app = create_app(service_api, service_config())
    with TestClient(app, raise_server_exceptions=False) as client:
        client.headers["Authorization"] = f"Bearer {TOKEN}"
        assert client.get("/api/search", params={"q": "refund window"}).json()["hits"]
        with db.open("r+b") as file:
            file.truncate(db.stat().st_size // 3)
        answer = client.get("/api/search", params={"q": "chargeback evidence deadline"})
        assert answer.status_code == 503, answer.text
        assert answer.json() == {
            "error": "store",
            "detail": f"{db} is not a usable briefd index (database disk image is malformed); "
            "rebuild it with `briefd index --rebuild`",
        }


def test_an_index_damaged_while_serving_says_so_and_is_rebuilt_from_the_dashboard(
    service_api: Briefd, service_settings: Settings
) -> None:
    """``/api/health`` says the index is damaged (not "ok" while every request is a 503 that
    says to rebuild); the dashboard's rebuild (``POST /api/admin/rebuild``) does so from the
    configured source, and the server answers from the new file."""
    db = service_settings.db
    app = create_app(service_api, service_config())
    with TestClient(app, raise_server_exceptions=False) as client:
        client.headers["Authorization"] = f"Bearer {TOKEN}"
        with db.open("r+b") as file:
            file.truncate(db.stat().st_size // 3)
        query = {"q": "chargeback evidence deadline"}
        assert client.get("/api/search", params=query).status_code == 503
        health = client.get("/api/health").json()
        assert health["status"] == "damaged", health
        assert health["notice"].startswith("the index file was found damaged at ")
        assert health["notice"].endswith(
            " (database disk image is malformed); rebuild it: the dashboard's rebuild, "
            "POST /api/admin/rebuild or `briefd index --rebuild`"
        )
        assert str(db.parent) not in health["notice"]  # /api/health needs no token
        started = client.post("/api/admin/rebuild")
        assert started.status_code == 202, started.text
        assert eventually(lambda: _rebuild_job(client).get("finished_at") is not None)
        job = client.get("/api/stats").json()["jobs"]["rebuild"]
        assert (job["error"], job["summary"]["documents"]) == (None, 45)
        hits = client.get("/api/search", params=query).json()["hits"]
        assert hits[0]["doc_path"] == "domain/chargebacks.md"
        health = client.get("/api/health").json()
        assert (health["status"], health["documents"]) == ("ok", 45)
        assert health["notice"].startswith("the index file was replaced at ")


def _rebuild_job(client: TestClient) -> dict[str, object]:
    """The rebuild job in ``/api/stats`` ({} while the stats cannot be read: a damaged index)."""
    jobs = client.get("/api/stats").json().get("jobs") or {}
    return dict(jobs.get("rebuild") or {})
