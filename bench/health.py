"""Knowledge health (T3, T4, T6) at scale: the gaps report over a 100,000-entry query log and
drift over a code repository with 10,000 commits.

    .venv/bin/python bench/health.py [--entries 100000] [--commits 10000] [--runs 5]

Gaps: the example knowledge (testdata/knowledge) indexed BM25-only, then a query log written
through the API as the service writes it: ``--entries`` searches, bundles and hook prompts
over 30 days, from ~3,000 distinct phrasings (golden queries, their variants, off-topic
prompts) with Zipf-like frequencies, a fifth of them empty, hook prompts hashed (the
default). Timed: ``Briefd.gaps`` (median of ``--runs``), without vectors, and with the real
default model merging near-duplicates when it is installed; ``Briefd.usage`` too.

Drift: the example knowledge committed to a git repository on 2026-01-01, and a code
repository built with ``git fast-import``: ``--commits`` commits after that date, each
touching 1–4 of ~2,400 files, about half of them under paths the documents' ``refs`` govern.
Timed: the first refresh (read every commit, store it, compute drift, report), a refresh
after one new commit, and the report alone. Prints one table and writes
.briefd/bench/health.json.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml
from common import REPO, WORK, fresh, load_average, settings_for
from corpus import OFF_TOPIC
from report import Row, print_table

from briefd.api import Briefd
from briefd.embeddings.registry import create_embedder
from briefd.errors import BriefdError
from briefd.settings import with_overrides
from briefd.store.activity import QueryLogEntry
from briefd.team.gaps import GapsRequest

HOME = WORK / "health"
EXAMPLE = REPO / "testdata" / "knowledge"
TARGET_S = 1.0
SURFACES = ("mcp", "mcp", "rest", "hook")


def cpu_seconds() -> float:
    """CPU of this process and of its finished children (git)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def timed(fn: Callable[[], Any], runs: int) -> tuple[float, float, Any]:
    """Median wall seconds and median CPU seconds of ``runs`` calls, and the last result
    (on a shared machine the CPU time is what the call costs, the wall time what it waited)."""
    walls, cpus, result = [], [], None
    for _ in range(runs):
        wall, cpu = time.perf_counter(), cpu_seconds()
        result = fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(cpu_seconds() - cpu)
    return round(statistics.median(walls), 3), round(statistics.median(cpus), 3), result


def phrasings(count: int, rng: random.Random) -> list[str]:
    golden = yaml.safe_load((REPO / "eval" / "golden" / "queries.yaml").read_text())
    base = [q["query"] for q in golden["queries"]] + list(OFF_TOPIC)
    tails = ("", " please", " in go", " for the api", " quickly", " again", " for merchants")
    heads = ("", "how do we ", "where is ", "explain ", "what about ")
    texts = {
        f"{rng.choice(heads)}{b}{rng.choice(tails)} #{i % 97}" for i, b in enumerate(base * 80)
    }
    return sorted(texts)[:count]


def seed_log(api: Briefd, entries: int, rng: random.Random) -> None:
    chunk_ids = [r[0] for r in api.store.conn.execute("SELECT id FROM chunks ORDER BY id")]
    texts = phrasings(3000, rng)
    weights = [1 / (rank + 1) for rank in range(len(texts))]
    now = datetime.now(UTC)
    batch: list[QueryLogEntry] = []
    for _ in range(entries):
        query = rng.choices(texts, weights)[0]
        empty = hash(query) % 5 == 0
        surface = rng.choice(SURFACES)
        kind = "recall" if surface == "hook" else rng.choice(("search", "search", "bundle"))
        served = () if empty else tuple(rng.sample(chunk_ids, rng.randint(1, 8)))
        at = (now - timedelta(minutes=rng.randint(0, 30 * 24 * 60 - 60))).isoformat(
            timespec="seconds"
        )
        top = None if empty else round(rng.uniform(0.2, 1.2), 3)
        gate = "empty" if empty else "kept"
        batch.append(
            QueryLogEntry(
                kind,
                query,
                ("domain", "conventions"),
                len(served),
                top,
                rng.uniform(2, 40),
                surface,
                at,
                surface,
                gate,
                served,
            )
        )
        if len(batch) == 10_000:
            api.log_queries(batch)
            batch = []
    api.log_queries(batch)


