"""What the team does with the knowledge (I2, T2): ``POST /api/usage`` (which sections of a
bundle helped) and ``GET /api/stats`` (the dashboard's numbers)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from briefd.service import schemas
from briefd.service.deps import ERRORS, State
from briefd.service.opsout import StatsOut, answers
from briefd.service.stats import index_warnings, stats

router = APIRouter(prefix="/api")


@router.post(
    "/usage",
    name="report_usage",
    response_model=schemas.UsageOut,
    responses=ERRORS,
    tags=["feedback"],
)
def usage(state: State, body: schemas.UsageIn) -> schemas.UsageOut:
    """Which sections of a bundle were useful (T2: stored, no ranking effect yet). An unknown
    ``bundle_id`` is 404; a chunk id that is not a section of the bundle is 400 (nothing
    stored)."""
    receipt = state.call(
        "rest",
        "report_usage",
        lambda: state.api.report_usage(body.bundle_id, body.useful_chunk_ids, body.client),
    )
    return schemas.usage_out(receipt)


@router.get(
    "/stats",
    name="stats",
    response_model=None,
    responses=answers(200, StatsOut, ERRORS),
    tags=["service"],
)
def service_stats(state: State) -> dict[str, Any]:
    """Index contents per scope and freshness, request volume and latency per tool, tokens
    served, cache hit rate, proposals by status, link findings, skipped files, and what the
    start-up log warns about the index (``index.warnings``: no document indexed, a default
    scope it lacks)."""

    def gather() -> dict[str, Any]:
        scopes = [schemas.scope_out(s).model_dump() for s in state.api.scopes()]
        jobs = {name: vars(job) for name, job in state.jobs.items()}
        overview, settings = state.api.overview(), state.api.settings
        source = str(state.api.last_report().get("source") or settings.source)
        names = [s["name"] for s in scopes]
        out = stats(
            dict(state.metrics.snapshot_view()),
            overview,
            scopes,
            state.link_findings(),
            jobs,
            index_warnings(overview, names, source, settings),
        )
        # the figures may still read while searches fail on the damaged pages: said with them
        out["index"]["damaged"] = state.index_damage()
        return {**out, "proposals_enabled": settings.proposals.enabled}

    return state.call("rest", "stats", gather)
