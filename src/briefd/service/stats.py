"""``/api/stats`` (I2) and the dashboard's numbers, pure: a metrics snapshot plus the API's
overview and link findings become one JSON-ready dict."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from briefd.model import LinkFindings
from briefd.service.metrics import (
    CACHE,
    DURATION,
    EMBEDDINGS,
    INVALID,
    LATENCY_BUCKETS,
    REQUESTS,
    TOKENS,
    Key,
)
from briefd.settings import Settings
from briefd.sources.layout import nothing_found
from briefd.store.scopes import default_scope_warnings

FINDINGS_SHOWN = 50


def quantile_ms(buckets: Mapping[float, float], count: float, q: float) -> float | None:
    """Upper bound (ms) of the histogram bucket holding quantile ``q``; None without data."""
    if count <= 0:
        return None
    rank = q * count
    for le in LATENCY_BUCKETS:
        if buckets.get(le, 0.0) >= rank:
            return le * 1000
    return None  # beyond the largest bucket


def request_table(values: Mapping[Key, float]) -> list[dict[str, Any]]:
    """One row per surface and tool or endpoint: requests, ``errors`` (every outcome but
    ``ok``), ``invalid`` (those among them rejected for their arguments), and the latency of
    the timed ones (a rejection is not timed)."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    buckets: dict[tuple[str, str], dict[float, float]] = {}
    for (name, raw), value in values.items():
        labels = json.loads(raw)
        if name == REQUESTS:
            ident = (labels["surface"], labels["name"])
            row = rows.setdefault(ident, _row(ident))
            row["count"] += value
            if labels["outcome"] != "ok":
                row["errors"] += value
            if labels["outcome"] == INVALID:
                row["invalid"] += value
        elif name == f"{DURATION}:sum":
            rows.setdefault((labels["surface"], labels["name"]), _row(None))["seconds"] = value
        elif name == f"{DURATION}:count":
            rows.setdefault((labels["surface"], labels["name"]), _row(None))["timed"] = value
        elif name == f"{DURATION}:bucket" and labels["le"] != "+Inf":
            ident = (labels["surface"], labels["name"])
            buckets.setdefault(ident, {})[float(labels["le"])] = value
        elif name == TOKENS:
            ident = (labels["surface"], labels["name"])
            rows.setdefault(ident, _row(ident))["tokens"] += value
    out = []
    for ident, row in sorted(rows.items()):
        row["surface"], row["name"] = ident
        timed = row.pop("timed")
        row["mean_ms"] = round(row.pop("seconds") * 1000 / timed, 3) if timed else None
        row["p50_ms"] = quantile_ms(buckets.get(ident, {}), timed, 0.5)
        row["p95_ms"] = quantile_ms(buckets.get(ident, {}), timed, 0.95)
        out.append(row)
    return out


def _row(_: object) -> dict[str, Any]:
    return {
        "count": 0.0,
        "errors": 0.0,
        "invalid": 0.0,
        "tokens": 0.0,
        "seconds": 0.0,
        "timed": 0.0,
    }


def _total(values: Mapping[Key, float], name: str, **labels: str) -> float:
    return sum(
        v
        for (n, raw), v in values.items()
        if n == name and labels.items() <= json.loads(raw).items()
    )


def findings_out(found: LinkFindings) -> dict[str, Any]:
    def links(items: tuple[Any, ...]) -> list[dict[str, Any]]:
        return [
            {
                "source_path": r.link.source_path,
                "line": r.link.line,
                "target": r.link.target,
                "detail": r.detail,
            }
            for r in items[:FINDINGS_SHOWN]
        ]

    return {
        "counts": {
            "broken": len(found.broken),
            "ambiguous": len(found.ambiguous),
            "unknown_anchors": len(found.unknown_anchors),
            "duplicate_anchors": len(found.duplicate_anchors),
            "orphans": len(found.orphans),
            "to_superseded": len(found.to_superseded),
        },
        "broken": links(found.broken),
        "ambiguous": links(found.ambiguous),
        "unknown_anchors": links(found.unknown_anchors),
        "duplicate_anchors": [
            {"path": path, "anchor": anchor, "lines": list(lines)}
            for path, anchor, lines in found.duplicate_anchors[:FINDINGS_SHOWN]
        ],
        "orphans": list(found.orphans[:FINDINGS_SHOWN]),
        "to_superseded": links(found.to_superseded),
    }


def index_warnings(
    overview: Mapping[str, Any], scopes: Sequence[str], source: str, settings: Settings
) -> list[str]:
    """What the server's start-up log says about the index, for the dashboard: a run that
    indexed no document (the folders looked in, the setting to change) and default scopes the
    index lacks (a mistyped ``default_scopes`` entry, which searches read without)."""
    out = list(default_scope_warnings(settings.default_scopes, scopes))
    if overview["documents"] == 0 and overview["last_indexed_at"]:
        skipped = [(x["path"], x["reason"]) for x in overview["skipped"]]
        out.insert(0, nothing_found(source, skipped, settings))
    return out


def stats(
    values: Mapping[Key, float],
    overview: Mapping[str, Any],
    scopes: list[dict[str, Any]],
    found: LinkFindings,
    jobs: Mapping[str, Any],
    warnings: Sequence[str] = (),
) -> dict[str, Any]:
    hits, misses = _total(values, CACHE, result="hit"), _total(values, CACHE, result="miss")
    return {
        "index": {
            "documents": overview["documents"],
            "chunks": overview["chunks"],
            "vectors": overview["vectors"],
            "scopes": scopes,
            "fingerprint": overview["fingerprint"],
            "last_indexed_at": overview["last_indexed_at"],
            # the first of each, and how many: the dashboard reads this every 10 s, and a
            # folder of 3,000 files outside the scopes made each answer 540 KB
            "skipped": overview["skipped"][:FINDINGS_SHOWN],
            "skipped_count": len(overview["skipped"]),
            "problems": overview["problems"][:FINDINGS_SHOWN],
            "problems_count": len(overview["problems"]),
            "warnings": list(warnings),
        },
        "sync": overview["sources"],
        "requests": request_table(values),
        "tokens_served": _total(values, TOKENS),
        "cache": {
            "hits": hits,
            "misses": misses,
            "hit_rate": round(hits / (hits + misses), 4) if hits + misses else None,
        },
        "embedding_calls": _total(values, EMBEDDINGS),
        "proposals": overview["proposals"],
        "links": findings_out(found),
        "usage_events": overview["usage_events"],
        "queries_logged": overview["queries_logged"],
        "counters_reset_at": overview["counters_reset_at"],
        "jobs": dict(jobs),
        "state_error": overview.get("state_error"),  # the shared state away: its counts None
    }
