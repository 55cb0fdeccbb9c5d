"""Wire shapes shared by REST (OpenAPI) and MCP (``outputSchema``), and the pure conversions
from the API's dataclasses into them."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from briefd.bundles.model import (
    MAX_HARD_LIMIT,
    MAX_TOKENS,
    MIN_TOKENS,
    MODE_ALIASES,
    BundleMode,
    BundleRequest,
    Tier,
)
from briefd.graph.suggest import Suggestions
from briefd.model import Hit, ScopeInfo, SearchResult
from briefd.retrieval.budget import within_budget
from briefd.service import searchnotes as notes
from briefd.service.documents import json_tokens
from briefd.service.proposal_schemas import ProposalIn as ProposalIn  # one import path for
from briefd.service.proposal_schemas import ProposalOut as ProposalOut  # both surfaces
from briefd.service.proposal_schemas import ProposalsOut as ProposalsOut
from briefd.service.proposal_schemas import proposal_out as proposal_out
from briefd.service.request_body import RequestIn as RequestIn
from briefd.store.activity import UsageReceipt
from briefd.store.scopes import default_scope_warnings
from briefd.text import whole_characters
from briefd.tokens import json_string_tokens


def split_list(values: list[str] | None) -> tuple[str, ...] | None:
    """Repeated and/or comma-separated values (``?scopes=``, a body's or a tool's ``scopes``
    and ``tags``), stripped, blanks dropped; None when none are left."""
    if not values:
        return None
    items = tuple(v.strip() for item in values for v in item.split(",") if v.strip())
    return items or None


class ErrorBody(BaseModel):
    error: str = Field(description="Error class, e.g. not_found, bad_request, unauthorized.")
    detail: str = Field(description="What is wrong and what to do about it.")


class HitOut(BaseModel):
    chunk_id: str
    doc_path: str
    scope: str
    title: str
    heading: str
    heading_path: list[str]
    content: str
    score: float
    tokens: int
    start_line: int
    end_line: int
    related_to: str | None = Field(
        default=None, description="For linked context: the chunk id of the hit it is linked from."
    )
    superseded_by: list[str] | None = Field(  # left out for a current document: no cost
        default=None,
        exclude_if=lambda value: not value,
        description="Documents whose front matter says they supersede this one: prefer them.",
    )


class SearchOut(BaseModel):
    query: str
    mode: str
    scopes: list[str]
    ranking_version: str
    gate: str = Field(description="Relevance gate verdict: off, kept or empty (off-topic).")
    gate_reasons: list[str] | None = Field(
        default=None,
        description="When the gate emptied the result: why (the lexical and semantic evidence).",
    )
    tokens: int = Field(description="Sum of the hits' tokens (at most max_tokens).")
    omitted: int = Field(description="Ranked hits left out to stay within max_tokens.")
    note: str | None = Field(
        default=None,
        description="Set when max_tokens cut the result: the top section was shortened, or "
        "left out for smaller ones ranked below it, or the budget is too small for any section "
        "(then hits is empty although some matched); or when the index holds no document yet "
        "(then scopes is empty too): what to run to index the source.",
    )
    warnings: list[str] | None = Field(
        default=None,
        description="What the caller should know and act on, each with its fix: a default "
        "scope this index lacks (the request named no scopes); documents governing the paths "
        "in scopes not requested; nothing in the requested scopes answers, but scopes not "
        "requested do (which sections); a search that fell back to bm25 (the model failed, or "
        "the index has no vectors for it); a relevance gate fitted by an earlier release.",
    )
    hits: list[HitOut]


class ScopeOut(BaseModel):
    name: str
    documents: int
    chunks: int


class ScopesOut(BaseModel):
    scopes: list[ScopeOut]
    default_scopes: list[str]
    warnings: list[str] | None = Field(
        default=None, description="Set when default_scopes names a scope this index lacks."
    )
    total: int | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Every scope, those a page leaves out too (list_scopes: limit, offset).",
    )
    offset: int | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="How many scopes, by name, come before those listed.",
    )


class DocumentSummaryOut(BaseModel):
    scope: str
    path: str
    title: str
    sections: int
    tokens: int
    updated_at: str = Field(description="Last commit (git sources) or file change, ISO 8601.")


class DocumentsOut(BaseModel):
    documents: list[DocumentSummaryOut]
    total: int = Field(description="Documents in the scopes asked, those of other pages too.")
    next_cursor: str | None = Field(
        default=None,
        description="Pass as cursor for the next page (null: no more documents).",
    )


class UsageIn(RequestIn):
    bundle_id: str = Field(min_length=1, max_length=200)
    useful_chunk_ids: list[str] = Field(
        default_factory=list,
        max_length=500,
        description="The chunk ids of the bundle's sections that helped; [] or left out: none "
        "did (the bundle counts as no help in the gap report).",
    )
    client: str | None = Field(default=None, max_length=200)


class UsageOut(BaseModel):
    bundle_id: str
    stored: int
    useful_chunk_ids: list[str]
    unknown_chunk_ids: list[str] = Field(
        description="Ids not in the current index (stored anyway; the index may have changed)."
    )


class SuggestionOut(BaseModel):
    doc_path: str
    kind: str = Field(description="unlinked-mention or broken-link")
    target: str
    mention: str
    line: int
    detail: str


class DismissIn(RequestIn):
    doc_path: str = Field(min_length=1, max_length=1000)
    target: str = Field(min_length=1, max_length=1000)
    scopes: list[str] | None = Field(
        default=None, description="Scopes of the suggestions returned (default scopes if none)."
    )


class SuggestionsOut(BaseModel):
    suggestions: list[SuggestionOut]
    total: int = Field(
        description="Suggestions found; more than listed when limit cut the list (raise limit, "
        "or ask again with offset past those listed).",
    )
    offset: int = Field(
        default=0,
        exclude_if=lambda value: value == 0,
        description="How many suggestions, in their order, come before those listed (absent: "
        "none).",
    )
    dismissed: int = Field(
        default=0,
        exclude_if=lambda value: value == 0,
        description="Suggestions dismissed for the documents asked about, left out of total "
        "(absent: none).",
    )
    dismissed_broken: int = Field(
        default=0,
        exclude_if=lambda value: value == 0,
        description="Of the dismissed, broken links: `briefd links --check` still fails on "
        "them (absent: none).",
    )
    other_scopes: int = Field(
        default=0,
        exclude_if=lambda value: value == 0,
        description="Broken links left out as in (or to a heading of) a document of a scope not "
        "requested; `briefd links --check` fails on them; scopes=all lists them (absent: none).",
    )


BUDGET: int = Field(default=2000, ge=MIN_TOKENS, le=MAX_TOKENS, description="Soft token budget.")
HARD_LIMIT: int | None = Field(
    default=None,
    ge=MIN_TOKENS,
    le=MAX_HARD_LIMIT,
    description="Ceiling for mandatory content (default 4 × max_tokens).",
)
TAGS: list[str] = Field(
    default_factory=list, max_length=50, description="Front-matter tags, any of them."
)


MAX_PATHS = 200  # code paths a bundle takes (REST body, MCP argument)


def old_mode_name(value: object) -> object:
    """``json``, the name of ``package`` before schema 2, read as ``package`` wherever a mode is
    taken (``briefd bundle --mode json`` always was): REST bodies and MCP tools refused it."""
    return MODE_ALIASES.get(value, value) if isinstance(value, str) else value


Mode = Annotated[
    BundleMode,
    BeforeValidator(old_mode_name),
    Field(
        description="markdown: one attributed block; package: each section's content, "
        "location and sha256 fingerprint (json is its old name); manifest: metadata only."
    ),
]
OLD_MODE = Field(default=None, description="Old name of mode.")


def one_mode(body: BundleIn | ContextIn) -> None:
    """A body that sends ``format`` (the old name of ``mode``) and ``mode`` names one mode."""
    if body.format and "mode" in body.model_fields_set and body.format != body.mode:
        raise ValueError(
            f"mode '{body.mode}' and format '{body.format}' (its old name) disagree; send mode only"
        )


class BundleIn(RequestIn):
    task: str = Field(default="", max_length=20_000)
    max_tokens: int = BUDGET
    hard_limit: int | None = HARD_LIMIT
    scopes: list[str] | None = None
    paths: list[str] = Field(
        default_factory=list,
        max_length=MAX_PATHS,
        description="Code paths the task touches, from the code repository's root as refs name "
        "them (src/payments/refund.py), or absolute in a checkout on the server's machine; "
        "documents whose refs cover them lead.",
    )
    tags: list[str] = TAGS
    mode: Mode = "markdown"
    format: Mode | None = OLD_MODE
    base: str | None = Field(default=None, max_length=64)
    issue: str | None = Field(default=None, max_length=20_000)
    verbose: bool = Field(default=False, description="Add diagnostics and exclusions.")
    client: str | None = Field(default=None, max_length=200)

    @model_validator(mode="after")
    def _one_mode(self) -> BundleIn:
        one_mode(self)
        return self

    def request(self) -> BundleRequest:
        return BundleRequest(
            task=self.task,
            max_tokens=self.max_tokens,
            scopes=split_list(self.scopes),
            paths=tuple(self.paths),
            mode=self.format or self.mode,
            base=self.base,
            issue=self.issue,
            hard_limit=self.hard_limit,
            tags=split_list(self.tags) or (),
        )


class ContextIn(RequestIn):
    doc_path: str = Field(min_length=1, max_length=1000, description="e.g. domain/refunds.md")
    task: str = Field(default="", max_length=20_000)
    max_tokens: int = BUDGET
    hard_limit: int | None = HARD_LIMIT
    scopes: list[str] | None = None
    tags: list[str] = TAGS
    mode: Mode = "markdown"
    format: Mode | None = OLD_MODE
    base: str | None = Field(default=None, max_length=64)
    verbose: bool = False
    client: str | None = Field(default=None, max_length=200)

    @model_validator(mode="after")
    def _one_mode(self) -> ContextIn:
        one_mode(self)
        return self

    def request(self) -> BundleRequest:
        return BundleRequest(
            task=self.task,
            max_tokens=self.max_tokens,
            scopes=split_list(self.scopes),
            mode=self.format or self.mode,
            base=self.base,
            hard_limit=self.hard_limit,
            target=self.doc_path,
            tags=split_list(self.tags) or (),
        )


class LocationOut(BaseModel):
    path: str
    start_line: int
    end_line: int


class DriftOut(BaseModel):
    """The code under the document's ``refs`` changed after it (T4): it may be out of date."""

    doc_path: str
    commits: int
    since: str


