"""What section windows cost (R2, opt-in ``embeddings.window_words``), on the example knowledge.

    .venv/bin/python bench/windows.py [--words 60] [--rounds 5]

Indexes testdata/knowledge from scratch twice, with the default settings and with windows, each
into a file of its own (vectors are keyed by text: nothing is reused from an earlier run), then
times warm hybrid searches of the golden-en queries on both, the two alternating query by query.
The query vectors are embedded beforehand, so the times are the search's own: what windows add
to it is reading the candidates' window vectors (cached after their first read) and the best of
them. Writes .briefd/bench/windows.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from common import REPO, WORK, fresh, load_average, log, summary
from report import Row, print_table

from briefd.api import Briefd
from briefd.eval.datasets import load_golden
from briefd.retrieval.search import SearchRequest
from briefd.settings import Settings, with_overrides

KNOWLEDGE = REPO / "testdata" / "knowledge"
GOLDEN = REPO / "eval" / "golden" / "queries.yaml"


def _settings(db: Path, words: int) -> Settings:
    return with_overrides(
        Settings(), {"db": str(db), "source": str(KNOWLEDGE), "embeddings.window_words": words}
    )


def _index(api: Briefd) -> dict[str, Any]:
    wall, cpu = time.perf_counter(), time.process_time()
    report = api.index()
    return {
        "wall_s": round(time.perf_counter() - wall, 2),
        "cpu_s": round(time.process_time() - cpu, 2),
        "chunks": report.chunks,
        "embedded": report.embedded,
        "windows": report.windows,
    }


def measure(words: int, rounds: int) -> dict[str, Any]:
    home = WORK / "windows"
    home.mkdir(parents=True, exist_ok=True)
    queries = [q.query for q in load_golden(GOLDEN).queries]
    found: dict[str, Any] = {"words": words, "load_average": load_average()}
    apis = {}
    for name, size in (("default", 0), ("windows", words)):
        api = Briefd(_settings(fresh(home / f"{name}.db"), size))
        log(f"  index the example knowledge, {name}")
        found[name] = {"index": _index(api)}
        assert api.semantic is not None, "embeddings are off in the default settings"
        api.semantic.prime(queries)
        apis[name] = api
    times: dict[str, list[float]] = {name: [] for name in apis}
    for _ in range(rounds):
        for query in queries:
            for name, api in apis.items():
                request = SearchRequest(query, ("all",), mode="hybrid", related=0)
                started = time.perf_counter()
                api.search(request)
                times[name].append((time.perf_counter() - started) * 1000)
    for name, api in apis.items():
        found[name]["search_ms"] = summary(times[name])
        api.close()
    return found


def rows(found: dict[str, Any]) -> list[Row]:
    base, win = found["default"], found["windows"]
    ratio = win["index"]["wall_s"] / max(base["index"]["wall_s"], 1e-9)
    out: list[Row] = [
        (
            "first index, default",
            f"{base['index']['wall_s']} s ({base['index']['chunks']} chunks, "
            f"{base['index']['embedded']} embedded)",
            "",
            "",
        ),
        (
            f"first index, windows of {found['words']} words",
            f"{win['index']['wall_s']} s = {ratio:.2f}x ({win['index']['windows']} windows, "
            f"{win['index']['embedded']} embedded)",
            "",
            "",
        ),
    ]
    for name, data in (("default", base), ("windows", win)):
        ms = data["search_ms"]
        out.append(
            (
                f"warm hybrid search, golden-en, {name} (n={ms['n']}, query embedded beforehand)",
                f"p50 {ms['p50']:.2f} / p95 {ms['p95']:.2f} ms",
                "",
                "",
            )
        )
    return out


def main(argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--words", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    log(f"> section windows on the example knowledge (load average {load_average()})")
    found = measure(args.words, args.rounds)
    (WORK / "windows.json").write_text(json.dumps(found, indent=2))
    print_table(
        f"section windows (opt-in) · load average {found['load_average']}",
        {"example knowledge, default vs embeddings.window_words": rows(found)},
    )
    return found


if __name__ == "__main__":
    main(sys.argv[1:])
