"""A real briefd index of a million chunks (O4): build time, disk and RSS of each stage, and
hybrid, BM25 and vector search as served, with recall@10 of the HNSW path against the exact scan.

    .venv/bin/python bench/million_hybrid.py SAMPLE_REAL_DB [--rows 1000000] [--queries 100]

The index is real: the sample's Markdown files (``sample-*/kb``) copied N times under
``domain/copy-NNN/``, every copy retitled ``[cNNN]`` (as the 50K replica is made), indexed by
``Briefd.index`` with BM25 only; then every chunk gets a vector derived from the real vector of
the sample chunk it was copied from, by the ``shaped`` derivation of bench/million.py (real
vector plus noise drawn from the real passages' covariance, scaled so that a derived row is as
close to its source as a real passage is to its nearest real neighbour), written straight into
``chunk_vectors`` under the real model id; a last ``Briefd.index`` with the real embedder finds
nothing to embed and fits the gate's calibration, and a first search builds the HNSW graph
(``vectors.ann_threshold``) and saves it beside the index. Each stage runs in its own process,
so its peak RSS is its own. The index is kept under ``.briefd/bench/million-<rows>/`` and
reused (``--rebuild`` starts over); the copied Markdown is deleted once indexed.

Measuring runs bench/latency.py's loop in a fresh process (modes take turns, every query
misses the query-embedding cache, so hybrid and vector include the query embedding), then
recall@10 of the index's HNSW path against an exact scan of the same rows. Writes
.briefd/bench/million-hybrid.json and prints a table.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import REPO, WORK, IndexProgress, load_average, log, rss_mb, settings_for, summary
from corpus import SourceDoc, retitle
from report import Row, print_table

from briefd.api import Briefd
from briefd.embeddings.base import normalise
from briefd.embeddings.registry import create_embedder
from briefd.settings import Settings
from briefd.store.db import Store
from briefd.vectors import store as vector_store
from briefd.vectors.index import VectorIndex

TARGET_P95_MS = 40.0  # issue 20's 1M row
TARGET_RECALL = 0.95
MODES = ("hybrid", "bm25", "vector")
STAGES = ("copies", "bm25", "vectors", "calibration", "graph")
LABEL = "[c####]"  # a copy's title prefix, before its number replaces the hashes
SAVE_BLOCK = 20_000  # vectors derived and written per transaction


def home_for(rows: int) -> Path:
    return WORK / f"million-{rows}"


def _sample_docs(sample_db: Path) -> list[tuple[str, str]]:
    """(path under domain/, text) of the sample's Markdown files, beside its real.db."""
    root = sample_db.parent / "kb" / "domain"
    return [(p.relative_to(root).as_posix(), p.read_text()) for p in sorted(root.rglob("*.md"))]