class BundleItemOut(BaseModel):
    """A section: metadata, and in package mode its content."""

    chunk_id: str
    tier: Tier
    reasons: list[str]
    tokens: int | None = None
    location: LocationOut | None = None
    title: str | None = None
    heading_path: list[str] | None = None
    score: float | None = None
    fingerprint: str | None = None
    truncated: bool | None = None
    superseded_by: list[str] | None = Field(  # left out for a current document
        default=None,
        description="Documents whose front matter says they supersede this one: prefer them.",
    )
    drift: DriftOut | None = None
    content: str | None = None


class DeltaEntryOut(BaseModel):
    op: Literal["reuse", "replace"]
    chunk_id: str
    item: BundleItemOut | None = None


class DeltaOut(BaseModel):
    base: str
    entries: list[DeltaEntryOut]
    removed: list[str]
    tokens_saved: int


class DiagnosticsOut(BaseModel):
    """The estimator; with verbose also exclusions, ranking_version, index_fingerprint…"""

    model_config = ConfigDict(extra="allow")

    estimator: str


class BundleOut(BaseModel):
    """A bundle or document context: each section once (text, or items' content), compact
    metadata; tokens over hard_limit are overage (budget_exceeded)."""

    schema_version: int
    bundle_id: str
    mode: BundleMode
    target: str | None = None
    tokens: int
    budget: int
    hard_limit: int
    budget_exceeded: bool
    overage: int
    cached: bool
    recovered: bool | None = Field(
        default=None,
        description="true: base unknown or compiled for another request; the full bundle",
    )
    state_error: str | None = Field(
        default=None,
        description="replicas: the shared state was unreachable; the bundle is served, other "
        "replicas cannot resolve it as a base meanwhile",
    )
    text: str | None = None
    items: list[BundleItemOut] | None = None
    delta: DeltaOut | None = None
    diagnostics: DiagnosticsOut
    warnings: list[str] | None = Field(
        default=None,
        description="What the caller should know and act on, each with its fix: a budget or "
        "hard_limit that fits no section; a target or always: true document over hard_limit "
        "(and how to read it in parts); a target without text; documents the paths, relations or links lead to in "
        "scopes not requested, or that answer the task there; a default scope this index "
        "lacks; a search that fell back to bm25; a task the relevance gate judged unrelated.",
    )