def gaps_bench(entries: int, runs: int) -> dict[str, Any]:
    rng = random.Random(7)
    db = fresh(HOME / "gaps.db")
    settings = settings_for(db, EXAMPLE, embeddings=False)
    out: dict[str, Any] = {"entries": entries}
    with Briefd(settings, embedder=None) as api:
        api.index()
        started = time.perf_counter()
        seed_log(api, entries, rng)
        out["seed_s"] = round(time.perf_counter() - started, 1)
        out["logged"] = api.store.conn.execute("SELECT count(*) FROM query_log").fetchone()[0]
        out["gaps_s"], out["gaps_cpu_s"], report = timed(lambda: api.gaps(GapsRequest()), runs)
        out["groups"], out["gaps"] = report.groups, len(report.gaps)
        out["usage_s"], out["usage_cpu_s"], _ = timed(api.usage, runs)
    try:
        embedder = create_embedder(with_overrides(settings, {"embeddings.enabled": True}))
    except BriefdError as exc:
        out["vectors"] = f"skipped: {exc}"
        return out
    with Briefd(settings, embedder=embedder) as api:
        # the first report loads the model and embeds the phrasings it compares; later ones
        # embed only phrasings they have not seen
        out["gaps_first_s"], out["gaps_first_cpu_s"], _ = timed(lambda: api.gaps(GapsRequest()), 1)
        out["gaps_vectors_s"], out["gaps_vectors_cpu_s"], report = timed(
            lambda: api.gaps(GapsRequest()), runs
        )
        out["merged"] = sum(len(g.variants) for g in report.gaps)
    return out


def fast_import(path: Path, commits: int, start: datetime, rng: random.Random) -> None:
    """``commits`` commits on main, each touching 1–4 files (half under governed paths)."""
    governed = [
        "services/ledger-writer/internal/period",
        "services/ledger-writer/internal/posting",
        "services/checkout-api/internal/intents",
        "tools/ledger-close",
        "libs/go/money",
    ]
    elsewhere = [f"services/svc{n}/internal/pkg{m}" for n in range(40) for m in range(5)]
    files = [f"{d}/f{i}.go" for d in governed for i in range(40)]
    files += [f"{d}/f{i}.go" for d in elsewhere for i in range(11)]
    governed_files = files[: len(governed) * 40]
    lines = []
    for i in range(commits):
        stamp = int((start + timedelta(minutes=10 * i)).timestamp())
        who = f"Dev {i % 17}"
        message = f"change {i}: adjust behaviour"
        lines += [
            "commit refs/heads/main",
            f"mark :{i + 1}",
            f"author {who} <dev{i % 17}@example.com> {stamp} +0000",
            f"committer {who} <dev{i % 17}@example.com> {stamp} +0000",
            f"data {len(message.encode())}",
            message,
        ]
        if i:
            lines.append(f"from :{i}")
        pool = governed_files if rng.random() < 0.5 else files
        for name in set(rng.sample(pool, rng.randint(1, 4))):
            body = f"package x // {i}\n"
            lines += [f"M 100644 inline {name}", f"data {len(body.encode())}", body.rstrip("\n")]
        lines.append("")
    subprocess.run(["git", "init", "--quiet", "--initial-branch=main", str(path)], check=True)
    subprocess.run(
        ["git", "fast-import", "--quiet"],
        cwd=path,
        input="\n".join(lines) + "\n",
        text=True,
        check=True,
    )


def knowledge_repo(path: Path) -> None:
    subprocess.run(["cp", "-r", str(EXAMPLE), str(path)], check=True)
    env = {
        "GIT_AUTHOR_NAME": "Writer",
        "GIT_AUTHOR_EMAIL": "w@example.com",
        "GIT_COMMITTER_NAME": "Writer",
        "GIT_COMMITTER_EMAIL": "w@example.com",
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+00:00",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+00:00",
        "PATH": "/usr/bin:/bin",
    }
    for args in (
        ["init", "--quiet", "--initial-branch=main"],
        ["add", "-A"],
        ["commit", "--quiet", "-m", "knowledge"],
    ):
        subprocess.run(["git", *args], cwd=path, env=env, check=True)


