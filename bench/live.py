"""Live Jira lookups (A2, B1): a ``jira_issue`` and a bundle headed by a Jira issue, round trip
against the fake Jira Cloud site of the tests (tests/atlassian/fake.py, served by uvicorn in a
thread of this process on 127.0.0.1), and briefd's own overhead over the HTTP floor.

    .venv/bin/python bench/live.py [--rounds 200]      # run.py includes it too

* floor — the three requests ``jira_issue`` makes (issue with renderedFields, remote links,
  comments) sent with one warm ``httpx.Client`` on a kept connection: what any client pays
  for the fake's answers (briefd opens a connection per call: that is part of its overhead);
* ``jira_issue`` — the same through ``Briefd.atlassian`` (JQL-free: key check, allow-list,
  auth header, parsing, HTML → Markdown, rendering, cutting to 2,000 tokens); overhead is its
  median minus the floor's;
* bundle — ``compile_bundle(issue="SHOP-42")`` on the example knowledge (BM25): the fetch, then
  either a compile (a new budget each round: a cache miss) or an in-process LRU hit.
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import httpx
from common import REPO, WORK, fresh, settings_for, summary
from report import print_table

sys.path.insert(0, str(REPO))
from tests.atlassian.fake import FakeSite, serve

from briefd.api import Briefd
from briefd.bundles import BundleRequest

EMAIL, TOKEN = "bench@example.com", "bench-token"
Row = tuple[str, str, str, str]


def _timed(fn: Callable[[], object], rounds: int) -> dict[str, float]:
    fn()  # warm: imports, connections, the encoder
    values = []
    for _ in range(rounds):
        started = time.perf_counter()
        fn()
        values.append((time.perf_counter() - started) * 1000)
    return summary(values)


def measure(rounds: int = 200) -> dict[str, Any]:
    WORK.mkdir(parents=True, exist_ok=True)
    os.environ |= {"BENCH_JIRA_TOKEN": TOKEN, "BENCH_JIRA_EMAIL": EMAIL}  # as a server has them
    site = FakeSite("cloud", {TOKEN: EMAIL})
    with serve(site) as url:
        settings = settings_for(
            fresh(WORK / "live.db"),
            REPO / "testdata" / "knowledge",
            embeddings=False,
            jira__url=url,
            jira__projects=["SHOP"],
            jira__token_env="BENCH_JIRA_TOKEN",
            jira__email_env="BENCH_JIRA_EMAIL",
        )
        with Briefd(settings, embedder=None) as api:
            api.index()
            auth = "Basic " + base64.b64encode(f"{EMAIL}:{TOKEN}".encode()).decode()
            issue_params = {"expand": "renderedFields,names", "fields": "summary,description"}
            comments = {"expand": "renderedBody", "orderBy": "-created", "maxResults": "50"}

            http = httpx.Client(base_url=url, headers={"Authorization": auth})

            def floor() -> None:  # a warm client on a kept connection: the best case
                http.get("/rest/api/3/issue/SHOP-42", params=issue_params).json()
                http.get("/rest/api/3/issue/SHOP-42/remotelink").json()
                http.get("/rest/api/3/issue/SHOP-42/comment", params=comments).json()

            budgets = iter(range(1000, 1000 + 10 * rounds))
            with http:
                base = _timed(floor, rounds)
            return {
                "floor": base,
                "jira_issue": _timed(
                    lambda: api.atlassian.jira_issue("SHOP-42", True, 2000, None), rounds
                ),
                "bundle_miss": _timed(
                    lambda: api.compile_bundle(
                        BundleRequest("", max_tokens=next(budgets), issue="SHOP-42")
                    ),
                    rounds,
                ),
                "bundle_hit": _timed(
                    lambda: api.compile_bundle(BundleRequest("", max_tokens=2000, issue="SHOP-42")),
                    rounds,
                ),
                "requests": len(site.seen),
            }


def rows(found: dict[str, Any]) -> list[Row]:
    floor, issue = found["floor"], found["jira_issue"]
    overhead = issue["p50"] - floor["p50"]
    return [
        ("floor: its 3 requests, warm httpx connection", _pp(floor), "", ""),
        ("jira_issue round trip (2000 tokens)", _pp(issue), "", ""),
        ("  briefd's own overhead (p50 − floor p50)", f"{overhead:.2f} ms", "", ""),
        ("bundle issue=SHOP-42, compiled (BM25, new budget)", _pp(found["bundle_miss"]), "", ""),
        ("bundle issue=SHOP-42, LRU hit (the fetch remains)", _pp(found["bundle_hit"]), "", ""),
    ]


def _pp(stats: dict[str, float]) -> str:
    return f"p50 {stats['p50']:.2f} / p95 {stats['p95']:.2f} ms"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args(argv)
    found = measure(args.rounds)
    title = "briefd live Jira lookups · fake Jira Cloud on 127.0.0.1 (in-process uvicorn)"
    print_table(title, {"jira_issue + bundle round trip": rows(found)})
    return found


if __name__ == "__main__":
    main()
