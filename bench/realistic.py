"""BM25 on a large index that does not repeat itself: scifact's corpus and queries inside ten
copies of markdown-docs (~60K chunks). The 50K replica of run.py repeats every chunk 50 times,
which fills every all-terms list; here the scifact documents are unique, so this measures the
query shapes real corpora see, and scifact's relevance labels say whether the ranking holds.

    .venv/bin/python bench/realistic.py    # prints its own table; run.py includes it too

The index is built BM25-only once under .briefd/bench/realistic-<key>/ and reused.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path
from typing import Any

from common import DOCS, REPO, WORK, log, settings_for, step, summary

from briefd.api import Briefd
from briefd.eval.datasets import beir_doc_path, beir_markdown, load_beir
from briefd.eval.metrics import mean
from briefd.eval.run import beir_cases, score_cases
from briefd.retrieval.search import SearchRequest

SCIFACT = REPO.parent / "shared" / "eval-data" / "scifact"
COPIES = 10
Row = tuple[str, str, str, str]


def build(home: Path) -> Path:
    db = home / "index.db"
    if db.is_file():
        log(f"> realistic index: cached in {home.relative_to(REPO)}")
        return db
    shutil.rmtree(home, ignore_errors=True)
    kb = home / "kb"
    for doc_id, title, text in load_beir(SCIFACT).corpus:
        path = kb / beir_doc_path(doc_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(beir_markdown(title, text, doc_id), encoding="utf-8")
    for k in range(COPIES):
        for source in sorted(DOCS.rglob("*.md")):
            target = kb / "conventions" / f"copy-{k:02d}" / source.relative_to(DOCS)
            target.parent.mkdir(parents=True, exist_ok=True)
            text = source.read_text(encoding="utf-8")
            target.write_text(text if k == 0 else text.replace("# ", f"# [c{k}] ", 1), "utf-8")
    settings = settings_for(db, kb, embeddings=False)
    with step("index scifact + markdown-docs copies, BM25 only"), Briefd(settings, None) as api:
        api.index()
    shutil.rmtree(kb)
    return db


def measure() -> dict[str, Any]:
    if not (SCIFACT.is_dir() and DOCS.is_dir()):
        return {"skipped": "scifact or markdown-docs is absent"}
    db = build(WORK / f"realistic-{COPIES}")
    dataset = load_beir(SCIFACT)
    cases, unit = beir_cases(dataset)
    with Briefd(settings_for(db, embeddings=False), embedder=None) as api:
        with api.store.read() as conn:
            chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
        quality = mean(score_cases(api, "bm25", cases, unit))
        times = []
        for _, query, _, _ in cases:
            started = time.perf_counter()
            api.search(SearchRequest(query, ("all",), top_k=8, mode="bm25"))
            times.append((time.perf_counter() - started) * 1000)
    return {
        "chunks": chunks,
        "queries": len(cases),
        "ndcg@10": quality["ndcg@10"],
        "ms": summary(times),
    }


def rows(found: dict[str, Any]) -> list[Row]:
    if "skipped" in found:
        return [("skipped", found["skipped"], "", "")]
    ms = found["ms"]
    p95 = ms["p95"]
    return [
        (
            f"BM25, scifact's {found['queries']} queries in {found['chunks']} chunks",
            f"p50 {ms['p50']:.1f} / p95 {p95:.1f} ms · nDCG@10 {found['ndcg@10']:.4f}",
            "<= 8",
            "PASS" if p95 <= 8 else "FAIL",
        )
    ]


if __name__ == "__main__":
    import report

    WORK.mkdir(parents=True, exist_ok=True)
    report.print_table("briefd BM25 on a realistic large index", {"6.": rows(measure())})
    sys.exit(0)
