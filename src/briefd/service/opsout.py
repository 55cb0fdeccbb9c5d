"""What ``/api/stats``, ``/api/sync`` and ``/api/admin/*`` answer, as OpenAPI documents it
(generated clients get the field types). Documentation only: the routes return their dicts as
built (``service/stats.py``, the sync status), so nothing a model leaves out is dropped."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from briefd.service.schemas import ScopeOut


class SkippedOut(BaseModel):
    path: str
    reason: str


class ProblemOut(BaseModel):
    path: str
    problem: str


class StatsIndexOut(BaseModel):
    documents: int
    chunks: int
    vectors: int
    scopes: list[ScopeOut]
    fingerprint: str | None
    last_indexed_at: str | None
    skipped: list[SkippedOut] = Field(description="The first 50 files the last run skipped.")
    skipped_count: int
    problems: list[ProblemOut] = Field(description="The first 50 documents' problems.")
    problems_count: int
    warnings: list[str] = Field(description="What the start-up log warns about the index.")
    damaged: str | None = Field(
        default=None,
        description="A request found the index file damaged inside: what /api/health's notice "
        "says, until a rebuild replaces the file (searches fail meanwhile).",
    )


class SourceRowOut(BaseModel):
    source: str
    last_commit: str | None
    last_sync_at: str | None
    last_error: str | None
    kind: str | None


class RequestRowOut(BaseModel):
    surface: str
    name: str
    count: float
    errors: float
    invalid: float
    tokens: float
    mean_ms: float | None
    p50_ms: float | None
    p95_ms: float | None


class CacheOut(BaseModel):
    hits: float
    misses: float
    hit_rate: float | None


class LinkOut(BaseModel):
    source_path: str
    line: int | None
    target: str
    detail: str


class DuplicateAnchorOut(BaseModel):
    path: str
    anchor: str
    lines: list[int]


class LinkCountsOut(BaseModel):
    broken: int
    ambiguous: int
    unknown_anchors: int
    duplicate_anchors: int
    orphans: int
    to_superseded: int


class LinksOut(BaseModel):
    counts: LinkCountsOut
    broken: list[LinkOut]
    ambiguous: list[LinkOut]
    unknown_anchors: list[LinkOut]
    duplicate_anchors: list[DuplicateAnchorOut]
    orphans: list[str]
    to_superseded: list[LinkOut]


class JobOut(BaseModel):
    name: str
    started_at: str
    finished_at: str | None = Field(description="None while it runs.")
    error: str | None
    summary: dict[str, Any] = Field(description="What it did, once done without an error.")


class StatsOut(BaseModel):
    index: StatsIndexOut
    sync: list[SourceRowOut]
    requests: list[RequestRowOut]
    tokens_served: float
    cache: CacheOut
    embedding_calls: float
    proposals: dict[str, int] | None = Field(
        description="By status; None while the shared state cannot be reached."
    )
    links: LinksOut
    usage_events: int | None
    queries_logged: int | None
    counters_reset_at: str | None
    jobs: dict[str, JobOut] = Field(description="The last run of each admin action.")
    state_error: str | None
    proposals_enabled: bool


class ReplicaOut(BaseModel):
    replica: str
    commit: str | None
    fingerprint: str | None
    seen_at: str
    last_error: str | None


class SyncStatusOut(BaseModel):
    source: str | None
    kind: str
    branch: str | None
    last_commit: str | None = Field(description="The commit the served index was built from.")
    last_sync_at: str | None
    last_success_at: str | None
    last_error: str | None
    interval: int
    webhook: bool
    running: bool
    syncs: int


class SyncOut(SyncStatusOut):
    replicas: list[ReplicaOut] | None = Field(
        default=None, description="With a shared state: every replica, as it last said."
    )
    replicas_error: str | None = Field(default=None, description="Why replicas are missing.")


class SyncStartedOut(BaseModel):
    sync: Literal["started", "queued"]
    status: SyncStatusOut
    job: JobOut


class RebuildOut(BaseModel):
    job: JobOut


class ResetOut(BaseModel):
    reset: bool
    at: str


def answers(code: int, model: type[BaseModel], errors: dict[int | str, dict[str, Any]]) -> Any:
    """A route's ``responses``: ``model`` for ``code`` beside its errors."""
    return {**errors, code: {"model": model}}
