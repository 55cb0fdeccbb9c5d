"""Knowledge health over REST (T3, T4, T6): ``GET /api/gaps``, ``GET /api/drift``,
``GET /api/usage``, and the dashboard's panel data with its server-side charts."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import TypeAdapter

from briefd.service import charts
from briefd.service.deps import ERRORS, State
from briefd.team.drift import DRIFT_FIX, DriftReport, page
from briefd.team.gaps import GapsReport, GapsRequest
from briefd.team.usage import UsageReport

router = APIRouter(prefix="/api", tags=["knowledge health"])

Since = Annotated[
    str,
    Query(
        max_length=40,
        description="A span back from now (12h, 30d, 2w), a date (2026-01-31: from midnight "
        "UTC) or a time with its offset (2026-01-31T09:00+01:00).",
    ),
]
DASHBOARD_ROWS = 10
WINDOW_DAYS = 30  # the health panels' window, unless the query log keeps fewer days


@router.get("/gaps", response_model=GapsReport, responses=ERRORS)
def gaps(
    state: State,
    since: Since = "30d",
    min_count: Annotated[int, Query(ge=1, le=100_000)] = 1,
    limit: Annotated[int, Query(ge=1, le=500)] = 20,
    offset: Annotated[int, Query(ge=0, description="Skip this many gaps (the next page).")] = 0,
) -> GapsReport:
    """Knowledge gaps (T3): groups of similar logged queries with weak or empty results,
    most asked × weakest first (``limit`` of them from ``offset``; ``gaps_count`` counts
    all); queries whose bundle was reported useful are left out."""
    request = GapsRequest(since, min_count, limit, offset)
    state.saved_log()  # what was just answered counts
    # read and grouped on a connection of its own: the lock only while phrasings are embedded
    return state.apart("rest", "gaps", lambda: state.api.gaps(request, state.lock))


@router.get("/drift", response_model=DriftReport, responses=ERRORS)
def drift(
    state: State,
    limit: Annotated[
        int | None,
        Query(ge=1, le=1000, description="Most drifting documents listed (default: all)."),
    ] = None,
    offset: Annotated[
        int, Query(ge=0, description="Skip this many drifting documents (the next page).")
    ] = 0,
) -> DriftReport:
    """Documents whose ``refs`` cover code changed after them (T4), longest drifting first,
    with those commits, as of the last sync (every sync reads the code repositories' new
    commits); ``drifting`` counts them all, those past ``limit`` too."""
    report = state.call("rest", "drift", state.api.drift, exclusive=False)
    return page(report, limit, offset)


@router.get("/usage", response_model=UsageReport, responses=ERRORS)
def usage(
    state: State,
    since: Since = "30d",
    limit: Annotated[int, Query(ge=1, le=500)] = 20,
    offset: Annotated[
        int,
        Query(
            ge=0,
            description="Skip this many served documents, sections and never-served "
            "documents (the next page).",
        ),
    ] = 0,
) -> UsageReport:
    """Served documents and sections by surface, usage feedback, never-served documents
    (``limit`` of each list from ``offset``; ``documents_count``, ``sections_count`` and
    ``never_served_count`` count all) and requests per day (T6)."""
    state.saved_log()
    return state.call(
        "rest", "usage", lambda: state.api.usage(since, limit, offset), exclusive=False
    )


@router.get("/dashboard/health", include_in_schema=False, responses=ERRORS)
def dashboard_health(
    state: State, since: Annotated[str | None, Query(max_length=40)] = None
) -> dict[str, Any]:
    """The dashboard's knowledge-health panels: the three reports and their charts, over 30
    days or the query log's retention when shorter (days the log no longer holds were drawn as
    days without requests)."""
    retention = state.api.settings.activity.retention_days
    since = since or (f"{retention}d" if 0 < retention < WINDOW_DAYS else f"{WINDOW_DAYS}d")

    def gather() -> tuple[GapsReport, DriftReport, UsageReport]:
        request = GapsRequest(since, 1, DASHBOARD_ROWS)
        found_gaps = state.api.gaps(request, state.lock)  # held while it embeds phrasings
        return found_gaps, state.api.drift(), state.api.usage(since, DASHBOARD_ROWS)

    # drift and usage read on connections of their own: searches need not wait for them
    found_gaps, found_drift, found_usage = state.call(
        "rest", "dashboard_health", gather, exclusive=False
    )
    return {
        "gaps": TypeAdapter(GapsReport).dump_python(found_gaps, mode="json"),
        "drift": dashboard_drift(found_drift),
        "usage": TypeAdapter(UsageReport).dump_python(found_usage, mode="json"),
        "charts": health_charts(found_usage),
        "retention_days": retention,
    }


def dashboard_drift(report: DriftReport) -> dict[str, Any]:
    """The drift panel's rows: the longest drifting ``DASHBOARD_ROWS`` documents with their
    latest commit (what the table shows), and how many drift (``drifting``); the first
    documents whose refs cover no file, and how many (``uncovered_count``). Every drifting
    document with its newest 20 commits was sent each minute: megabytes, and a table of
    thousands of rows, where a team's refs cover much of its code."""
    shown = replace(
        report,
        documents=tuple(
            replace(d, commits=d.commits[:1]) for d in report.documents[:DASHBOARD_ROWS]
        ),
        uncovered=report.uncovered[:DASHBOARD_ROWS],
    )
    return {
        **TypeAdapter(DriftReport).dump_python(shown, mode="json"),
        "drifting": report.drifting,
        "uncovered_count": len(report.uncovered),
        "fix": DRIFT_FIX if report.drifting else "",  # what to do, as `briefd drift` says
    }


def health_charts(report: UsageReport) -> dict[str, str]:
    days = [d.day for d in report.days]
    # a kind by the name `briefd usage` and the gaps' surfaces give it: hook prompts are "hook"
    kinds = {"search": "search", "bundle": "bundle", "hook": "recall"}
    return {
        "requests": charts.stacked_bars(
            "Requests per UTC day by kind",
            days,
            {shown: [d.kinds.get(k, 0) for d in report.days] for shown, k in kinds.items()},
        ),
        "latency": charts.lines(
            "Latency per UTC day (ms)",
            days,
            {"p50": [d.p50_ms for d in report.days], "p95": [d.p95_ms for d in report.days]},
        ),
        "documents": charts.horizontal_bars(
            "Most served documents (requests)",
            [(d.doc_path, d.served) for d in report.documents],
        ),
    }
