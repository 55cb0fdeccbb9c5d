"""The knowledge under ``/api`` (I2): search, documents, scopes and link suggestions. Thin
handlers over :class:`ServiceState`, run under the service lock, counted and timed."""

from __future__ import annotations

import dataclasses
from typing import Annotated

from fastapi import APIRouter, Header, Query

from briefd.graph.suggest import Suggestions
from briefd.retrieval.search import SearchRequest
from briefd.service import schemas
from briefd.service.cursor import cursor_of, key_of
from briefd.service.deps import ERRORS, Head, State
from briefd.service.documents import DocumentOut
from briefd.service.schemas import split_list
from briefd.service.state import Caller, dashboard_search
from briefd.store import views
from briefd.team.suggestions import ALL_SUGGESTIONS as EVERY

router = APIRouter(prefix="/api", tags=["knowledge"])


@router.get("/search", response_model=schemas.SearchOut, responses=ERRORS)
def search(
    state: State,
    head: Head,
    q: Annotated[
        str, Query(min_length=1, max_length=8000, description="The query text (a URL holds 8 KiB).")
    ],
    scopes: Annotated[
        list[str] | None, Query(description="Scopes (comma list or repeated; 'all').")
    ] = None,
    top_k: Annotated[
        int | None,
        Query(ge=1, le=100, description="Most ranked hits (default: search.top_k, 8 unless set)."),
    ] = None,
    max_tokens: Annotated[int, Query(ge=1, le=200_000)] = 2000,
    paths: Annotated[
        list[str] | None,
        Query(
            description="Code paths the task touches, from the code repository's root (or "
            "absolute in a checkout on the server's machine)."
        ),
    ] = None,
    tags: Annotated[
        list[str] | None, Query(description="Only documents with any of these tags (R5).")
    ] = None,
    client: Annotated[str | None, Query(max_length=200)] = None,
    fetch_site: Annotated[
        str | None, Header(alias="sec-fetch-site", include_in_schema=False)
    ] = None,
) -> schemas.SearchOut:
    """Ranked sections for a query, at most ``max_tokens`` in total (R1–R6); with ``paths``,
    sections of documents whose ``refs`` cover them lead."""
    request = SearchRequest(
        query=q, scopes=split_list(scopes), top_k=top_k, tags=split_list(tags) or ()
    )
    code_paths = split_list(paths) or ()
    own = dashboard_search(client, fetch_site)  # a person on the dashboard: no agent served
    caller = Caller("rest", "search", client, head=head, dashboard=own)
    return state.search(request, code_paths, max_tokens, caller)


@router.get("/docs", name="list_documents", response_model=schemas.DocumentsOut, responses=ERRORS)
def documents(
    state: State,
    scopes: Annotated[
        list[str] | None,
        Query(description="Only these scopes (comma list or repeated); default: every scope."),
    ] = None,
    limit: Annotated[
        int | None,
        Query(ge=1, le=1000, description="Most documents in the answer (default: all)."),
    ] = None,
    cursor: Annotated[
        str | None,
        Query(max_length=4000, description="A page's next_cursor: the documents after it."),
    ] = None,
) -> schemas.DocumentsOut:
    """The indexed documents by scope, then path, with their section and token counts (as
    ``briefd docs`` lists them); with ``limit``, a page of them, and ``next_cursor`` to ask
    for the next."""
    wanted = split_list(scopes)
    after = key_of(cursor, 2, "GET /api/docs") if cursor else None

    def read() -> views.DocumentPage:
        with state.api.store.read() as conn:  # the page and its total in one transaction
            key = (after[0], after[1]) if after else None
            return views.document_page(conn, wanted, key, None if limit is None else limit + 1)

    found = state.call("rest", "list_documents", read)
    shown = found.documents[:limit]
    last = shown[-1] if len(found.documents) > len(shown) else None  # one more was there
    return schemas.DocumentsOut(
        documents=[schemas.DocumentSummaryOut(**dataclasses.asdict(d)) for d in shown],
        total=found.total,
        next_cursor=cursor_of(last.scope, last.path) if last else None,
    )


@router.get("/docs/{path:path}", name="get_document", response_model=DocumentOut, responses=ERRORS)
def document(
    state: State,
    head: Head,
    path: str,
    scopes: Annotated[
        list[str] | None,
        Query(
            description="Scopes to read (comma list or repeated; 'all'); default scopes if none."
        ),
    ] = None,
    start_line: Annotated[
        int | None,
        Query(
            ge=1,
            description="Read from this file line (a section's start_line, or a "
            "part's next_start_line).",
        ),
    ] = None,
    start_char: Annotated[
        int,
        Query(
            ge=0,
            description="Read from this character of start_line (a part's "
            "next_start_char, set when a line alone over max_tokens was cut).",
        ),
    ] = 0,
    max_tokens: Annotated[
        int | None,
        Query(
            ge=500,
            le=200_000,
            description="Token budget of the body: a longer document comes in parts of "
            "whole sections, a longer line in pieces (default: the whole document).",
        ),
    ] = None,
) -> DocumentOut:
    """One document with its sections, links and backlinks, if it is in ``scopes`` (default:
    the default scopes, as for search); with ``max_tokens`` or ``start_line``, the part of it
    that fits, and where the next part starts. Paths outside the knowledge repository
    (``..``, absolute, symlinked out) are 404."""
    caller = Caller("rest", "get_document", head=head)
    return state.document(path, split_list(scopes), caller, start_line, max_tokens, start_char)


@router.get("/scopes", name="list_scopes", response_model=schemas.ScopesOut, responses=ERRORS)
def scopes(state: State) -> schemas.ScopesOut:
    """Scopes with document and chunk counts."""
    found = state.call("rest", "list_scopes", state.api.scopes)
    return schemas.scopes_out(found, state.api.settings.default_scopes)


@router.get(
    "/links/suggestions",
    name="suggest_links",
    response_model=schemas.SuggestionsOut,
    responses=ERRORS,
)
def link_suggestions(
    state: State,
    doc_path: Annotated[str | None, Query(max_length=1000)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 20,
    offset: Annotated[
        int, Query(ge=0, description="Skip this many suggestions (the next page).")
    ] = 0,
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
    found = state.suggest_links("rest", "suggest_links", doc_path, wanted)
    return schemas.suggestions_out(found, limit, offset)


@router.post(
    "/links/suggestions/dismiss",
    name="dismiss_link",
    response_model=schemas.SuggestionsOut,
    responses=ERRORS,
)
def dismiss_link_suggestion(state: State, body: schemas.DismissIn) -> schemas.SuggestionsOut:
    """Stop suggesting ``target`` for ``doc_path``; returns that document's remaining
    suggestions."""

    wanted = split_list(body.scopes)  # as every other route reads scopes: "a, b" or [""]

    def run() -> Suggestions:
        path = state.doc_path(body.doc_path)
        state.api.dismiss_link_suggestion(path, body.target, wanted)
        return state.api.suggest_links(path, EVERY, wanted)

    return schemas.suggestions_out(state.call("rest", "dismiss_link", run), 1000)
