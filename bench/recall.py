"""Prompt-time hook latency (I8, I10): process spawn → exit of ``briefd recall``, the way a
coding agent runs it on every prompt, next to ``python -c pass`` on the same machine — wall time
and the process's own CPU time (user + system, from ``wait4``), each also as a ratio to
``python -c pass`` measured in the same run.

    .venv/bin/python bench/recall.py [--prompts 62] [--rounds 1] [--first 8]

The example knowledge repo (testdata/knowledge) is indexed BM25-only under .briefd/bench/recall/.
Each prompt (the golden English queries plus off-topic ones, every one in a fresh session so
nothing is skipped as already injected) is fed as hook JSON on stdin to the hook command
``briefd init`` writes (``python -S -P …/briefd/hook/script.py``), run in a project directory
whose briefd.yaml names the hybrid index, as a team's repo does:

* ``python -c pass`` — the floor: interpreter start-up alone;
* warm server — a ``briefd serve`` app (uvicorn, in this process) answers over HTTP, BM25;
* warm server, hybrid — the same with the real default embedder (the index, with vectors, is
  kept under .briefd/bench/recall/ so reruns embed nothing); skipped when the model is absent;
* daemon warm — no server; the index's local daemon (started by an earlier prompt, hybrid,
  the real default embedder) answers over its Unix socket;
* in-process BM25 — no server, no daemon (``recall.daemon: false``): the hook opens the index.

Then the first prompt with no daemon yet, ``--first`` times: the hook answers in-process (BM25,
no model) and starts the daemon in the background; each time the bench waits for that daemon to
serve (its start-up time and CPU are reported apart: they are not the prompt's), reads its
resident memory at idle, and stops it before the next sample.

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
import resource
import shlex
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
from briefd.cli.init import hook_command
from briefd.embeddings.registry import create_embedder
from briefd.errors import BriefdError

HOME = WORK / "recall"
SCRIPT = Path(sys.executable).with_name("briefd")
HOOK = shlex.split(hook_command())  # what `briefd init` writes: python -S -P …/hook/script.py
TARGETS = {
    "server": 45.0,
    "server_ratio": 3.5,
    "in-process": 150.0,
    "daemon": 45.0,
    "daemon_ratio": 3.0,
    "first_cpu_ratio": 10.0,
    "daemon_rss_mb": 250.0,
}


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


def spawn(command: list[str], stdin: bytes, env: dict[str, str]) -> tuple[float, float, bytes]:
    """Run as an agent runs a hook, in the project directory (its briefd.yaml: :func:`daemon_env`):
    (wall ms, CPU ms of the process itself, stdout). The CPU comes from the reaped children's
    usage, so a daemon the hook leaves running is not counted."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, input=stdin, capture_output=True, env=env, cwd=HOME, check=False)
    ms = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or done.stderr:
        raise RuntimeError(f"{command} failed: {done.stderr.decode()[-500:]}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return ms, cpu * 1000, done.stdout


def summary(values: list[float], cpu: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "n": len(values),
        "p50": round(statistics.median(ordered), 1),
        "p95": round(ordered[max(0, round(0.95 * len(ordered)) - 1)], 1),
        "max": round(ordered[-1], 1),
        "cpu_p50": round(statistics.median(cpu), 1),
    }


def measure(
    texts: list[str], rounds: int, urls: dict[str, str], db: Path, daemon: dict[str, str] | None
) -> dict[str, Any]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    base |= {"BRIEFD_DB": str(db), "BRIEFD_EMBEDDINGS__ENABLED": "false"}
    variants = {"python -c pass": ([sys.executable, "-c", "pass"], base)}
    for name, url in urls.items():
        variants[name] = (HOOK, base | {"BRIEFD_RECALL__SERVER": url})
    if daemon is not None:
        variants["daemon warm, hybrid"] = (HOOK, daemon)
    variants["in-process BM25"] = (
        HOOK,
        base | {"BRIEFD_RECALL__SERVER": "off", "BRIEFD_RECALL__DAEMON": "false"},
    )
    times: dict[str, list[float]] = {name: [] for name in variants}
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    injected: dict[str, int] = dict.fromkeys(variants, 0)
    run = f"{time.time():.0f}"  # the hybrid index is kept: sessions must be new each run
    for round_ in range(rounds):
        for i, text in enumerate(texts):
            for name, (command, env) in variants.items():
                session = f"{run}-{name}-{round_}-{i}"
                prompt = text if round_ == 0 else f"{text} (take {round_ + 1})"  # never cached
                hook = {"session_id": session, "prompt": prompt, "cwd": str(HOME)}
                ms, used, out = spawn(command, json.dumps(hook).encode(), env)
                times[name].append(ms)
                cpu[name].append(used)
                injected[name] += out.startswith(b"<knowledge>")
    return {
        name: {**summary(values, cpu[name]), "injected": injected[name]}
        for name, values in times.items()
    }


def daemon_env(db: Path) -> dict[str, str]:
    """A project with no server: the index's daemon answers, hybrid with the default model (or
    ``BRIEFD_BENCH_MODEL``'s). Its settings come from the project's briefd.yaml, as in a team's
    repo (the other variants override them with ``BRIEFD_*`` variables); the file is a minute
    old, as after a commit."""
    config = HOME / "briefd.yaml"
    source = REPO / "testdata" / "knowledge"
    model = os.environ.get("BRIEFD_BENCH_MODEL")  # the model the index was embedded with
    embeddings = f"embeddings:\n  model: {model}\n" if model else ""
    config.write_text(f"source: {source}\ndb: {db.name}\nrecall:\n  server: 'off'\n{embeddings}")
    os.utime(config, (time.time() - 60, time.time() - 60))
    return {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}


def daemon_state(env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        [str(SCRIPT), "recall", "--status", "--json"], capture_output=True, env=env, cwd=HOME
    )
    state: dict[str, Any] = json.loads(done.stdout)
    return state


def stop_daemon(env: dict[str, str]) -> None:
    subprocess.run([str(SCRIPT), "recall", "--stop"], capture_output=True, env=env, cwd=HOME)
    while daemon_state(env)["state"] != "stopped":
        time.sleep(0.1)


def await_daemon(env: dict[str, str], seconds: float = 300.0) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while (state := daemon_state(env))["state"] != "running":
        if time.monotonic() > deadline:
            raise RuntimeError("the recall daemon did not start; see its log next to the index")
        time.sleep(0.05)
    return state


def daemon_recall_ms(env: dict[str, str], count: int) -> dict[str, float]:
    """The warm daemon's own time per prompt (``took_ms`` of its last ``count`` log lines: the
    recall from request to answer, model and index included, without the hook's process and
    the socket): the split of the "daemon warm" wall time between the hook and the daemon."""
    state = daemon_state(env)
    log, pid = state.get("log"), state.get("pid")
    if not log or not Path(log).is_file():
        return {}
    marker = f" {pid} INFO recall "
    lines = [x for x in Path(log).read_text(encoding="utf-8").splitlines() if marker in x]
    took = sorted(float(x.rsplit(", ", 1)[1].split()[0]) for x in lines[-count:])
    if not took:
        return {}
    return {
        "p50": round(statistics.median(took), 1),
        "p95": round(took[-max(1, len(took) // 20)], 1),
    }


def process_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def first_prompts(texts: list[str], count: int, env: dict[str, str]) -> dict[str, Any]:
    """The first prompt with no daemon yet, ``count`` times, each next to ``python -c pass``;
    and what the daemon it starts costs in the background until it serves."""
    floor: list[tuple[float, float]] = []
    first: list[tuple[float, float]] = []
    ready_s: list[float] = []
    ready_cpu: list[float] = []
    for i in range(count):
        stop_daemon(env)
        ms, used, _ = spawn([sys.executable, "-c", "pass"], b"", env)
        floor.append((ms, used))
        hook = {"session_id": f"first-{time.time()}-{i}", "prompt": texts[i], "cwd": str(HOME)}
        started = time.monotonic()
        ms, used, _ = spawn(HOOK, json.dumps(hook).encode(), env)
        first.append((ms, used))
        state = await_daemon(env)
        ready_s.append(time.monotonic() - started)
        ready_cpu.append(process_cpu_s(state["pid"]))
    return {
        "python -c pass": summary([w for w, _ in floor], [c for _, c in floor]),
        "first prompt, no daemon yet": summary([w for w, _ in first], [c for _, c in first]),
        "daemon start-up (background)": {
            "ready_s_p50": round(statistics.median(ready_s), 2),
            "cpu_s_p50": round(statistics.median(ready_cpu), 2),
        },
    }


def idle_rss_mb(env: dict[str, str], settle: float = 2.0) -> float:
    time.sleep(settle)
    pid = await_daemon(env)["pid"]  # running (a slower model may still be starting)
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


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


def _value(r: dict[str, Any], floor: dict[str, Any]) -> str:
    return (
        f"median {r['p50']} ms ({r['p50'] / floor['p50']:.1f}×) · p95 {r['p95']} ms · "
        f"CPU {r['cpu_p50']} ms ({r['cpu_p50'] / floor['cpu_p50']:.1f}×)"
    )


def rows(results: dict[str, Any], first: dict[str, Any] | None) -> list[tuple[str, str, str, str]]:
    floor = results["python -c pass"]
    out = []
    for name, r in results.items():
        target, verdict = "", ""
        if name.startswith("warm server"):
            limit = min(TARGETS["server"], TARGETS["server_ratio"] * floor["p50"])
            target = f"median ≤ {limit:.1f} ms (45 ms, ≤ 3.5× python -c pass)"
            verdict = "PASS" if r["p50"] <= limit else "FAIL"
        elif name.startswith("daemon warm"):
            limit = min(TARGETS["daemon"], TARGETS["daemon_ratio"] * floor["p50"])
            target = f"median ≤ {limit:.1f} ms (45 ms, ≤ 3× python -c pass)"
            verdict = "PASS" if r["p50"] <= limit else "FAIL"
        elif name == "in-process BM25":
            target = "median ≤ 150 ms"
            verdict = "PASS" if r["p50"] <= TARGETS["in-process"] else "FAIL"
        injected = f" · {r['injected']}/{r['n']} injected" if "injected" in r else ""
        out.append((name, _value(r, floor) + injected, target, verdict))
        if "daemon_recall" in r:  # where the daemon's wall time goes: its own recall, the rest
            own = r["daemon_recall"]
            rest = f"hook process, socket and spawn: {r['p50'] - own['p50']:.1f} ms"
            cpu = f" · its CPU {own['cpu_ms']} ms per prompt" if "cpu_ms" in own else ""
            value = f"median {own['p50']} ms · p95 {own['p95']} ms (daemon log){cpu} · {rest}"
            out.append(("  of which the daemon's own recall", value, "", ""))
    return out + (_first_rows(first) if first else [])


def _first_rows(first: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    floor, r = first["python -c pass"], first["first prompt, no daemon yet"]
    ratio = r["cpu_p50"] / floor["cpu_p50"]
    limit = TARGETS["first_cpu_ratio"]
    start, rss = first["daemon start-up (background)"], first["daemon_idle_rss_mb"]
    return [
        (f"python -c pass (first-prompt runs, n={floor['n']})", _value(floor, floor), "", ""),
        (
            "first prompt, no daemon yet",
            _value(r, floor),
            f"CPU ≤ {limit:g}× python -c pass",
            "PASS" if ratio <= limit else "FAIL",
        ),
        (
            "daemon start-up, in the background",
            f"serving after {start['ready_s_p50']} s · {start['cpu_s_p50']} CPU-s",
            "",
            "",
        ),
        (
            "daemon RSS at idle",
            f"{rss} MB",
            f"≤ {TARGETS['daemon_rss_mb']:g} MB",
            "PASS" if rss <= TARGETS["daemon_rss_mb"] else "FAIL",
        ),
    ]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=62, help="distinct prompts (≥ 50)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--first", type=int, default=8, help="first-prompt samples")
    args = parser.parse_args(argv)
    HOME.mkdir(parents=True, exist_ok=True)
    compileall.compile_dir(REPO / "src" / "briefd", quiet=1)
    db = fresh(HOME / "recall.db")
    settings = settings_for(db, REPO / "testdata" / "knowledge", embeddings=False)
    texts = prompts(args.prompts)
    hybrid = hybrid_api()
    daemon = daemon_env(HOME / "hybrid.db") if hybrid is not None else None
    first = None
    with Briefd(settings, embedder=None) as api, ExitStack() as stack:
        api.index()
        load_start = load_average()
        urls = {"warm server": stack.enter_context(warm_server(api))}
        if hybrid is not None and daemon is not None:
            stack.callback(hybrid.close)
            urls["warm server, hybrid"] = stack.enter_context(warm_server(hybrid))
            stack.callback(stop_daemon, daemon)
            stop_daemon(daemon)
            spawn([*HOOK, "warm up"], b"", daemon)
            await_daemon(daemon)
        for url in urls.values():
            spawn([*HOOK, "--server", url, "warm up"], b"", dict(os.environ))
        pid = daemon_state(daemon).get("pid") if daemon is not None else None
        cpu_before = process_cpu_s(pid) if pid else 0.0
        results = measure(texts, args.rounds, urls, db, daemon)
        if daemon is not None:
            own = daemon_recall_ms(daemon, len(texts) * args.rounds)
            if own and pid:  # its CPU over the run, idle spins included, per prompt it answered
                used = process_cpu_s(pid) - cpu_before
                own["cpu_ms"] = round(used * 1000 / (len(texts) * args.rounds), 1)
            if own:
                results["daemon warm, hybrid"]["daemon_recall"] = own
            rss = idle_rss_mb(daemon)
            first = first_prompts(texts, args.first, daemon) | {"daemon_idle_rss_mb": rss}
    facts = {"load_average": f"{load_start} → {load_average()}", "prompts": len(texts)}
    record = {**facts, "latency": results, "first_prompt": first}
    (WORK / "recall.json").write_text(json.dumps(record, indent=2))
    title = (
        f"briefd recall hook latency · spawn → exit · {len(texts)} prompts × {args.rounds} · "
        f"{os.cpu_count()} CPUs · load {facts['load_average']}"
    )
    print_table(title, {"prompt-time hook (testdata/knowledge)": rows(results, first)})
    return results


if __name__ == "__main__":
    main()
