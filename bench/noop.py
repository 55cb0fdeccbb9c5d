"""``briefd index`` as whole processes (O4): nothing changed, one file edited, one deleted —
wall time and peak RSS of each, side by side with ``python -c pass`` measured in the same run.

    .venv/bin/python bench/noop.py [--runs 15]

The example knowledge (testdata/knowledge) is copied to .briefd/bench/noop/ and indexed with
the default model once (kept between bench runs: the vectors are keyed by text, so a later
run embeds nothing). Then, alternating so load hits both alike: the no-change run as users
start it (the ``briefd`` console script), the same run forced through the full command line
(what every run cost before the no-change check), and ``python -c pass``. The folder is a git
repository holding code beside the knowledge: a commit to that code moves HEAD and so misses
the stamp, but the knowledge's history is what was indexed (the hashing path says so with two
git calls). Then one edited file (the model must load: one section to embed) and one deleted
file (nothing to embed: the model must not load). Prints one table and writes
.briefd/bench/noop.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from common import REPO, WORK, load_average, log
from report import Row, print_table

from briefd.cli.stamp import RACY_NS

HOME = WORK / "noop"
EXAMPLE = REPO / "testdata" / "knowledge"
BRIEFD = Path(sys.executable).with_name("briefd")
FULL = "import sys; from briefd.cli.main import run; sys.argv[0] = 'briefd'; run()"
RATIO_TARGET = 3.0
RSS_TARGET_MB = 60.0


def run(command: list[str]) -> tuple[float, float, str]:
    """(wall s, peak RSS MB, stdout) of one process. Its peak RSS comes from GNU time: a
    process forked from this one would count this one's pages as its own high-water mark."""
    timed = ["/usr/bin/time", "-f", "%M", "-o", str(HOME / "rss.txt"), *command]
    started = time.perf_counter()
    done = subprocess.run(timed, cwd=HOME, env=_env(), capture_output=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{command} failed:\n{done.stderr.decode()[-2000:]}")
    rss_kb = float((HOME / "rss.txt").read_text().split()[-1])
    return wall, rss_kb / 1024, done.stdout.decode()


def _git(*args: str) -> None:
    identity = ["-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    subprocess.run(["git", *identity, *args], cwd=HOME, check=True, capture_output=True)


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}


def index_command(db: Path, source: Path) -> list[str]:
    return [str(BRIEFD), "--db", str(db), "index", "--source", str(source)]


def measure(runs: int) -> dict[str, Any]:
    HOME.mkdir(parents=True, exist_ok=True)
    source, db = HOME / "knowledge", HOME / "index.db"
    shutil.rmtree(source, ignore_errors=True)
    shutil.rmtree(HOME / ".git", ignore_errors=True)
    shutil.copytree(EXAMPLE, source)
    (HOME / ".gitignore").write_text("/*\n!/knowledge/\n!/src/\n!/.gitignore\n")
    (HOME / "src").mkdir(exist_ok=True)
    (HOME / "src" / "app.py").write_text("VERSION = 0\n")
    _git("init", "--quiet", "--initial-branch=main")
    _git("add", "-A")
    _git("commit", "--quiet", "-m", "knowledge and code")
    # files changed less than RACY_NS before a run are never stamped (a racy edit must fall
    # through): the commit just made would leave the no-change rows on the slower path for as
    # long as the first run is shorter than that, as it is on a quiet machine (25 MB, not 12)
    time.sleep(RACY_NS / 1e9)
    first = run(index_command(db, source))
    log(f"  first run: {first[0]:.1f} s, {first[1]:.0f} MB")
    fast = index_command(db, source)
    full = [sys.executable, "-c", FULL, *fast[1:]]
    bare = [sys.executable, "-c", "pass"]
    samples: dict[str, list[tuple[float, float]]] = {"fast": [], "full": [], "python": []}
    for number in range(runs):
        for name, command in (("fast", fast), ("python", bare)):
            samples[name].append(run(command)[:2])
        if number < 3:  # the full command line costs seconds; three runs suffice
            samples["full"].append(run(full)[:2])
    beside = []
    for number in range(1, 4):  # a commit to the code: HEAD moves, the knowledge does not
        (HOME / "src" / "app.py").write_text(f"VERSION = {number}\n")
        _git("commit", "--quiet", "-am", f"code {number}")
        beside.append(run(fast)[:2])
    page = source / "domain" / "refunds.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n## Bench\n\nOne more section.\n")
    edited = run(fast)
    (source / "domain" / "retry-policy.md").unlink()
    deleted = run(fast)
    results: dict[str, Any] = {"load_average": load_average(), "runs": runs}
    for name, values in samples.items():
        results[name] = {
            "wall_ms": round(statistics.median(v[0] for v in values) * 1000, 1),
            "rss_mb": round(max(v[1] for v in values), 1),
        }
    results["beside"] = {
        "wall_ms": round(statistics.median(v[0] for v in beside) * 1000, 1),
        "rss_mb": round(max(v[1] for v in beside), 1),
    }
    results["edited"] = {"wall_ms": round(edited[0] * 1000), "rss_mb": round(edited[1], 1)}
    results["deleted"] = {"wall_ms": round(deleted[0] * 1000), "rss_mb": round(deleted[1], 1)}
    return results


def rows(results: dict[str, Any]) -> list[Row]:
    bare = results["python"]["wall_ms"]
    fast, full = results["fast"], results["full"]
    ratio = fast["wall_ms"] / bare
    return [
        (
            "python -c pass (same run)",
            f"{bare:.1f} ms, {results['python']['rss_mb']:.0f} MB",
            "",
            "",
        ),
        (
            "no change: briefd index (wall, x python)",
            f"{fast['wall_ms']:.1f} ms = {ratio:.1f}x",
            f"<= {RATIO_TARGET:g}x",
            "PASS" if ratio <= RATIO_TARGET else "FAIL",
        ),
        (
            "no change: peak RSS (no model, no vectors)",
            f"{fast['rss_mb']:.1f} MB",
            f"<= {RSS_TARGET_MB:g} MB",
            "PASS" if fast["rss_mb"] <= RSS_TARGET_MB else "FAIL",
        ),
        (
            "no change through the full command line",
            f"{full['wall_ms']:.0f} ms = {full['wall_ms'] / bare:.0f}x, {full['rss_mb']:.0f} MB",
            "",
            "",
        ),
        (
            "a commit to the code beside the knowledge (HEAD moved)",
            f"{results['beside']['wall_ms']:.0f} ms = {results['beside']['wall_ms'] / bare:.0f}x, "
            f"{results['beside']['rss_mb']:.0f} MB",
            "",
            "",
        ),
        (
            "one file edited (model loads, 1 section)",
            f"{results['edited']['wall_ms']} ms, {results['edited']['rss_mb']:.0f} MB",
            "",
            "",
        ),
        (
            "one file deleted (nothing to embed: no model)",
            f"{results['deleted']['wall_ms']} ms, {results['deleted']['rss_mb']:.0f} MB",
            "",
            "",
        ),
    ]


def main(argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args(argv)
    log(f"> briefd index as a process (load average {load_average()})")
    results = measure(args.runs)
    (WORK / "noop.json").write_text(json.dumps(results, indent=2))
    print_table(
        f"briefd index, whole processes · load average {results['load_average']}",
        {"no-change and incremental index runs (example knowledge)": rows(results)},
    )
    return results


if __name__ == "__main__":
    main(sys.argv[1:])
