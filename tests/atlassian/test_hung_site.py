"""A Jira that stops answering (A2, B1): each lookup waits up to ``timeout_seconds`` on one of
the server's worker threads (anyio's 40, shared by every REST route and MCP tool), so issue
bundles asked while it hangs must not take them all: searches keep answering."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx
import pytest

from briefd.api import Briefd
from briefd.atlassian.service import MAX_WAITING
from briefd.errors import IntegrationError
from briefd.service import create_app
from tests.atlassian.conftest import SERVICE_EMAIL, SERVICE_TOKEN, facade
from tests.atlassian.fake import FakeSite
from tests.atlassian.test_service import live_api
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving

__all__ = ["live_api"]  # the fixture: the example index with the fake Cloud site
HANG = 6.0  # seconds the hung Jira takes to answer an issue (within its 20 s timeout)


def test_searches_answer_while_issue_bundles_wait_for_a_hung_jira(
    live_api: Briefd, cloud: FakeSite
) -> None:
    """45 bundles headed by SHOP-42 while Jira takes 6 s to answer: a search asked meanwhile
    waited for a worker thread until the first of them came back (every thread was waiting
    on Jira); now it answers while they wait, and the bundles past those waiting are told at
    once that Jira is not keeping up."""
    cloud.script(r"/issue/SHOP-42$", 200, body={}, delay=HANG, times=100)
    done: dict[str, float] = {}
    statuses: list[int] = []
    with serving(create_app(live_api, service_config())) as base:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        limits = httpx.Limits(max_connections=100)
        with httpx.Client(base_url=base, headers=headers, timeout=60, limits=limits) as http:

            def bundle(n: int) -> None:
                answer = http.post("/api/bundle", json={"issue": "SHOP-42"})
                statuses.append(answer.status_code)
                done.setdefault(f"bundle {answer.status_code}", time.monotonic())

            workers = [threading.Thread(target=bundle, args=(n,)) for n in range(45)]
            for worker in workers:
                worker.start()
            deadline = time.monotonic() + 10
            while len(cloud.seen) < MAX_WAITING and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.5)  # the rest of the 45 have reached the server
            search = http.get("/api/search", params={"q": "partial refunds"})
            done["search"] = time.monotonic()
            for worker in workers:
                worker.join()
    assert search.status_code == 200 and search.json()["hits"]
    assert done["search"] < done["bundle 200"]  # answered before any waiting bundle came back
    assert statuses.count(200) == MAX_WAITING and statuses.count(502) == 45 - MAX_WAITING
    assert len([s for s in cloud.seen if s.path.endswith("/issue/SHOP-42")]) == MAX_WAITING


def test_a_lookup_past_those_waiting_for_a_site_is_not_sent_and_says_why(
    tmp_path: Path, cloud: FakeSite
) -> None:
    api = facade(tmp_path, cloud, **{"jira.timeout_seconds": 20})
    cloud.script(r"/issue/SHOP-42$", 200, body={}, delay=3, times=MAX_WAITING)
    workers = [
        threading.Thread(target=api.jira_issue, args=("SHOP-42", False, 2000, None))
        for _ in range(MAX_WAITING)
    ]
    for worker in workers:
        worker.start()
    deadline = time.monotonic() + 10
    while len(cloud.seen) < MAX_WAITING and time.monotonic() < deadline:
        time.sleep(0.02)
    with pytest.raises(IntegrationError) as refused:
        api.jira_issue("SHOP-43", False, 2000, None)
    said = str(refused.value)
    assert said == (
        f"Jira at {cloud.url} is not keeping up: {MAX_WAITING} lookups are waiting for its "
        "answers already (each up to 20 s, jira.timeout_seconds), so this one was not sent; try "
        f"again shortly, and if it persists check that {cloud.url} is up"
    )
    assert SERVICE_TOKEN not in said and SERVICE_EMAIL not in said
    assert not [s for s in cloud.seen if "SHOP-43" in s.path]
    for worker in workers:
        worker.join()
    answer = api.jira_issue("SHOP-42", False, 2000, None)  # the site answers again: asked
    assert answer.issue.key == "SHOP-42"
