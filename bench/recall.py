"""Prompt-time hook latency (I8): process spawn → exit of ``briefd recall``, the way a coding
agent runs it on every prompt, next to ``python -c pass`` on the same machine.

    .venv/bin/python bench/recall.py [--prompts 62] [--rounds 1]

The example knowledge repo (testdata/knowledge) is indexed BM25-only under .briefd/bench/recall/.
Each prompt (the golden English queries plus off-topic ones, every one in a fresh session so
nothing is skipped as already injected) is fed as hook JSON on stdin to the console script:

* ``python -c pass`` — the floor: interpreter start-up alone;
* warm server — a ``briefd serve`` app (uvicorn, in this process) answers over HTTP, BM25;
* warm server, hybrid — the same with the real default embedder (the index, with vectors, is
  kept under .briefd/bench/recall/ so reruns embed nothing); skipped when the model is absent;
* in-process BM25 — no server reachable (a closed port), the hook opens the index itself.

Later rounds add a suffix to every prompt, so no round is answered from the server's
query-embedding cache (real prompts do not repeat). Variants take turns prompt by prompt, so drift in machine load hits them alike. The briefd
package is byte-compiled first, as ``pip install`` does (with ``PYTHONDONTWRITEBYTECODE`` set
every spawn would otherwise compile the hook's modules again). Prints one table and writes
.briefd/bench/recall.json.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import yaml
from common import REPO, WORK, fresh, load_average, settings_for
from corpus import OFF_TOPIC
from report import print_table

from briefd.api import Briefd
from briefd.embeddings.registry import create_embedder
from briefd.errors import BriefdError

HOME = WORK / "recall"
SCRIPT = Path(sys.executable).with_name("briefd")
TARGETS = {"server": 45.0, "server_ratio": 3.5, "in-process": 150.0}


def prompts(count: int) -> list[str]:
    golden = yaml.safe_load((REPO / "eval" / "golden" / "queries.yaml").read_text())
    texts = [q["query"] for q in golden["queries"]] + list(OFF_TOPIC)
    return (texts * (count // len(texts) + 1))[:count]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def warm_server(api: Briefd) -> Iterator[str]:
    import uvicorn

    from briefd.service.app import create_app
    from briefd.service.config import ServiceConfig

    port = free_port()
    app = create_app(api, ServiceConfig(port=port))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def spawn(command: list[str], stdin: bytes, env: dict[str, str]) -> tuple[float, bytes]:
    """Run as an agent runs a hook: in the project directory (here: one without a briefd.yaml)."""
    started = time.perf_counter()
    done = subprocess.run(command, input=stdin, capture_output=True, env=env, cwd=HOME, check=False)
    ms = (time.perf_counter() - started) * 1000
    if done.returncode != 0 or done.stderr:
        raise RuntimeError(f"{command} failed: {done.stderr.decode()[-500:]}")
    return ms, done.stdout


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "n": len(values),
        "p50": round(statistics.median(ordered), 1),
        "p95": round(ordered[max(0, round(0.95 * len(ordered)) - 1)], 1),
        "max": round(ordered[-1], 1),
    }


def measure(texts: list[str], rounds: int, urls: dict[str, str], db: Path) -> dict[str, Any]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    base |= {"BRIEFD_DB": str(db), "BRIEFD_EMBEDDINGS__ENABLED": "false"}
    variants = {"python -c pass": ([sys.executable, "-c", "pass"], base)}
    for name, url in urls.items():
        variants[name] = ([str(SCRIPT), "recall"], base | {"BRIEFD_RECALL__SERVER": url})
    variants["in-process BM25"] = (
        [str(SCRIPT), "recall"],
        base | {"BRIEFD_RECALL__SERVER": f"http://127.0.0.1:{free_port()}"},
    )
    times: dict[str, list[float]] = {name: [] for name in variants}
    injected: dict[str, int] = dict.fromkeys(variants, 0)
    run = f"{time.time():.0f}"  # the hybrid index is kept: sessions must be new each run
    for round_ in range(rounds):
        for i, text in enumerate(texts):
            for name, (command, env) in variants.items():
                session = f"{run}-{name}-{round_}-{i}"
                prompt = text if round_ == 0 else f"{text} (take {round_ + 1})"  # never cached
                hook = {"session_id": session, "prompt": prompt, "cwd": str(HOME)}
                ms, out = spawn(command, json.dumps(hook).encode(), env)
                times[name].append(ms)
                injected[name] += out.startswith(b"<knowledge>")
    return {name: {**summary(values), "injected": injected[name]} for name, values in times.items()}


def hybrid_api() -> Briefd | None:
    """The example repo with the real default embedder, or None when it cannot load."""
    settings = settings_for(HOME / "hybrid.db", REPO / "testdata" / "knowledge")
    try:
        embedder = create_embedder(settings)
        if embedder is None:
            return None
        api = Briefd(settings, embedder=embedder)
        api.index()
        return api
    except BriefdError as exc:
        print(f"warm server, hybrid: skipped ({exc})")
        return None


def rows(results: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    floor = results["python -c pass"]["p50"]
    out = []
    for name, r in results.items():
        target, verdict = "", ""
        if name.startswith("warm server"):
            limit = min(TARGETS["server"], TARGETS["server_ratio"] * floor)
            target = f"median ≤ {limit:.1f} ms (45 ms, ≤ 3.5× python -c pass)"
            verdict = "PASS" if r["p50"] <= limit else "FAIL"
        elif name == "in-process BM25":
            target = "median ≤ 150 ms"
            verdict = "PASS" if r["p50"] <= TARGETS["in-process"] else "FAIL"
        value = (
            f"median {r['p50']} ms · p95 {r['p95']} ms · max {r['max']} ms · "
            f"{r['p50'] / floor:.1f}× · {r['injected']}/{r['n']} injected"
        )
        out.append((name, value, target, verdict))
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=62, help="distinct prompts (≥ 50)")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args(argv)
    HOME.mkdir(parents=True, exist_ok=True)
    compileall.compile_dir(REPO / "src" / "briefd", quiet=1)
    db = fresh(HOME / "recall.db")
    settings = settings_for(db, REPO / "testdata" / "knowledge", embeddings=False)
    texts = prompts(args.prompts)
    hybrid = hybrid_api()
    with Briefd(settings, embedder=None) as api, ExitStack() as stack:
        api.index()
        load_start = load_average()
        urls = {"warm server": stack.enter_context(warm_server(api))}
        if hybrid is not None:
            stack.callback(hybrid.close)
            urls["warm server, hybrid"] = stack.enter_context(warm_server(hybrid))
        for url in urls.values():
            spawn([str(SCRIPT), "recall", "--server", url, "warm up"], b"", dict(os.environ))
        results = measure(texts, args.rounds, urls, db)
    facts = {"load_average": f"{load_start} → {load_average()}", "prompts": len(texts)}
    (WORK / "recall.json").write_text(json.dumps({**facts, "latency": results}, indent=2))
    title = (
        f"briefd recall hook latency · spawn → exit · {len(texts)} prompts × {args.rounds} · "
        f"{os.cpu_count()} CPUs · load {facts['load_average']}"
    )
    print_table(title, {"prompt-time hook (testdata/knowledge)": rows(results)})
    return results


if __name__ == "__main__":
    main()