class HealthOut(BaseModel):
    status: str
    version: str
    documents: int
    uptime_seconds: float
    notice: str | None = None  # the index file deleted or replaced under the server; or
    # searches answer by keywords only (the index has no vectors of the configured model)
    state: str = "sqlite"  # where shared state lives: sqlite (one node) or postgresql
    state_error: str | None = None  # the shared state is unreachable (status "degraded")
    replica: str | None = None  # this replica's name (state in postgresql)
    commit: str | None = None  # the knowledge commit served, as `briefd version` names it


def hit_out(hit: Hit) -> HitOut:
    return HitOut.model_validate(replace(hit, score=round(hit.score, 6)), from_attributes=True)


QUERY_SHOWN = 200  # characters of the query a result repeats (a pasted page is not echoed)


def shown_query(query: str) -> str:
    """The query as a result repeats it: whole up to ``QUERY_SHOWN`` characters, else its head
    cut at a word, marked with the number of characters left out."""
    if len(query) <= QUERY_SHOWN:
        return query
    head = query[: whole_characters(query, QUERY_SHOWN)]  # no half flag, no dangling joiner
    space = head.rfind(" ")
    head = head[:space] if space > QUERY_SHOWN // 2 else head
    return f"{head} […{len(query) - len(head)} more characters]"