def stage_copies(home: Path, sample_db: Path, chunks: int) -> dict[str, Any]:
    store = Store.open(sample_db)
    try:
        with store.read() as conn:
            per_copy = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
            titles = dict(
                conn.execute("SELECT path, title FROM documents WHERE path LIKE 'domain/%'")
            )
    finally:
        store.close()
    copies = -(-chunks // per_copy)
    docs = [
        SourceDoc(rel, text, titles[f"domain/{rel}"], 0, (), ())
        for rel, text in _sample_docs(sample_db)
    ]
    kb = home / "kb" / "domain"
    retitled = [retitle(doc, LABEL) for doc in docs]  # checked once; the label then replaced
    for k in range(copies):
        for doc, text in zip(docs, retitled, strict=True):
            target = kb / f"copy-{k:04d}" / doc.rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(doc.text if k == 0 else text.replace(LABEL, f"[c{k:04d}]", 1))
    size = sum(p.stat().st_size for p in kb.rglob("*.md"))
    return {"copies": copies, "files": copies * len(docs), "markdown_mb": _mb(size)}


def stage_bm25(home: Path, sample_db: Path, chunks: int) -> dict[str, Any]:
    with Briefd(settings_for(home / "index.db", home / "kb", embeddings=False), None) as api:
        report = api.index(progress=IndexProgress("bm25", every=60))
    return {"chunks": report.chunks, "db_mb": _db_mb(home / "index.db")}


def stage_vectors(home: Path, sample_db: Path, chunks: int) -> dict[str, Any]:
    """Every chunk: the real vector of its source chunk plus shaped noise (bench/million.py)."""
    from million import _scale_to_neighbour  # the derivation bench/million.py measures

    model = _model_id()
    real = _real_vectors(sample_db, model)
    matrix = np.stack(list(real.values()))
    rng = np.random.default_rng(7)
    cov = np.cov(matrix, rowvar=False).astype(np.float64)
    root = np.linalg.cholesky(cov + 1e-9 * np.eye(len(cov))).astype(np.float32)
    scale = _scale_to_neighbour(matrix, root, rng)
    store = Store.open(home / "index.db")
    try:
        with store.read() as conn:
            rows = conn.execute(
                "SELECT d.path, c.position, c.embed_hash FROM chunks c "
                "JOIN documents d ON d.id = c.doc_id ORDER BY c.rowid"
            ).fetchall()
        for start in range(0, len(rows), SAVE_BLOCK):
            part = rows[start : start + SAVE_BLOCK]
            base = np.stack([real[(path.split("/", 2)[2], pos)] for path, pos, _ in part])
            noise = rng.standard_normal(base.shape, dtype=np.float32) @ root.T
            with store.write() as conn:
                vector_store.save(
                    conn, model, [r[2] for r in part], normalise(base + scale * noise)
                )
        with store.read() as conn:
            uncovered = vector_store.uncovered(conn, model)
    finally:
        store.close()
    return {"scale": round(scale, 3), "vectors": len(rows), "uncovered": uncovered}


def stage_calibration(home: Path, sample_db: Path, chunks: int) -> dict[str, Any]:
    with Briefd(settings_for(home / "index.db", home / "kb"), _embedder()) as api:
        report = api.index(progress=IndexProgress("calibration", every=60))
    if report.embedded or report.vectors_missing or report.embedding_error:
        raise RuntimeError(f"the index was not fully covered by derived vectors: {report}")
    shutil.rmtree(home / "kb")
    return {"chunks": report.chunks, "db_mb": _db_mb(home / "index.db")}


def stage_graph(home: Path, sample_db: Path, chunks: int) -> dict[str, Any]:
    """The first search loads the vectors and builds and saves the HNSW graph."""
    from briefd.retrieval.search import SearchRequest

    with Briefd(settings_for(home / "index.db"), _embedder()) as api:
        api.search(SearchRequest("load the vectors", scopes=("all",), mode="vector", top_k=8))
    files = list(home.glob("index.db.hnsw-*")) + list(home.glob("index.db.vectors-*"))
    return {
        "beside_mb": _mb(sum(f.stat().st_size for f in files)),
        "files": [f.name for f in files],
    }


def _embedder() -> Any:
    embedder = create_embedder(Settings())
    assert embedder is not None
    return embedder


def _model_id() -> str:
    return str(_embedder().model_id)


def _real_vectors(sample_db: Path, model: str) -> dict[tuple[str, int], np.ndarray]:
    store = Store.open(sample_db)
    try:
        with store.read() as conn:
            rows = conn.execute(
                "SELECT d.path, c.position, v.dim, v.embedding FROM chunks c "
                "JOIN documents d ON d.id = c.doc_id "
                "JOIN chunk_vectors v ON v.model = ? AND v.embed_hash = c.embed_hash",
                (model,),
            ).fetchall()
    finally:
        store.close()
    return {
        (r[0].removeprefix("domain/"), r[1]): vector_store.from_blobs([r[3]], r[2])[0] for r in rows
    }


def _mb(size: int) -> float:
    return round(size / 2**20, 1)


def _db_mb(db: Path) -> float:
    return _mb(sum(p.stat().st_size for p in db.parent.glob(db.name + "*") if p.is_file()))


def run_stage(name: str, home: Path, sample_db: Path, chunks: int) -> None:
    """One build stage in this process: its facts (wall, CPU, peak RSS) to ``<home>/NAME.json``."""
    log(f"> stage {name} (load average {load_average()})")
    started, cpu = time.perf_counter(), time.process_time()
    facts = globals()[f"stage_{name}"](home, sample_db, chunks)
    facts.update(
        wall_s=round(time.perf_counter() - started, 1),
        cpu_s=round(time.process_time() - cpu, 1),
        peak_rss_mb=rss_mb("VmHWM"),
        load_average_end=load_average(),
    )
    (home / f"{name}.json").write_text(json.dumps(facts, indent=2))
    log(f"  {name}: {json.dumps(facts)}")


def build(home: Path, sample_db: Path, chunks: int, rebuild: bool) -> dict[str, Any]:
    """Every stage not yet done, each in a fresh process; the facts of all of them."""
    if rebuild:
        shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True, exist_ok=True)
    for name in STAGES:
        if (home / f"{name}.json").is_file():
            continue
        command = [sys.executable, __file__, "--stage", name, str(sample_db), "--rows", str(chunks)]
        subprocess.run(command, check=True)
    return {name: json.loads((home / f"{name}.json").read_text()) for name in STAGES}


