"""The relevance gate's cost (R4): what it adds to a hybrid query, and what fitting it costs an
index run, on the example knowledge and on the eval sets' cached indexes.

    .venv/bin/python bench/gate.py [--out FILE]

Per query: the gate step itself (``retrieval.search._gate``: probe score and decision, plus
``_lexical``, the lexical evidence it weighs, looked up before fusion since ranking r6) timed
inside hybrid searches whose query vectors are already embedded (the gate adds no model call),
median and p95; and, as a cross-check, the median difference of whole
searches with the gate on and off. Per index: the full index run of the example knowledge from scratch with the real model,
and a refit of the calibration with the probe vectors stored (what every later index run pays),
without them but with the model's kept ones (a new index on a machine that fitted one before)
and with neither (the first index on a machine). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from briefd.api import Briefd
from briefd.eval.datasets import load_beir
from briefd.eval.run import beir_index, golden_index
from briefd.retrieval import calibration
from briefd.retrieval import search as search_module
from briefd.retrieval.search import SearchRequest
from briefd.settings import Settings, load_settings

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "eval-data"


def _settings(**overrides: Any) -> Settings:
    return load_settings(config=REPO / "briefd.yaml", env={}, overrides=overrides)


def query_cost(api: Briefd, texts: list[str], rounds: int = 3) -> dict[str, float]:
    """Milliseconds the gate adds per hybrid query (vectors primed, caches warm)."""
    assert api.semantic is not None
    api.semantic.prime(texts)
    on, off = api.settings, replace(api.settings, search=replace(api.settings.search, gate=False))
    added: list[float] = []
    steps: list[float] = []
    cpu: list[float] = []  # thread CPU time: what the gate costs without the machine's load
    original, evidence = search_module._gate, search_module._lexical
    _alternate(api, texts, 1, on, off, [])  # warm: the vector matrix, postings, page cache
    looked_up = [0.0, 0.0]  # the last lexical evidence's wall and CPU ms (fusion reuses it)

    def timed_evidence(*args: Any, **kwargs: Any) -> Any:
        started, thread = time.perf_counter(), time.thread_time()
        try:
            return evidence(*args, **kwargs)
        finally:
            looked_up[:] = [(time.perf_counter() - started) * 1000]
            looked_up.append((time.thread_time() - thread) * 1000)

    def timed_gate(*args: Any, **kwargs: Any) -> Any:
        started, thread = time.perf_counter(), time.thread_time()
        try:
            return original(*args, **kwargs)
        finally:  # the gate's step: its decision plus the lexical evidence it weighs
            steps.append((time.perf_counter() - started) * 1000 + looked_up[0])
            cpu.append((time.thread_time() - thread) * 1000 + looked_up[1])

    search_module._gate, search_module._lexical = timed_gate, timed_evidence
    try:
        _alternate(api, texts, rounds, on, off, added)
    finally:
        search_module._gate, search_module._lexical = original, evidence
    added.sort()
    steps.sort()
    cpu.sort()
    return {
        "queries": len(texts),
        "gate_median_ms": round(statistics.median(steps), 3),
        "gate_p95_ms": round(steps[int(0.95 * (len(steps) - 1))], 3),
        "gate_cpu_median_ms": round(statistics.median(cpu), 3),
        "gate_cpu_p95_ms": round(cpu[int(0.95 * (len(cpu) - 1))], 3),
        "search_difference_median_ms": round(statistics.median(added), 3),
    }


def _alternate(
    api: Briefd, texts: list[str], rounds: int, on: Settings, off: Settings, added: list[float]
) -> None:
    for _ in range(rounds):
        for text in texts:
            request = SearchRequest(text, ("all",), top_k=8, mode="hybrid", related=0)
            timed = []
            for settings in (on, off):
                api.settings = settings
                started = time.perf_counter()
                api.search(request)
                timed.append((time.perf_counter() - started) * 1000)
            added.append(timed[0] - timed[1])
    api.settings = on


# (figure, the index's probe vectors dropped, the model's kept probe vectors left in place):
# a later index run; a new index on a machine where one was fitted before (the probes' vectors
# kept beside the model, embeddings/kept.py); the first index on a machine (embedded)
FITS = (
    ("refit_seconds", False, True),
    ("new_index_fit_seconds", True, True),
    ("first_fit_seconds", True, False),
)


def calibration_cost(example: Path) -> dict[str, float]:
    """Index the example knowledge from scratch, then refit the calibration three ways."""
    with tempfile.TemporaryDirectory() as tmp:
        settings = _settings(db=str(Path(tmp) / "index.db"), source=str(example))
        with Briefd(settings) as api:
            report = api.index()
            assert api.embedder is not None
            fitted: dict[str, float] = {"index_seconds": report.seconds}
            for label, forget, kept in FITS:
                with api.store.write() as conn:
                    conn.execute("UPDATE calibration SET fingerprint = 'stale'")
                    if forget:
                        conn.execute("UPDATE calibration SET language = ''")
                folder = api.embedder.cache_dir
                for probes in folder.glob("probes-gate-*.npy") if folder and not kept else ():
                    probes.unlink()
                started = time.perf_counter()
                calibration.refresh(api.store, api.embedder, report.fingerprint)
                fitted[label] = round(time.perf_counter() - started, 3)
    fitted["first_fit_share"] = round(fitted["first_fit_seconds"] / fitted["index_seconds"], 4)
    fitted["new_index_fit_share"] = round(
        fitted["new_index_fit_seconds"] / fitted["index_seconds"], 4
    )
    return fitted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--queries-only", action="store_true", help="skip the index-time part")
    args = parser.parse_args()
    offtopic = [
        q["query"] for q in yaml.safe_load((REPO / "eval" / "offtopic.yaml").read_text())["queries"]
    ]
    out: dict[str, Any] = {}
    golden = yaml.safe_load((REPO / "eval" / "golden" / "queries.yaml").read_text())["queries"]
    sets: list[tuple[str, Settings, list[str]]] = [
        (
            "golden-en",
            golden_index(_settings(), REPO / "testdata" / "knowledge"),
            [q["query"] for q in golden] + offtopic,
        )
    ]
    for name in ("emanual-smarttv", "scifact"):
        if (DATA / name).is_dir():
            dataset = load_beir(DATA / name)
            queries = [text for _, text, _ in dataset.queries[:150]]
            sets.append((name, beir_index(_settings(), dataset), queries + offtopic))
    for name, settings, texts in sets:
        with Briefd(settings) as api:
            api.index()
            out[f"gate_{name}"] = query_cost(api, texts)
    if not args.queries_only:
        out["calibration_example"] = calibration_cost(REPO / "testdata" / "knowledge")
    text = json.dumps(out, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
