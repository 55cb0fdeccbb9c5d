"""Usage (T2, T6): which sections of a bundle an agent found useful (``report_usage``), and
the usage report — which documents and sections are served, how often, by which surface, how
often reported useful, which are never served, and requests per day."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

import numpy as np

from briefd.bundles.cache import manifest as bundle_manifest
from briefd.bundles.cache import stored_sections
from briefd.bundles.compile import unsaved_manifest
from briefd.errors import NotFoundError, QueryError
from briefd.settings import Settings
from briefd.state import SharedState
from briefd.store import activity, reports
from briefd.store import documents as docs_table
from briefd.store.activity import UsageReceipt
from briefd.store.db import Store, opened
from briefd.team.period import iso, since_cutoff
from briefd.team.served import ServedTally, tally_for
from briefd.team.shared import mirror_team_log
from briefd.text import shown

MAX_LISTED = 10  # chunk ids named in a report_usage error
CHART_DAYS = 30  # a window reaching back before the log's first entry shows at least these
DAYS_LISTED = 92  # the last this many days of a longer window are listed (``days_count``: all)


def report_usage(
    store: Store,
    state: SharedState,
    settings: Settings,
    bundle_id: str,
    useful_chunk_ids: Sequence[str] = (),
    client: str | None = None,
) -> UsageReceipt:
    """Store which sections of a bundle were useful (no ranking effect yet). The bundle must be
    one this index issued (remembered ``bundles.manifest_days``) and every chunk id one of its
    sections; otherwise nothing is stored (:class:`NotFoundError`, :class:`QueryError`)."""
    bundle_id = bundle_id.strip()
    if not bundle_id:
        raise QueryError("bundle_id is empty; pass the bundle_id that compile_bundle returned")
    ids = tuple(dict.fromkeys(c.strip() for c in useful_chunk_ids if c.strip()))
    _check(store, state, settings, bundle_id, ids)
    with store.read() as conn:
        known = activity.existing_chunk_ids(conn, ids)
    state.save_usage(bundle_id, ids, client, activity.now_iso())  # a busy index: deferred
    return UsageReceipt(bundle_id, max(len(ids), 1), ids, tuple(c for c in ids if c not in known))


def _check(
    store: Store, state: SharedState, settings: Settings, bundle_id: str, given: Sequence[str]
) -> None:
    with store.read() as conn:
        held = bundle_manifest(conn, bundle_id) or unsaved_manifest(store, bundle_id)
    if held is None and state.shared:  # compiled through another replica
        shared = state.manifest(bundle_id)
        held = None if shared is None else (shared.request_key, stored_sections(shared))
    if held is None:
        raise NotFoundError(
            f"no bundle '{bundle_id}' was issued by this index (bundles are remembered "
            f"for {settings.bundles.manifest_days} days); pass the bundle_id that "
            "compile_bundle or document_context (POST /api/bundle or /api/context, "
            "`briefd bundle` or `briefd context`) returned"
        )
    sections = [s.chunk_id for s in held[1]]
    strangers = [c for c in given if c not in sections]
    if strangers:
        listing = ", ".join(sections[:MAX_LISTED]) + (", …" if len(sections) > MAX_LISTED else "")
        raise QueryError(
            f"not sections of bundle {bundle_id}: {', '.join(map(shown, strangers[:MAX_LISTED]))}; "
            f"nothing was stored. Report chunk ids of its sections: {listing or 'none'}"
        )


@dataclass(frozen=True, slots=True)
class DocumentUsage:
    """How a document's sections were served: requests that got at least one of them, per
    surface, distinct sections served, and sections reported useful (T2)."""

    doc_path: str
    title: str
    scope: str
    served: int
    surfaces: dict[str, int]
    sections_served: int
    useful: int
    last_served_at: str | None


@dataclass(frozen=True, slots=True)
class SectionUsage:
    chunk_id: str
    doc_path: str
    heading: str
    served: int
    surfaces: dict[str, int]
    useful: int


@dataclass(frozen=True, slots=True)
class DayActivity:
    """One UTC day of the query log: requests by kind, those that came back empty, latency."""

    day: str
    requests: int
    kinds: dict[str, int]
    empty: int
    p50_ms: float | None
    p95_ms: float | None


@dataclass(frozen=True)  # no slots: the MCP SDK reads class attributes as defaults
class UsageReport:
    since: str
    requests: int  # logged searches, bundles and hook prompts
    surfaces: dict[str, int]
    feedback_reports: int  # report_usage calls (T2)
    nothing_helped: int  # of which named no useful section
    documents: tuple[DocumentUsage, ...]  # most served first
    sections: tuple[SectionUsage, ...]  # most served first
    never_served: tuple[str, ...]  # indexed documents no request got a section of, ``limit``
    never_served_count: int  # all of them
    gone_sections: int  # served sections no longer in the index
    days: tuple[DayActivity, ...]  # the last ``DAYS_LISTED`` days of the window, oldest first
    documents_count: int = 0  # every served document; ``documents`` lists ``limit``
    sections_count: int = 0  # every served section; ``sections`` lists ``limit``
    offset: int = 0  # how many of each list, in its order, come before those listed
    days_count: int = 0  # every day of the window; ``days`` lists the last ``DAYS_LISTED``


def gone_note(report: UsageReport) -> str | None:
    """What the sections listed leave out: sections served in the window that are no longer
    in the index (their document renamed, deleted, or its heading changed). A document moved
    with its content unchanged counts what it served before under its new path."""
    if not report.gone_sections:
        return None
    return (
        f"{report.gone_sections} served section(s) are no longer in the index (documents "
        "renamed or deleted, headings changed since): not counted among the sections above"
    )


def usage_report(
    settings: Settings,
    since: str = "30d",
    limit: int = 20,
    state: SharedState | None = None,
    offset: int = 0,
) -> UsageReport:
    """Which documents and sections were served since ``since``, how often, by which surface,
    how often reported useful, and which documents were never served (``limit`` of each from
    ``offset``, and how many there are); requests per day (the last ``DAYS_LISTED`` days of a
    longer window, which ``days_count`` counts). Read on a connection of its own."""
    if limit < 1:
        raise QueryError(f"limit must be at least 1, got {limit}")
    if offset < 0:
        raise QueryError(f"offset must be 0 or more, got {offset}")
    start = since_cutoff(since)
    cutoff = iso(start)
    with opened(settings.db, settings.source) as store:
        if state is not None and state.shared:  # replicas: the team's log, not this index's
            mirror_team_log(store, state, cutoff)
            return _usage_report(store, start, limit, offset)
        return _usage_report(store, start, limit, offset, tally_for(settings.db))


def _usage_report(
    store: Store, start: datetime, limit: int, offset: int, tally: ServedTally | None = None
) -> UsageReport:
    cutoff = iso(start)
    listed = slice(offset, offset + limit)
    with store.read() as conn:
        if tally is not None:  # counted once, then only what was logged since
            found = tally.counted(conn, cutoff)
            by_chunk, by_document = found.sections, found.documents
            counts, latencies = found.counts, found.latencies
        else:
            hint = reports.window_hint(conn, cutoff)
            by_chunk = reports.served_by_surface(conn, cutoff, "sections", hint)
            by_document = reports.served_by_surface(conn, cutoff, "documents", hint)
            counts = reports.daily_counts(conn, cutoff, hint)
            latencies = reports.daily_latencies(conn, cutoff, hint)
        moved = docs_table.moved_documents(conn)  # served before a move: under its new path
        where = reports.section_info(conn, {c for c, _, _, _ in by_chunk})
        useful = reports.useful_counts(conn, cutoff)
        feedback, nothing = reports.feedback_totals(conn, cutoff)
        docs = reports.documents(conn)
    surfaces = Counter[str]()
    for _, _, surface, n, _ in counts:
        surfaces[surface] += n
    today = datetime.now(UTC).date()
    sections = section_usage(by_chunk, useful, where)
    by_document = [(moved.get(p, p), surface, n, at) for p, surface, n, at in by_document]
    documents = document_usage(by_document, sections, docs)
    served = [d for d in documents if d.served]
    never = [d.doc_path for d in documents if not d.served]
    first = first_day(start.date(), counts, today)
    return UsageReport(
        since=cutoff,
        requests=sum(surfaces.values()),
        surfaces=pairs(surfaces),
        feedback_reports=feedback,
        nothing_helped=nothing,
        documents=tuple(served[listed]),
        sections=tuple(sections[listed]),
        never_served=tuple(never[listed]),
        never_served_count=len(never),
        gone_sections=len({c for c, _, _, _ in by_chunk} - where.keys()),
        days=days_of(counts, latencies, max(first, today - timedelta(DAYS_LISTED - 1)), today),
        documents_count=len(served),
        sections_count=len(sections),
        offset=offset,
        days_count=max((today - first).days + 1, 0),
    )


def pairs(counts: Counter[str]) -> dict[str, int]:
    """Surfaces (or kinds) with their counts, in a fixed order, zeros left out."""
    order = ("mcp", "rest", "hook", "search", "bundle", "recall")
    known = [(k, counts[k]) for k in order if counts[k]]
    return dict([*known, *sorted((k, n) for k, n in counts.items() if k not in order and n)])


Served = Sequence[tuple[str, str, int, str]]  # (chunk id or path, surface, entries, last time)


def section_usage(
    served: Served, useful: Counter[str], where: dict[str, reports.SectionInfo]
) -> list[SectionUsage]:
    """Sections of the current index that were served, most served first."""
    surfaces: dict[str, Counter[str]] = {}
    for chunk_id, surface, n, _ in served:
        surfaces.setdefault(chunk_id, Counter())[surface] += n
    out = [
        SectionUsage(
            chunk_id=c,
            doc_path=where[c].doc_path,
            heading=where[c].heading,
            served=counts.total(),
            surfaces=pairs(counts),
            useful=useful[c],
        )
        for c, counts in surfaces.items()
        if c in where
    ]
    return sorted(out, key=lambda s: (-s.served, s.doc_path, s.chunk_id))


def document_usage(
    served: Served, sections: Sequence[SectionUsage], docs: Sequence[tuple[str, str, str]]
) -> list[DocumentUsage]:
    """Every indexed document with its usage, most served first (never served last)."""
    surfaces: dict[str, Counter[str]] = {}
    last: dict[str, str] = {}
    for path, surface, n, at in served:
        surfaces.setdefault(path, Counter())[surface] += n
        last[path] = max(last.get(path, at), at)
    distinct = Counter(s.doc_path for s in sections)
    helpful: Counter[str] = Counter()
    for s in sections:
        helpful[s.doc_path] += s.useful
    out = [
        DocumentUsage(
            path,
            title,
            scope,
            surfaces.get(path, Counter()).total(),
            pairs(surfaces.get(path, Counter())),
            distinct[path],
            helpful[path],
            last.get(path),
        )
        for path, title, scope in docs
    ]
    return sorted(out, key=lambda d: (-d.served, d.doc_path))


def first_day(cutoff: date, counts: Sequence[tuple[str, str, str, int, int]], today: date) -> date:
    """The first day of the report's days: the cutoff's, or — when the window reaches back
    before the first request logged in it (``--since 2000-01-01``, ``9999d``) — that request's
    day, at most ``CHART_DAYS`` before today: the log's days, not decades of empty ones."""
    logged = min((day for day, *_ in counts), default=today.isoformat())
    return max(cutoff, min(date.fromisoformat(logged), today - timedelta(days=CHART_DAYS)))


def days_of(
    counts: Sequence[tuple[str, str, str, int, int]],
    latencies: Sequence[tuple[str, float]],
    first: date,
    last: date,
) -> tuple[DayActivity, ...]:
    """One entry per UTC day from ``first`` to ``last`` (days without requests included);
    latency percentiles by linear interpolation, as numpy computes them."""
    kinds: dict[str, Counter[str]] = {}
    empty: Counter[str] = Counter()
    for day, kind, _, n, none in counts:
        kinds.setdefault(day, Counter())[kind] += n
        empty[day] += none
    by_day: dict[str, list[float]] = {}
    for day, ms in latencies:
        by_day.setdefault(day, []).append(ms)
    out = []
    for offset in range((last - first).days + 1):
        day = (first + timedelta(days=offset)).isoformat()
        values = by_day.get(day)
        p50, p95 = np.percentile(values, [50, 95]) if values else (None, None)
        out.append(
            DayActivity(
                day=day,
                requests=kinds.get(day, Counter()).total(),
                kinds=pairs(kinds.get(day, Counter())),
                empty=empty[day],
                p50_ms=None if p50 is None else round(float(p50), 2),
                p95_ms=None if p95 is None else round(float(p95), 2),
            )
        )
    return tuple(out)
