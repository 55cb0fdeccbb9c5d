"""REST under ``/api`` (I2): thin handlers over :class:`Briefd`, run under the service lock,
counted and timed. Errors leave as ``{error, detail}`` (see :mod:`briefd.service.app`)."""

from __future__ import annotations

import time
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request

from briefd.__about__ import __version__
from briefd.bundles import BundleRequest
from briefd.errors import IndexNotFoundError
from briefd.graph.suggest import LinkSuggestion
from briefd.retrieval.search import SearchRequest
from briefd.service import schemas
from briefd.service.state import ServiceState
from briefd.service.stats import stats

router = APIRouter(prefix="/api")

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": schemas.ErrorBody} for code in (400, 401, 403, 404, 422, 503)
}


def get_state(request: Request) -> ServiceState:
    """The shared service state, for any router mounted on the app."""
    state: ServiceState = request.app.state.briefd
    return state


State = Annotated[ServiceState, Depends(get_state)]


def split_list(values: list[str] | None) -> tuple[str, ...] | None:
    """Repeated and/or comma-separated query values; None when none were given."""
    if not values:
        return None
    items = tuple(v.strip() for item in values for v in item.split(",") if v.strip())
    return items or None


@router.get("/health", response_model=schemas.HealthOut, tags=["service"])
def health(state: State) -> schemas.HealthOut:
    """Liveness and index presence; open (no token). ``no_index``: nothing indexed yet."""

    def documents() -> int | None:
        try:
            return sum(s.documents for s in state.api.scopes())
        except IndexNotFoundError:
            return None

    count = state.call("rest", "health", documents)
    return schemas.HealthOut(
        status="ok" if count is not None else "no_index",
        version=__version__,
        documents=count or 0,
        uptime_seconds=state.uptime_seconds(),
    )


@router.get("/search", response_model=schemas.SearchOut, responses=ERRORS, tags=["knowledge"])
def search(
    state: State,
    q: Annotated[str, Query(min_length=1, max_length=2000, description="The query text.")],
    scopes: Annotated[
        list[str] | None, Query(description="Scopes (comma list or repeated; 'all').")
    ] = None,
    top_k: Annotated[int, Query(ge=1, le=100)] = 8,
    max_tokens: Annotated[int, Query(ge=1, le=200_000)] = 2000,
    paths: Annotated[list[str] | None, Query(description="Code paths the task touches.")] = None,
    client: Annotated[str | None, Query(max_length=200)] = None,
) -> schemas.SearchOut:
    """Ranked sections for a query, at most ``max_tokens`` in total (R1–R6); with ``paths``,
    sections of documents whose ``refs`` cover them lead."""
    request = SearchRequest(query=q, scopes=split_list(scopes), top_k=top_k)
    started = time.perf_counter()
    code_paths = split_list(paths) or ()
    result = state.call("rest", "search", lambda: state.search(request, code_paths))
    out = schemas.search_out(result, max_tokens)
    state.served("rest", "search", out.tokens)
    top = out.hits[0].score if out.hits else None
    elapsed = (time.perf_counter() - started) * 1000
    state.log_query("search", q, result.scopes, len(out.hits), top, elapsed, client)
    return out


@router.post("/bundle", response_model=schemas.BundleOut, responses=ERRORS, tags=["knowledge"])
def bundle(state: State, body: schemas.BundleIn) -> schemas.BundleOut:
    """A token-budgeted, deterministic context bundle for a task (B1–B5)."""
    request = BundleRequest(
        task=body.task,
        max_tokens=body.max_tokens,
        scopes=tuple(body.scopes) if body.scopes else None,
        paths=tuple(body.paths),
        format=body.format,  # type: ignore[arg-type]  # validated by the pattern
        base=body.base,
        issue=body.issue,
    )
    return compile_and_count(state, "rest", request, body.client)