def _plan(args: argparse.Namespace) -> dict[str, Any]:
    """bench/run.py's query plan, each mode's list cut to ``--queries``."""
    plan = json.loads(args.plan.read_text())
    for mode in MODES:
        plan[mode] = plan[mode][: args.queries]
    return dict(plan)


def _child(args: argparse.Namespace, *command: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, *command], capture_output=True, text=True, cwd=REPO, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"{command[0]} failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.splitlines()[-1]))


def measure(home: Path, facts: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """bench/latency.py on the index in a fresh process, then recall in another."""
    db = home / "index.db"
    plan_file = home / "plan.json"
    plan_file.write_text(json.dumps(_plan(args), ensure_ascii=False))
    result: dict[str, Any] = {"chunks": facts["bm25"]["chunks"], "build": facts}
    result["load_average_start"] = load_average()
    result["disk_mb"] = {
        "index_db": _db_mb(db),
        "beside": _mb(sum(f.stat().st_size for f in home.glob("index.db.*-*"))),
    }
    result["tables_mb"] = _tables_mb(db)
    log(f"> latency, {args.queries} queries a mode (load average {load_average()})")
    latency = Path(__file__).with_name("latency.py")
    result["latency"] = _child(args, str(latency), str(db), str(plan_file))
    log(f"> recall of the HNSW path (load average {load_average()})")
    script = str(Path(__file__))
    rows = ["--rows", str(args.rows), "--queries", str(args.queries), "--plan", str(args.plan)]
    result["recall"] = _child(args, script, str(args.db), *rows, "--recall")
    result["load_average_end"] = load_average()
    return result


def lexical(db: Path, plan: dict[str, Any]) -> dict[str, Any]:
    """BM25 search alone (no model loaded: it can run before the vectors are derived), its
    profile and bench/latency.py's split of the two FTS5 queries."""
    from latency import describe, lexical_split, profile, request

    rss = {"start_mb": rss_mb()}
    out: dict[str, Any] = {"load_average_start": load_average(), "rss": rss}
    with Briefd(settings_for(db, embeddings=False), None) as api:
        started = time.perf_counter()
        api.search(request(plan["warmup"], "bm25"))
        out["first_query_ms"] = round((time.perf_counter() - started) * 1000, 1)
        rss["after_first_query_mb"] = rss_mb()
        rows = []
        for text in plan["bm25"] + plan["hybrid"]:
            started, used = time.perf_counter(), time.process_time()
            hits = api.search(request(text, "bm25")).hits
            ms = (time.perf_counter() - started) * 1000
            cpu = (time.process_time() - used) * 1000
            rows.append({"query": text, "ms": ms, "embed_ms": 0.0, "hits": len(hits), "cpu": cpu})
        out["bm25"] = describe(rows, set(plan["off_topic"]))
        out["bm25"]["cpu_ms"] = summary([r["cpu"] for r in rows])
        out["profile"] = profile(api, plan["profile"]["bm25"], "bm25", None)
        out["lexical"] = lexical_split(api, plan["profile"]["bm25"])
        rss["peak_mb"] = rss_mb("VmHWM")
    out["load_average_end"] = load_average()
    return out


def _tables_mb(db: Path) -> dict[str, float]:
    """Disk per table and its indexes (SQLite's dbstat), the largest first."""
    store = Store.open(db)
    try:
        with store.read() as conn:
            try:
                found = conn.execute(
                    "SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT 12"
                ).fetchall()
            except sqlite3.OperationalError:  # built without SQLITE_ENABLE_DBSTAT_VTAB
                return {}
    finally:
        store.close()
    return {name: _mb(size) for name, size in found}


def recall(db: Path, texts: list[str]) -> dict[str, Any]:
    """Recall@10 and @50 of the served HNSW index against an exact scan of the same rows, and
    how many of a hybrid search's top 8 hits stay the same when the exact scan answers."""
    embedder = _embedder()
    vectors = embedder.embed_batch(texts, "query")
    with Briefd(settings_for(db), embedder) as api:
        with api.store.read() as conn:
            ann = api.semantic.index(conn)  # type: ignore[union-attr]
        exact = VectorIndex.build(ann.model, ann.rowids.tolist(), ["all"] * len(ann), ann.vectors)
        out = _recall(ann, exact, vectors)
        served, out["served_ms"], out["served_cpu_ms"] = _hits(api, texts)
    with Briefd(settings_for(db, vectors__ann_threshold=0), embedder) as api:
        scanned, out["exact_ms"], out["exact_cpu_ms"] = _hits(api, texts)
    same = [len(set(a) & set(b)) / max(len(b), 1) for a, b in zip(served, scanned, strict=True)]
    out["hybrid_top8_same_as_exact"] = round(float(np.mean(same)), 4)
    out["hybrid_identical_lists"] = round(
        float(np.mean([a == b for a, b in zip(served, scanned, strict=True)])), 4
    )
    return out


def _recall(ann: VectorIndex, exact: VectorIndex, vectors: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"queries": len(vectors), "hnsw": ann.ann is not None}
    names_ann, names_exact = list(ann.scope_names), list(exact.scope_names)
    for k in (10, 50):
        found = []
        for query in vectors:
            truth = {r for r, _ in exact.top(query, names_exact, k)}
            got = {r for r, _ in ann.top(query, names_ann, k)}
            found.append(len(truth & got) / k)
        out[f"recall@{k}"] = round(float(np.mean(found)), 4)
        out[f"min_recall@{k}"] = round(float(np.min(found)), 2)
    return out


def _hits(api: Briefd, texts: list[str]) -> tuple[list[list[str]], Any, Any]:
    """Each query's hybrid hits (the query embedding cached: embedded for the recall), and
    the wall and CPU milliseconds (every thread of the process) of each search."""
    from latency import request

    hits, wall, cpu = [], [], []
    for text in texts:
        started, used = time.perf_counter(), time.process_time()
        hits.append([hit.chunk_id for hit in api.search(request(text, "hybrid")).hits])
        wall.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - used) * 1000)
    return hits, summary(wall), summary(cpu)