def search_out(result: SearchResult, max_tokens: int) -> SearchOut:
    """The hits that fit in ``max_tokens`` counted as a client receives them: the whole result
    as compact JSON (an MCP client such as Claude Code hands the model the structured content),
    which is longer than the text block rendered from it (:func:`render.search_text`)."""
    frame = SearchOut(
        query=shown_query(result.query),
        mode=result.mode,
        scopes=list(result.scopes),
        ranking_version=result.ranking_version,
        gate=result.gate,
        gate_reasons=list(result.gate_reasons) if result.gate == "empty" else None,
        warnings=list(result.warnings) or None,  # counted: part of the frame
        tokens=max_tokens,  # as many digits as it can have
        omitted=len(result.hits),
        note=notes.empty_index_note(result),
        hits=[],
    )
    room = max_tokens - json_tokens(frame)
    costs: dict[tuple[str, str], int] = {}

    def cost(hit: Hit) -> int:  # each hit counted once, though asked twice
        key = (hit.chunk_id, hit.content)
        if key not in costs:
            costs[key] = _hit_cost(hit)
        return costs[key]

    direct = [h for h in result.hits if h.related_to is None]
    if direct and cost(direct[0]) > room:  # a note will say what was cut or left out
        passed = len(direct) if min(map(cost, direct)) <= room else 0  # a smaller one may lead
        room -= notes.longest(result.hits, passed, max_tokens) + NOTE_FRAME
    kept, omitted = within_budget(result.hits, room, cost)
    return frame.model_copy(
        update={
            "tokens": sum(h.tokens for h in kept),
            "omitted": omitted,
            "note": notes.budget_note(result.hits, kept, max_tokens) or frame.note,
            "hits": [hit_out(h) for h in kept],
        }
    )


NOTE_FRAME = 4  # "note":"…" around the note's own tokens


def _hit_cost(hit: Hit) -> int:
    """A hit's tokens in the result's JSON: its fields, its escaped content, the comma between
    hits, and one token for where the content meets its quotes (counted apart, cached)."""
    fields = json_tokens(hit_out(replace(hit, content="")))
    return fields + json_string_tokens(hit.content) + 2


def scope_out(scope: ScopeInfo) -> ScopeOut:
    return ScopeOut.model_validate(scope, from_attributes=True)


def scopes_out(
    scopes: list[ScopeInfo], default: tuple[str, ...], limit: int | None = None, offset: int = 0
) -> ScopesOut:
    """The scopes (all, or ``limit`` of them from ``offset``, with their ``total``); the
    warnings are of the default scopes against every scope."""
    warnings = default_scope_warnings(default, [s.name for s in scopes])
    listed = scopes if limit is None else scopes[offset : offset + limit]
    return ScopesOut(
        scopes=[scope_out(s) for s in listed],
        default_scopes=list(default),
        warnings=list(warnings) or None,
        total=None if limit is None else len(scopes),
        offset=None if limit is None else offset,
    )


def usage_out(receipt: UsageReceipt) -> UsageOut:
    return UsageOut.model_validate(receipt, from_attributes=True)


def suggestions_out(
    items: Suggestions, limit: int | None = None, offset: int = 0
) -> SuggestionsOut:
    """``limit`` of ``items`` (all: None) from ``offset``, how many there are and how many
    were left out."""
    end = None if limit is None else offset + limit
    return SuggestionsOut(
        suggestions=[
            SuggestionOut.model_validate(s, from_attributes=True) for s in items[offset:end]
        ],
        total=len(items),
        offset=offset,
        dismissed=items.dismissed,
        dismissed_broken=items.dismissed_broken,
        other_scopes=items.other_scopes,
    )