def drift_bench(commits: int, runs: int) -> dict[str, Any]:
    rng = random.Random(11)
    home = HOME / "drift"
    subprocess.run(["rm", "-rf", str(home)], check=True)
    home.mkdir(parents=True)
    knowledge_repo(home / "knowledge")
    started = time.perf_counter()
    fast_import(home / "code", commits, datetime(2026, 1, 2, tzinfo=UTC), rng)
    out: dict[str, Any] = {"commits": commits, "build_s": round(time.perf_counter() - started, 1)}
    settings = settings_for(home / "index.db", home / "knowledge", embeddings=False)
    settings = with_overrides(settings, {"code.repos": [str(home / "code")]})
    with Briefd(settings, embedder=None) as api:
        api.index()  # the first refresh runs here; time it again on a fresh history below
        api.store.conn.execute("DELETE FROM code_commits")
        api.store.conn.execute("DELETE FROM code_repos")
        out["first_refresh_s"], out["first_refresh_cpu_s"], report = timed(
            lambda: api.drift(refresh=True), 1
        )
        out["read"] = report.repos[0].last_read
        out["drifting"] = len(report.documents)
        out["pairs"] = sum(d.commit_count for d in report.documents)
        subprocess.run(
            ["git", "commit", "--quiet", "--allow-empty", "-m", "one more"],
            cwd=home / "code",
            env={
                "GIT_AUTHOR_NAME": "x",
                "GIT_AUTHOR_EMAIL": "x@x",
                "GIT_COMMITTER_NAME": "x",
                "GIT_COMMITTER_EMAIL": "x@x",
                "PATH": "/usr/bin:/bin",
            },
            check=True,
        )
        out["incremental_s"], out["incremental_cpu_s"], report = timed(
            lambda: api.drift(refresh=True), 1
        )
        out["incremental_read"] = report.repos[0].last_read
        out["report_s"], out["report_cpu_s"], _ = timed(api.drift, runs)
    return out


def rows(results: dict[str, Any]) -> list[Row]:
    gaps, drift = results["gaps"], results["drift"]

    def value(key: str, found: dict[str, Any]) -> str:
        return f"{found[key]} s (CPU {found[key.replace('_s', '_cpu_s')]} s)"

    def verdict(key: str, found: dict[str, Any]) -> tuple[str, str]:
        return f"<= {TARGET_S:g} s", "PASS" if found[key] <= TARGET_S else "FAIL"

    logged = f"{gaps['logged']:,} log entries"
    out: list[Row] = [
        (
            f"gaps over {logged} ({gaps['groups']:,} groups), no vectors",
            value("gaps_s", gaps),
            *verdict("gaps_s", gaps),
        )
    ]
    if "gaps_vectors_s" in gaps:
        out += [
            (
                "gaps with the default model, first report (loads it, embeds phrasings)",
                value("gaps_first_s", gaps),
                "",
                "",
            ),
            (
                f"gaps with the default model, later reports ({gaps['merged']} merged)",
                value("gaps_vectors_s", gaps),
                *verdict("gaps_vectors_s", gaps),
            ),
        ]
    else:
        out.append(("gaps with vectors", str(gaps.get("vectors")), "", ""))
    out += [
        (f"usage report over {logged}", value("usage_s", gaps), "", ""),
        (
            f"drift, first read of {drift['read']:,} commits + detect + report "
            f"({drift['drifting']} documents, {drift['pairs']:,} document-commit pairs)",
            value("first_refresh_s", drift),
            *verdict("first_refresh_s", drift),
        ),
        (
            f"drift, refresh after one new commit (read {drift['incremental_read']})",
            value("incremental_s", drift),
            *verdict("incremental_s", drift),
        ),
        ("drift report alone", value("report_s", drift), "", ""),
    ]
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--commits", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    HOME.mkdir(parents=True, exist_ok=True)
    load_start = load_average()
    results = {
        "gaps": gaps_bench(args.entries, args.runs),
        "drift": drift_bench(args.commits, args.runs),
    }
    results["load_average"] = f"{load_start} → {load_average()}"
    (WORK / "health.json").write_text(json.dumps(results, indent=2))
    title = f"briefd knowledge health · load {results['load_average']}"
    print_table(title, {"7. gaps, usage and drift at scale": rows(results)})
    return results


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
