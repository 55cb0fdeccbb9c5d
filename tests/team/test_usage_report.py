"""The usage report (T6) on a seeded query log, against counts made here from the entries
logged: per document and section, by surface, the last time served, and per day the kinds,
empty requests and latency percentiles. The log is written out of time order (entries merged
from replicas are), and read once whole (a window holding most of it) and once through its
``created_at`` index (a narrow window), which the report reads in different ways."""

from __future__ import annotations

import random
import shutil
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from briefd.api import Briefd
from briefd.settings import Settings, with_overrides
from briefd.store import activity
from briefd.store.activity import QueryLogEntry
from briefd.team.usage import DAYS_LISTED, UsageReport

SURFACES = ("mcp", "rest", "hook")
GONE = "gone/renamed.md#old-heading"  # a served section no longer in the index


def seeded(api: Briefd, count: int = 600) -> list[tuple[QueryLogEntry, tuple[str, ...]]]:
    """``count`` entries over the last 20 days in random order: each with the documents its
    sections belong to."""
    rng = random.Random(5)
    where = dict(
        api.store.conn.execute(
            "SELECT c.id, d.path FROM chunks c JOIN documents d ON d.id = c.doc_id"
        )
    )
    chunk_ids = sorted(where)
    now = datetime.now(UTC).replace(microsecond=0)
    out = []
    for n in range(count):
        surface = rng.choice(SURFACES)
        kind = "recall" if surface == "hook" else rng.choice(("search", "bundle"))
        sections = () if n % 6 == 0 else tuple(rng.sample(chunk_ids, rng.randint(1, 5)))
        if n % 50 == 7:
            sections = (*sections, GONE)
        at = now - timedelta(minutes=rng.randint(0, 20 * 24 * 60))
        entry = QueryLogEntry(
            kind,
            f"query {n % 40}",
            ("domain",),
            len(sections),
            round(rng.uniform(0.2, 1.2), 3) if sections else None,
            round(rng.uniform(1, 60), 3),
            surface,
            at.isoformat(timespec="seconds"),
            surface,
            "kept" if sections else "empty",
            sections,
        )
        documents = tuple(dict.fromkeys(where[c] for c in sections if c in where))
        out.append((entry, documents))
    api.log_queries([e for e, _ in out])
    return out


def expected(
    log: list[tuple[QueryLogEntry, tuple[str, ...]]], cutoff: str, sections: set[str]
) -> dict[str, object]:
    inside = [(e, d) for e, d in log if e.created_at >= cutoff]
    documents: dict[str, Counter[str]] = {}
    last: dict[str, str] = {}
    by_section: dict[str, Counter[str]] = {}
    for entry, paths in inside:
        for path in paths:
            documents.setdefault(path, Counter())[str(entry.surface)] += 1
            last[path] = max(last.get(path, ""), entry.created_at)
        for chunk_id in entry.sections:
            by_section.setdefault(chunk_id, Counter())[str(entry.surface)] += 1
    days: dict[str, list[QueryLogEntry]] = {}
    for entry, _ in inside:
        days.setdefault(entry.created_at[:10], []).append(entry)
    return {
        "requests": len(inside),
        "surfaces": dict(Counter(str(e.surface) for e, _ in inside)),
        "documents": {p: (c.total(), dict(c), last[p]) for p, c in documents.items()},
        "sections": {c: (n.total(), dict(n)) for c, n in by_section.items() if c in sections},
        "gone": int(GONE in by_section),
        "days": {
            day: (
                len(entries),
                dict(Counter(e.kind for e in entries)),
                sum(1 for e in entries if not e.results),
                [
                    round(float(p), 2)
                    for p in np.percentile([e.latency_ms for e in entries], [50, 95])
                ],
            )
            for day, entries in days.items()
        },
    }


def reported(report: UsageReport) -> dict[str, object]:
    return {
        "requests": report.requests,
        "surfaces": report.surfaces,
        "documents": {
            d.doc_path: (d.served, d.surfaces, d.last_served_at) for d in report.documents
        },
        "sections": {s.chunk_id: (s.served, s.surfaces) for s in report.sections},
        "gone": report.gone_sections,
        "days": {
            d.day: (d.requests, d.kinds, d.empty, [d.p50_ms, d.p95_ms])
            for d in report.days
            if d.requests
        },
    }


