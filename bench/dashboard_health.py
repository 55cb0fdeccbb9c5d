"""The dashboard's knowledge-health panels (T3, T4, T6) over a 100,000-entry query log: what
``GET /api/dashboard/health`` costs, and each report it gathers.

    .venv/bin/python bench/dashboard_health.py [--entries 100000] [--runs 5]

The example knowledge (testdata/knowledge) indexed BM25-only and the query log seeded as
``bench/health.py`` seeds it (searches, bundles and hook prompts over 30 days, ~3,000 distinct
phrasings, a fifth of them empty). Timed, median of ``--runs`` after one warm-up call: the
route through the real app (in process, no token): the first call after a start (it counts the
whole log), later calls, and later calls after 100 more entries each (a busy minute; writing
them is in the time); then ``Briefd.gaps``, ``Briefd.drift`` and ``Briefd.usage`` with the
route's arguments. Prints one table and writes
.briefd/bench/dashboard_health.json.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from typing import Any

from common import REPO, WORK, fresh, load_average, settings_for
from fastapi.testclient import TestClient
from health import seed_log, timed
from report import Row, print_table

from briefd.api import Briefd
from briefd.service import create_app
from briefd.service.config import ServiceConfig
from briefd.team.gaps import GapsRequest

HOME = WORK / "dashboard-health"
EXAMPLE = REPO / "testdata" / "knowledge"
TARGET_S = 1.0
ROWS = 20  # the dashboard's rows (service.routes.team.DASHBOARD_ROWS)


def measure(entries: int, runs: int) -> dict[str, Any]:
    db = fresh(HOME / "health.db")
    settings = settings_for(db, EXAMPLE, embeddings=False)
    out: dict[str, Any] = {"entries": entries, "load_average": load_average()}
    with Briefd(settings, embedder=None) as api:
        api.index()
        seed_log(api, entries, random.Random(7))
        out["logged"] = api.store.conn.execute("SELECT count(*) FROM query_log").fetchone()[0]
        config = ServiceConfig(token=None, allowed_hosts=("testserver",))
        with TestClient(create_app(api, config)) as http:

            def route() -> None:
                response = http.get("/api/dashboard/health")
                assert response.status_code == 200, response.text

            # the first report after a start counts the whole log (team.served keeps it)
            out["first_s"], out["first_cpu_s"], _ = timed(route, 1)
            out["route_s"], out["route_cpu_s"], _ = timed(route, runs)
            rng = random.Random(11)

            def minute_then_route() -> None:  # a busy minute's entries, then the poll
                seed_log(api, 100, rng)
                route()

            out["growing_s"], out["growing_cpu_s"], _ = timed(minute_then_route, runs)
        out["gaps_s"], out["gaps_cpu_s"], _ = timed(
            lambda: api.gaps(GapsRequest("30d", 1, ROWS)), runs
        )
        out["drift_s"], out["drift_cpu_s"], _ = timed(api.drift, runs)
        out["usage_s"], out["usage_cpu_s"], _ = timed(lambda: api.usage("30d", ROWS), runs)
    return out


def rows(found: dict[str, Any]) -> list[Row]:
    def row(name: str, key: str, target: str) -> Row:
        wall, cpu = found[f"{key}_s"], found[f"{key}_cpu_s"]
        verdict = "" if not target else ("PASS" if wall <= TARGET_S else "FAIL")
        return (name, f"{wall:.3f} s wall, {cpu:.3f} s CPU", target, verdict)

    n = f"{found['logged']:,}"
    return [
        row(f"GET /api/dashboard/health over {n} log entries, first after a start", "first", ""),
        row("  later, nothing logged since", "route", f"≤ {TARGET_S:g} s"),
        row("  later, 100 entries logged since (and written: in the time)", "growing", ""),
        row("  gaps report (20 rows)", "gaps", ""),
        row("  drift report", "drift", ""),
        row("  usage report (20 rows; its counts kept)", "usage", ""),
    ]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    found = measure(args.entries, args.runs)
    title = f"dashboard health (median of {args.runs}; load average {found['load_average']})"
    print_table(title, {"knowledge-health panels": rows(found)})
    HOME.mkdir(parents=True, exist_ok=True)
    (HOME.parent / "dashboard_health.json").write_text(json.dumps(found, indent=2) + "\n")
    return found


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
