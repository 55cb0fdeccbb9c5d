"""Replicas (issue 21): throughput and p50/p99 of one ``briefd serve`` against two behind a
real nginx (round robin), and what PostgreSQL-backed shared state adds to a bundle and a hook
call. Everything on 127.0.0.1 — servers, nginx, PostgreSQL and the load generator share this
machine's cores, so the ratio is what *this* machine gives, not a scaling law.

    .venv/bin/python bench/replicas.py [--seconds 8] [--clients 8]

Needs PostgreSQL's server binaries and nginx (``.ci/run`` installs both); skips cleanly
without them. Embeddings are off (BM25): the numbers are the service's, not the model's.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from common import REPO, WORK, load_average, summary
from report import print_table

sys.path.insert(0, str(REPO))
from tests.postgres import drop_postgres, free_port, start_postgres
from tests.replicas.cluster import Replica, nginx_binary, replica_env, start_cluster
from tests.replicas.conftest import example_files
from tests.sync.gitrepo import Remote

QUERIES = [
    "refund window",
    "retry policy",
    "chargeback dispute",
    "settlement timing",
    "idempotency key",
    "currency rounding",
    "merchant onboarding",
    "fraud screening",
]
TASKS = [f"change the {q} rules for card payments" for q in QUERIES]


def stats(values: list[float]) -> dict[str, float]:
    return {**summary(values), "p99": round(float(np.percentile(values, 99)), 2)}


def hammer(url: str, seconds: float, clients: int) -> dict[str, Any]:
    """``clients`` threads searching as fast as answers come, for ``seconds``."""
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()

    def client(offset: int) -> None:
        mine: list[float] = []
        with httpx.Client(timeout=30) as http:
            end, i = time.monotonic() + seconds, offset
            while time.monotonic() < end:
                started = time.perf_counter()
                r = http.get(f"{url}/api/search", params={"q": QUERIES[i % len(QUERIES)]})
                mine.append((time.perf_counter() - started) * 1000)
                if r.status_code != 200:
                    with lock:
                        errors[0] += 1
                i += 1
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"rps": round(len(latencies) / seconds, 1), "errors": errors[0], **stats(latencies)}


def calls(url: str, rounds: int, session: str) -> dict[str, Any]:
    """p50/p99 of a bundle (cached after the first round) and a hook call (session memory)."""
    bundle: list[float] = []
    hook: list[float] = []
    with httpx.Client(timeout=30) as http:
        for n in range(rounds):
            for i, task in enumerate(TASKS):
                started = time.perf_counter()
                http.post(f"{url}/api/bundle", json={"task": task, "max_tokens": 2000})
                bundle.append((time.perf_counter() - started) * 1000)
                body = {"prompt": QUERIES[i], "session_id": f"{session}-{n}"}
                started = time.perf_counter()
                http.post(f"{url}/api/hook/recall", json=body)
                hook.append((time.perf_counter() - started) * 1000)
    return {"bundle": stats(bundle), "hook": stats(hook)}


def measure(seconds: float, clients: int, rounds: int) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="briefd-bench-replicas-"))
    pg = start_postgres()
    try:
        remote = Remote(root / "git")
        remote.push(example_files(), "the example knowledge")
        cluster = start_cluster(root / "cluster", remote.url, pg.url)
        local_home = root / "local"
        local_home.mkdir()
        env = replica_env(local_home, "local", remote.url, "")
        env.pop("BRIEFD_STATE__URL")
        local = Replica("local", local_home, free_port(), env)
        try:
            local.start()
            for url in (cluster.replicas[0].url, cluster.balancer.url, local.url):
                hammer(url, 1, 2)  # warm
            one = hammer(cluster.replicas[0].url, seconds, clients)
            two = hammer(cluster.balancer.url, seconds, clients)
            sqlite_state = calls(local.url, rounds, "bench-sqlite")
            pg_state = calls(cluster.replicas[0].url, rounds, "bench-pg")
        finally:
            local.stop()
            cluster.stop()
    finally:
        drop_postgres(pg)
        shutil.rmtree(root, ignore_errors=True)
    return {"one": one, "two": two, "sqlite": sqlite_state, "postgresql": pg_state}


def _pp(s: dict[str, float]) -> str:
    return f"p50 {s['p50']:.1f} / p99 {s['p99']:.1f} ms"


def rows(r: dict[str, Any], clients: int) -> list[tuple[str, str, str, str]]:
    one, two = r["one"], r["two"]
    ratio = two["rps"] / one["rps"] if one["rps"] else 0.0
    added = {k: r["postgresql"][k]["p50"] - r["sqlite"][k]["p50"] for k in ("bundle", "hook")}
    pg = r["postgresql"]
    return [
        (f"search, one replica ({clients} clients)", f"{one['rps']} req/s, {_pp(one)}", "", ""),
        ("search, two replicas behind nginx", f"{two['rps']} req/s, {_pp(two)}", "", ""),
        ("two / one (2 cores: nginx, PostgreSQL, clients too)", f"{ratio:.2f}×", "", ""),
        ("bundle, state in SQLite", _pp(r["sqlite"]["bundle"]), "", ""),
        ("bundle, state in PostgreSQL", f"{_pp(pg['bundle'])} ({added['bundle']:+.1f} ms)", "", ""),
        ("hook call, state in SQLite", _pp(r["sqlite"]["hook"]), "", ""),
        ("hook call, state in PostgreSQL", f"{_pp(pg['hook'])} ({added['hook']:+.1f} ms)", "", ""),
    ]


def main(argv: list[str] | None = None) -> dict[str, Any] | None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args(argv)
    if nginx_binary() is None or shutil.which("runuser") is None:
        print("replica bench skipped: nginx or PostgreSQL is missing (see .ci/run)")
        return None
    start = load_average()
    try:
        results = measure(args.seconds, args.clients, args.rounds)
    except BaseException as exc:  # pytest.skip from start_postgres without the server
        if type(exc).__name__ == "Skipped":
            print(f"replica bench skipped: {exc}")
            return None
        raise
    load = f"{start} → {load_average()}"
    WORK.mkdir(parents=True, exist_ok=True)
    (WORK / "replicas.json").write_text(json.dumps({"load_average": load, **results}, indent=2))
    section = "replicas behind nginx, state in PostgreSQL (example knowledge, BM25)"
    print_table(f"briefd replicas · loopback · load {load}", {section: rows(results, args.clients)})
    return results


if __name__ == "__main__":
    main()