def table(result: dict[str, Any]) -> list[Row]:
    build, lat, rec = result["build"], result["latency"], result["recall"]
    modes, rss = lat["modes"], lat["rss"]

    def took(stage: str) -> str:
        facts = build[stage]
        return f"{facts['wall_s']} s ({facts['cpu_s']} CPU-s), peak RSS {facts['peak_rss_mb']} MB"

    def pp(mode: str, key: str = "latency_ms") -> str:
        stats = modes[mode][key]
        said = f"p50 {stats['p50']:.1f} / p95 {stats['p95']:.1f} ms"
        cpu = modes[mode].get("cpu_ms") if key == "latency_ms" else None
        return said + (f" (CPU p50 {cpu['p50']:.1f} / p95 {cpu['p95']:.1f} ms)" if cpu else "")

    hybrid_p95 = modes["hybrid"]["latency_ms"]["p95"]
    recall10 = rec["recall@10"]
    return [
        (f"Markdown written ({build['copies']['files']:,} files)", took("copies"), "", ""),
        (f"BM25 index, Briefd.index ({build['bm25']['chunks']:,} chunks)", took("bm25"), "", ""),
        ("vectors derived and stored (shaped)", took("vectors"), "", ""),
        ("index run with the model (nothing to embed; calibration)", took("calibration"), "", ""),
        ("first search: load vectors, build + save HNSW graph", took("graph"), "", ""),
        (
            "disk: index.db / beside it (int8 rows, HNSW graph)",
            f"{result['disk_mb']['index_db']:,} / {result['disk_mb']['beside']:,} MB",
            "",
            "",
        ),
        (
            "largest tables",
            ", ".join(f"{k} {v:,.0f}" for k, v in list(result["tables_mb"].items())[:4]) + " MB",
            "",
            "",
        ),
        (
            "hybrid search, query embedding included",
            pp("hybrid"),
            f"p95 <= {TARGET_P95_MS:g} ms",
            "PASS" if hybrid_p95 <= TARGET_P95_MS else "FAIL",
        ),
        ("hybrid, without the query embedding", pp("hybrid", "without_embedding_ms"), "", ""),
        ("BM25 search", pp("bm25"), "", ""),
        ("vector search, query embedding included", pp("vector"), "", ""),
        (
            "first query after start (loads postings, vectors, graph)",
            f"{lat['first_query_ms']} ms",
            "",
            "",
        ),
        (
            ("HNSW" if rec["hnsw"] else "exact scan (below vectors.ann_threshold)")
            + " recall@10 / @50 vs exact scan (min per query)",
            f"{recall10:.3f} (min {rec['min_recall@10']:.1f}) / {rec['recall@50']:.3f}",
            f">= {TARGET_RECALL}",
            "PASS" if recall10 >= TARGET_RECALL else "FAIL",
        ),
        (
            "hybrid top-8 hits shared with the exact scan's / identical lists",
            f"{rec['hybrid_top8_same_as_exact']:.1%} / {rec['hybrid_identical_lists']:.0%}",
            "",
            "",
        ),
        (
            "RSS: model loaded / after first query / after all queries (peak)",
            f"{rss['model_loaded_mb']} / {rss['after_first_query_mb']} / "
            f"{rss['after_all_queries_mb']} ({rss['peak_mb']}) MB",
            "",
            "",
        ),
    ]


