"""The results table: one row per number, with its target and verdict where there is one."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

Row = tuple[str, str, str, str]  # metric, value, target, verdict

TARGETS = {"hybrid_p95_ms": 10.0, "bm25_p95_ms": 8.0, "rss_mb": 250.0, "rss_50k_mb": 200.0}


def _check(value: float, limit: float) -> tuple[str, str]:
    return f"<= {limit:g}", "PASS" if value <= limit else "FAIL"


def _pp(stats: dict[str, float]) -> str:
    return f"p50 {stats['p50']:.1f} / p95 {stats['p95']:.1f} ms"


def indexing_rows(sample: dict[str, Any], replica: dict[str, Any]) -> list[Row]:
    real, bm25 = sample["real"], sample["bm25"]
    cpu = real["cpu_s"] / real["wall_s"] * 100 if real["wall_s"] else 0
    cached = " (cached build)" if replica["cached"] else ""
    reused = " (previous run, --quick)" if sample["cached"] else ""
    return [
        (
            f"BM25-only index, sample ({bm25['chunks']} chunks)",
            f"{bm25['chunks_per_s']:.0f} chunks/s ({bm25['wall_s']} s)",
            "",
            "",
        ),
        (
            f"embedding phase ({real['embedded']} passages, ~{real['model_tokens_mean']} e5 tokens)",
            f"{real['embed_chunks_per_s']} chunks/s ({real['embed_s']} s){reused}",
            "",
            "",
        ),
        (
            "index with real embeddings, total",
            f"{real['chunks_per_s']} chunks/s ({real['wall_s']} s, CPU {cpu:.0f}%){reused}",
            "",
            "",
        ),
        (
            f"BM25-only index, replica ({replica['bm25']['chunks']} chunks){cached}",
            f"{replica['bm25']['chunks_per_s']:.0f} chunks/s ({replica['bm25']['wall_s']} s)",
            "",
            "",
        ),
    ]


def latency_rows(latency: dict[str, Any]) -> list[Row]:
    modes = latency["modes"]
    hybrid, bm25, vector = modes["hybrid"], modes["bm25"], modes["vector"]
    rows: list[Row] = [
        (
            f"hybrid, incl. query embedding (n={hybrid['latency_ms']['n']})",
            _pp(hybrid["latency_ms"]),
            *_check(hybrid["latency_ms"]["p95"], TARGETS["hybrid_p95_ms"]),
        ),
        ("  of which query embedding", _pp(hybrid["query_embedding_ms"]), "", ""),
        ("  hybrid without the embedding", _pp(hybrid["without_embedding_ms"]), "", ""),
        (
            f"BM25 only (n={bm25['latency_ms']['n']})",
            _pp(bm25["latency_ms"]),
            *_check(bm25["latency_ms"]["p95"], TARGETS["bm25_p95_ms"]),
        ),
        (
            "  caution: flattered by the replica",
            "every chunk is there 50 times, so all-terms lists fill and the any-term list "
            "is skipped; step 6 measures a large index that does not repeat itself",
            "",
            "",
        ),
        (
            f"vector only, incl. embedding (n={vector['latency_ms']['n']})",
            _pp(vector["latency_ms"]),
            "",
            "",
        ),
        ("  vector without the embedding", _pp(vector["without_embedding_ms"]), "", ""),
        ("first query (loads vectors, vocabulary)", f"{latency['first_query_ms']} ms", "", ""),
        (
            "hybrid: empty results (the gate) ",
            f"{hybrid['off_topic_empty']} of {hybrid['off_topic']} off-topic, "
            f"{hybrid['on_topic_empty']} of {hybrid['latency_ms']['n'] - hybrid['off_topic']} "
            f"on-topic queries; {hybrid['mean_hits']} hits on average",
            "",
            "",
        ),
    ]
    lexical = latency["lexical"]
    share = lexical["any_term_match_percent"]
    rows.append(
        (
            "FTS5 alone (the fallback): all-terms | any-term (OR) query",
            f"{_pp(lexical['all_terms_ms'])} | {_pp(lexical['any_term_ms'])}",
            "",
            "",
        )
    )
    rows.append(
        (
            "  chunks the OR query matches",
            f"p50 {share['p50']:.0f}% / p95 {share['p95']:.0f}%",
            "",
            "",
        )
    )
    for mode in ("hybrid", "bm25"):
        steps = latency["profile"][mode]["ms_per_query"]
        ranked = sorted(steps.items(), key=lambda item: -item[1])
        parts = ", ".join(f"{k} {v:.1f}" for k, v in ranked if v >= 0.05)
        rows.append((f"{mode} cProfile ms/query", parts, "", ""))
    return rows


def memory_rows(small: dict[str, Any], latency: dict[str, Any]) -> list[Row]:
    rss = latency["rss"]
    return [
        ("model loaded, no index", f"{rss['model_loaded_mb']} MB", "", ""),
        (
            "idle: model + sample index, one query",
            f"{small['rss']['after_first_query_mb']} MB",
            *_check(small["rss"]["after_first_query_mb"], TARGETS["rss_mb"]),
        ),
        (
            "model + 50K vector index, one query",
            f"{rss['after_first_query_mb']} MB",
            *_check(rss["after_first_query_mb"], TARGETS["rss_50k_mb"]),
        ),
        (
            "peak (VmHWM) while loading the 50K vectors",
            f"{rss['peak_after_first_query_mb']} MB",
            *_check(rss["peak_after_first_query_mb"], TARGETS["rss_50k_mb"]),
        ),
        ("after all queries", f"{rss['after_all_queries_mb']} MB", "", ""),
    ]


def ann_rows(label: str, ann: dict[str, Any]) -> list[Row]:
    rows: list[Row] = [
        (f"{label}: {ann['rows']} vectors, HNSW build", f"{ann['ann_build_s']} s", "", "")
    ]
    for key in (k for k in ann if k.startswith("k") and k[1:].isdigit()):
        item = ann[key]
        rows.append(
            (
                f"  recall@{key[1:]}, ANN vs exact",
                f"{item['recall']:.3f} (worst query {item['min_recall']})",
                "",
                "",
            )
        )
        rows.append(
            (
                f"  top-{key[1:]} latency exact | ANN",
                f"{_pp(item['exact_ms'])} | {_pp(item['ann_ms'])}",
                "",
                "",
            )
        )
    return rows


def print_table(title: str, sections: dict[str, list[Row]]) -> None:
    table = Table(title=title, show_lines=False)
    for name in ("metric", "value", "target", "verdict"):
        table.add_column(name)
    for section, rows in sections.items():
        table.add_section()
        table.add_row(f"[bold]{section}[/bold]", "", "", "")
        for row in rows:
            style = {"PASS": "green", "FAIL": "red"}.get(row[3])
            table.add_row(*row, style=style)
    Console(width=160).print(table)