def compile_and_count(
    state: ServiceState, surface: str, request: BundleRequest, client: str | None
) -> schemas.BundleOut:
    started = time.perf_counter()
    result = state.call(surface, "compile_bundle", lambda: state.api.compile_bundle(request))
    state.bundle_cache(result.cached)
    state.served(surface, "compile_bundle", result.tokens)
    elapsed = (time.perf_counter() - started) * 1000
    top = max((i.score for i in result.items), default=None)
    query = request.task or (request.issue or "")[:500]
    scopes = result.diagnostics.scopes
    state.log_query("bundle", query, scopes, len(result.items), top, elapsed, client)
    return schemas.BundleOut.model_validate(result.to_dict())


@router.post("/usage", response_model=schemas.UsageOut, responses=ERRORS, tags=["feedback"])
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
    "/docs/{path:path}", response_model=schemas.DocumentOut, responses=ERRORS, tags=["knowledge"]
)
def document(
    state: State,
    path: str,
    scopes: Annotated[
        list[str] | None,
        Query(
            description="Scopes to read (comma list or repeated; 'all'); default scopes if none."
        ),
    ] = None,
) -> schemas.DocumentOut:
    """One document with its sections, links and backlinks, if it is in ``scopes`` (default:
    the default scopes, as for search). Paths outside the knowledge repository (``..``,
    absolute, symlinked out) are 404."""
    view = state.call("rest", "get_document", lambda: state.document(path, split_list(scopes)))
    out = schemas.document_out(view)
    state.served("rest", "get_document", sum(s.tokens for s in out.sections))
    return out


@router.get("/scopes", response_model=schemas.ScopesOut, responses=ERRORS, tags=["knowledge"])
def scopes(state: State) -> schemas.ScopesOut:
    """Scopes with document and chunk counts."""
    found = state.call("rest", "list_scopes", state.api.scopes)
    return schemas.scopes_out(found, state.api.settings.default_scopes)


@router.get(
    "/links/suggestions",
    response_model=schemas.SuggestionsOut,
    responses=ERRORS,
    tags=["knowledge"],
)
def link_suggestions(
    state: State,
    doc_path: Annotated[str | None, Query(max_length=1000)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 20,
    scopes: Annotated[
        list[str] | None,
        Query(
            description="Scopes to check (comma list or repeated; 'all'); default scopes if none."
        ),
    ] = None,
) -> schemas.SuggestionsOut:
    """Unlinked mentions of other documents and broken links (T5) among the documents in
    ``scopes``."""
    wanted = split_list(scopes)
    found = state.call(
        "rest", "suggest_links", lambda: state.api.suggest_links(doc_path, limit, wanted)
    )
    return schemas.suggestions_out(found)


@router.post(
    "/links/suggestions/dismiss",
    response_model=schemas.SuggestionsOut,
    responses=ERRORS,
    tags=["knowledge"],
)
def dismiss_link_suggestion(state: State, body: schemas.DismissIn) -> schemas.SuggestionsOut:
    """Stop suggesting ``target`` for ``doc_path``; returns that document's remaining
    suggestions."""

    def run() -> list[LinkSuggestion]:
        state.api.dismiss_link_suggestion(body.doc_path, body.target, body.scopes)
        return state.api.suggest_links(body.doc_path, 1000, body.scopes)

    return schemas.suggestions_out(state.call("rest", "dismiss_link", run))


@router.get("/stats", responses=ERRORS, tags=["service"])
def service_stats(state: State) -> dict[str, Any]:
    """Index contents per scope and freshness, request volume and latency per tool, tokens
    served, cache hit rate, proposals by status, link findings, skipped files."""

    def gather() -> dict[str, Any]:
        scopes = [
            {"name": s.name, "documents": s.documents, "chunks": s.chunks}
            for s in state.api.scopes()
        ]
        jobs = {name: vars(job) for name, job in state.jobs.items()}
        return stats(
            dict(state.metrics.snapshot_view()),
            state.api.overview(),
            scopes,
            state.api.link_findings(),
            jobs,
        )

    return state.call("rest", "stats", gather)