def main(argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db", type=Path, help="the really embedded sample's real.db")
    parser.add_argument("--rows", type=int, default=1_000_000, help="chunks, at least")
    parser.add_argument("--queries", type=int, default=100, help="per search mode")
    parser.add_argument("--rebuild", action="store_true", help="build the index again")
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument(
        "--bm25-only", action="store_true", help="BM25 search once the BM25 stage is built"
    )
    parser.add_argument("--plan", type=Path, default=WORK / "queries.json", help="bench/run.py's")
    parser.add_argument("--stage", choices=STAGES, help=argparse.SUPPRESS)
    parser.add_argument("--recall", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    home = home_for(args.rows)
    if args.stage:
        run_stage(args.stage, home, args.db.resolve(), args.rows)
        return {}
    if args.bm25_only:  # the BM25 stage must be built; the others need not be
        result = lexical(home / "index.db", _plan(args))
        (WORK / "million-bm25.json").write_text(json.dumps(result, indent=2))
        print(json.dumps(result, indent=2))
        return result
    facts = build(home, args.db.resolve(), args.rows, args.rebuild)
    if args.build_only:
        print(json.dumps(facts, indent=2))
        return facts
    if args.recall:
        print(json.dumps(recall(home / "index.db", _plan(args)["hybrid"])))
        return {}
    result = measure(home, facts, args)
    (WORK / "million-hybrid.json").write_text(json.dumps(result, indent=2))
    print_table(
        f"a real briefd index of {result['chunks']:,} chunks · load average "
        f"{result['load_average_start']} → {result['load_average_end']}",
        {f"{result['chunks']:,} chunks, hybrid as served": table(result)},
    )
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