@pytest.mark.parametrize("back", [30, 4], ids=["whole-log", "narrow-window"])
def test_the_usage_report_counts_what_the_log_holds(indexed: Briefd, back: int) -> None:
    log = seeded(indexed)
    since = (datetime.now(UTC).date() - timedelta(days=back)).isoformat()  # midnight UTC
    report = indexed.usage(since, limit=500)
    in_index = {c for (c,) in indexed.store.conn.execute("SELECT id FROM chunks")}
    want = expected(log, report.since, in_index)
    assert want["requests"] == len(log) if back == 30 else 0 < want["requests"] < len(log) / 2
    assert reported(report) == want
    indexed_documents = indexed.store.conn.execute("SELECT count(*) FROM documents").fetchone()[0]
    assert report.never_served_count == indexed_documents - len(report.documents)


def test_a_long_window_lists_its_last_days_and_counts_them_all(
    settings: Settings, example_index: Path
) -> None:
    """T6: ``days`` held one entry per day of the window: a year's log was 361 entries (34 KB
    of JSON) in every GET /api/usage and knowledge_usage answer, every page of them again,
    whatever ``limit``. It lists the last ``DAYS_LISTED`` days (today last); ``days_count``
    counts the window's days, and ``requests`` every request in it."""
    now = datetime.now(UTC).replace(microsecond=0)
    ages = (360, 200, 91, 3, 0)
    entries = [
        QueryLogEntry("search", f"q{n}", ("domain",), 0, None, 5.0, "rest",
                      (now - timedelta(days=n)).isoformat(timespec="seconds"), "rest", "empty", ())
        for n in ages
    ]  # fmt: skip
    shutil.copyfile(example_index, settings.db)
    kept = with_overrides(settings, {"activity.retention_days": 400})  # a year's log kept
    with Briefd(kept, embedder=None) as indexed:
        indexed.log_queries(entries)
        report = indexed.usage("365d", limit=1, offset=1)
        short = indexed.usage("30d")
    today = now.date()
    assert len(report.days) == DAYS_LISTED
    assert report.days[-1].day == today.isoformat()
    assert report.days[0].day == (today - timedelta(days=DAYS_LISTED - 1)).isoformat()
    assert report.days_count == 361
    assert report.requests == len(ages)
    assert sum(d.requests for d in report.days) == 3  # 91, 3 and 0 days ago
    assert (len(short.days), short.days_count) == (31, 31)


def test_the_usage_report_follows_the_log_as_it_grows_is_pruned_and_replaced(
    indexed: Briefd, settings: Settings, example_index: Path
) -> None:
    """The dashboard asks for the report every minute: its served counts are kept between
    reports and brought up to the log (team.served), which must give what the log holds as
    it grows (entries out of time order, some on the window's first day), after retention
    prunes it, and after the index file is replaced by another."""
    in_index = {c for (c,) in indexed.store.conn.execute("SELECT id FROM chunks")}
    log = seeded(indexed, 300)
    for grown in range(2):  # a window starting mid-day: its first day counted apart
        report = indexed.usage("9d", limit=500)
        assert reported(report) == expected(log, report.since, in_index)
        if not grown:
            log += seeded(indexed, 200)  # logged again: new entries alike
    cutoff = (datetime.now(UTC) - timedelta(days=12)).isoformat(timespec="seconds")
    with indexed.store.write() as conn:
        assert activity.prune_before(conn, cutoff)[0] > 0
    log = [(e, d) for e, d in log if e.created_at >= cutoff]
    report = indexed.usage("30d", limit=500)
    assert reported(report) == expected(log, report.since, in_index)
    indexed.close()
    shutil.copyfile(example_index, settings.db)  # another index file at the same place
    with Briefd(settings, embedder=None) as other:
        log = seeded(other, 100)
        report = other.usage("30d", limit=500)
        assert reported(report) == expected(log, report.since, in_index)
