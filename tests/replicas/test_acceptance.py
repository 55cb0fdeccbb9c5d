"""Issue 21's acceptance: two ``briefd serve`` replicas on 127.0.0.1 sharing a real
PostgreSQL, behind a real nginx doing round robin, following one git remote. The tests run in
order: the last two take a replica and then PostgreSQL away (and bring them back)."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from typing import Any

import httpx
import psycopg
import pytest

from briefd.sync.webhook import signature
from tests.postgres import Postgres
from tests.replicas.cluster import SECRET, Cluster
from tests.sync.gitrepo import Remote, git

pytestmark = pytest.mark.replicas

TASK = "add a refund endpoint that retries failed payments idempotently"


def post(url: str, path: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(url + path, json=body, timeout=30)


def upstream(response: httpx.Response) -> str:
    return response.headers["x-upstream"].split(",")[-1].strip()


def test_health_names_the_replica_the_engine_and_the_commit(
    cluster: Cluster, remote: Remote
) -> None:
    seen = {}
    for r in cluster.replicas:
        health = httpx.get(f"{r.url}/api/health").json()
        assert (health["status"], health["state"]) == ("ok", "postgresql")
        assert health["commit"] == remote.head()
        seen[health["replica"]] = health
    assert sorted(seen) == ["replica-1", "replica-2"]
    answered = {upstream(httpx.get(f"{cluster.balancer.url}/api/health")) for _ in range(4)}
    assert len(answered) == 2  # round robin


def test_a_base_from_one_replica_is_a_delta_through_the_other(cluster: Cluster) -> None:
    lb = cluster.balancer.url
    first = post(lb, "/api/bundle", {"task": TASK, "max_tokens": 2000})
    assert first.status_code == 200, first.text
    compiled_on = upstream(first)
    bundle = first.json()
    assert bundle["items"] if "items" in bundle else bundle["text"]
    for _ in range(3):  # the next request through nginx goes to the other replica
        second = post(
            lb, "/api/bundle", {"task": TASK, "max_tokens": 2000, "base": bundle["bundle_id"]}
        )
        if upstream(second) != compiled_on:
            break
    assert upstream(second) != compiled_on
    answer = second.json()
    assert not answer.get("recovered"), answer
    entries = answer["delta"]["entries"]
    assert entries and {e["op"] for e in entries} == {"reuse"}
    assert answer["bundle_id"] == bundle["bundle_id"]  # deterministic from content


def test_a_hook_session_alternating_between_replicas_never_repeats_a_section(
    cluster: Cluster,
) -> None:
    prompts = [
        "how do refunds work for a partial capture",
        "what is the retry policy for failed payments",
        "how do we handle chargebacks and disputes",
        "which currency rounding rule applies to fees",
        "what does idempotency mean for the payments api",
        "how does settlement and reconciliation work",
        "refunds after a chargeback: what happens",
        "retry policy and idempotency keys together",
    ]
    injected: list[str] = []
    replicas: Counter[str] = Counter()
    for prompt in prompts:
        response = post(
            cluster.balancer.url,
            "/api/hook/recall?format=json",
            {  # the gate's verdict alone (no keyword tiers): sections to repeat, or not
                "prompt": prompt,
                "session_id": "session-alternating",
                "hook_event_name": "x",
                "mode": "bm25",
            },
        )
        assert response.status_code == 200, response.text
        replicas[upstream(response)] += 1
        result = response.json()
        assert not result.get("notes"), result["notes"]
        injected += [s["chunk_id"] for s in result["sections"]]
    assert len(replicas) == 2 and min(replicas.values()) >= 3
    assert injected and len(injected) == len(set(injected)), Counter(injected).most_common(3)


def test_a_proposal_through_one_replica_is_listed_by_both_and_pushed_once(
    cluster: Cluster, remote: Remote
) -> None:
    new = (remote.work / "domain" / "refunds.md").read_text() + "\n\nRefunds close after 90 days.\n"
    made = post(
        cluster.balancer.url,
        "/api/proposals",
        {"doc_path": "domain/refunds.md", "change_description": "90 days", "new_content": new},
    )
    assert made.status_code in (200, 201), made.text
    proposal = made.json()
    for r in cluster.replicas:
        listed = httpx.get(f"{r.url}/api/proposals").json()["proposals"]
        assert [p["id"] for p in listed] == [proposal["id"]]
    branches = git(remote.bare, "branch", "--list", "briefd/proposal-*").split()
    assert branches == [proposal["branch"]]


def test_a_webhook_to_one_replica_makes_a_push_searchable_through_both(
    cluster: Cluster, remote: Remote
) -> None:
    commit = remote.push(
        {"domain/quokka-ledger.md": "# Quokka ledger\n\nThe quokka ledger balances nightly.\n"},
        "a new document",
    )
    body = json.dumps({"ref": "refs/heads/main", "after": commit}).encode()
    headers = {"X-Hub-Signature-256": signature(SECRET, body), "X-GitHub-Event": "push"}
    started = time.monotonic()
    answer = httpx.post(f"{cluster.replicas[0].url}/webhook/git", content=body, headers=headers)
    assert answer.status_code == 202, answer.text
    found: set[str] = set()
    while time.monotonic() - started < 10 and len(found) < 2:
        for r in cluster.replicas:
            hits = httpx.get(f"{r.url}/api/search", params={"q": "quokka ledger"}).json()["hits"]
            if hits and hits[0]["doc_path"] == "domain/quokka-ledger.md":
                found.add(r.name)
        time.sleep(0.2)
    assert found == {"replica-1", "replica-2"}, f"after {time.monotonic() - started:.1f} s"
    for r in cluster.replicas:  # both serve, and say, the new commit
        assert httpx.get(f"{r.url}/api/health").json()["commit"] == commit
    listed = httpx.get(f"{cluster.balancer.url}/api/sync").json()["replicas"]
    assert {(r["replica"], r["commit"]) for r in listed} == {
        ("replica-1", commit),
        ("replica-2", commit),
    }


def test_the_usage_report_and_gaps_are_the_teams_through_either_replica(cluster: Cluster) -> None:
    lb = cluster.balancer.url
    answered = {
        upstream(httpx.get(f"{lb}/api/search", params={"q": f"zebra {i}"})) for i in range(6)
    }
    assert len(answered) == 2
    with psycopg.connect(cluster.state_url) as conn:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # each replica writes its log every 0.5 s
            sql = "SELECT replica FROM query_log WHERE query LIKE 'zebra %'"
            logged = Counter(r[0] for r in conn.execute(sql))
            if sum(logged.values()) == 6:
                break
            time.sleep(0.2)
    assert sorted(logged) == ["replica-1", "replica-2"] and sum(logged.values()) == 6
    usage = [httpx.get(f"{r.url}/api/usage").json() for r in cluster.replicas]
    gaps = [httpx.get(f"{r.url}/api/gaps").json() for r in cluster.replicas]
    assert usage[0]["requests"] == usage[1]["requests"] >= 6  # the team's, through either
    assert usage[0]["surfaces"] == usage[1]["surfaces"]
    assert gaps[0]["groups"] == gaps[1]["groups"] >= 6


def load(lb: str, bundle_id: str, chunk: str, seconds: float, outcome: dict[str, Any]) -> None:
    """Searches and usage reports through nginx until ``seconds`` pass. nginx retries a request
    on the other replica when the killed one fails before answering; a response the replica
    was already streaming when it died reaches the client cut short, and the client retries
    it once (the acceptance: zero requests lost after the retry)."""
    end = time.monotonic() + seconds
    with httpx.Client(timeout=30) as client:
        i = 0
        while time.monotonic() < end:
            i += 1
            name = f"{threading.current_thread().name}-{i}"
            try:
                r = _send(client, lb, i, bundle_id, chunk, name, outcome)
            except httpx.HTTPError as exc:
                outcome["failures"].append(repr(exc))
                continue
            if i % 2 == 0 and r.status_code == 200:
                outcome["usage"].append(name)
            outcome["codes"][r.status_code] += 1
            if r.status_code != 200:
                outcome["failures"].append(f"{r.status_code} {r.text[:200]}")


def _send(
    client: httpx.Client,
    lb: str,
    i: int,
    bundle_id: str,
    chunk: str,
    name: str,
    outcome: dict[str, Any],
) -> httpx.Response:
    for attempt in (1, 2):
        try:
            if i % 2:
                return client.get(f"{lb}/api/search", params={"q": "refund retry"})
            body = {"bundle_id": bundle_id, "useful_chunk_ids": [chunk], "client": name}
            return client.post(f"{lb}/api/usage", json=body)
        except httpx.TransportError:
            if attempt == 2:
                raise
            outcome["retried"] += 1
    raise AssertionError("unreachable")


def test_sigkill_of_a_replica_under_load_loses_no_request_and_no_usage_event(
    cluster: Cluster, postgres: Postgres
) -> None:
    lb = cluster.balancer.url
    bundle = post(lb, "/api/bundle", {"task": TASK, "max_tokens": 2000, "mode": "package"})
    compiled = bundle.json()
    chunk = compiled["items"][0]["chunk_id"]
    outcome: dict[str, Any] = {"codes": Counter(), "failures": [], "usage": [], "retried": 0}
    threads = [
        threading.Thread(
            target=load, args=(lb, compiled["bundle_id"], chunk, 12, outcome), name=f"t{i}"
        )
        for i in range(4)
    ]
    for t in threads:
        t.start()
    time.sleep(4)
    victim = cluster.replicas[1]
    victim.kill()
    for t in threads:
        t.join()
    try:
        assert outcome["failures"] == []
        assert sum(outcome["codes"].values()) > 50
        assert outcome["retried"] <= 4  # at most the responses in flight on the killed replica
        with psycopg.connect(cluster.state_url) as conn:
            stored = {r[0] for r in conn.execute("SELECT client FROM usage_events")}
        assert set(outcome["usage"]) <= stored  # every acknowledged report is there
    finally:
        victim.start()


def test_postgres_stopped_and_restarted_search_never_fails_health_degrades_and_recovers(
    cluster: Cluster, postgres: Postgres, remote: Remote
) -> None:
    lb = cluster.balancer.url
    replica = cluster.replicas[0]
    failures: list[str] = []
    statuses: list[str] = []
    stop = threading.Event()

    def search_forever() -> None:
        with httpx.Client(timeout=30) as client:
            while not stop.is_set():
                r = client.get(f"{lb}/api/search", params={"q": "chargeback dispute"})
                if r.status_code != 200 or not r.json()["hits"]:
                    failures.append(f"{r.status_code} {r.text[:200]}")

    searcher = threading.Thread(target=search_forever)
    searcher.start()
    try:
        time.sleep(1)
        postgres.stop()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            health = httpx.get(f"{replica.url}/api/health").json()
            statuses.append(health["status"])
            if health["status"] == "degraded":
                break
            time.sleep(0.2)
        assert statuses[-1] == "degraded" and "unreachable" in health["state_error"]
        refused = post(replica.url, "/api/usage", {"bundle_id": "0123456789abcdef"})
        assert refused.status_code == 503 and "unreachable" in refused.json()["detail"]
        branches = git(remote.bare, "branch", "--list", "briefd/proposal-*")
        change = {
            "doc_path": "domain/fees.md",
            "change_description": "x",
            "new_content": "# Fees\n",
        }
        unpushed = post(replica.url, "/api/proposals", change)
        assert unpushed.status_code == 503 and "nothing was pushed" in unpushed.json()["detail"]
        assert git(remote.bare, "branch", "--list", "briefd/proposal-*") == branches
        served = post(replica.url, "/api/bundle", {"task": "settlement timing", "max_tokens": 1500})
        assert served.status_code == 200 and "unreachable" in served.json()["state_error"]
        recall = post(
            replica.url,
            "/api/hook/recall?format=json",
            {"prompt": "refund window", "session_id": "s-down"},
        )
        assert recall.status_code == 200 and "unreachable" in " ".join(recall.json()["notes"])
        time.sleep(1)
    finally:
        postgres.start()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if httpx.get(f"{replica.url}/api/health").json()["status"] == "ok":
            break
        time.sleep(0.2)
    stop.set()
    searcher.join()
    assert httpx.get(f"{replica.url}/api/health").json()["status"] == "ok"
    assert failures == []
    logged = httpx.post(f"{replica.url}/api/usage", json={"bundle_id": "0123456789abcdef"})
    assert logged.status_code == 404  # the state answers again (that bundle was never issued)
