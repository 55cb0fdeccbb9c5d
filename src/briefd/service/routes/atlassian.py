"""Live Confluence and Jira under ``/api`` (A1, A2): the same lookups as the MCP tools, through
:class:`~briefd.service.atlassian.Live`. A caller may send ``X-Atlassian-Email`` /
``X-Atlassian-Token`` to be served with its own account. Unconfigured: 404 saying so."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request

from briefd.atlassian import JiraQuery, caller_account
from briefd.service.atlassian import (
    MAX_TOKENS,
    ConfluencePageOut,
    ConfluenceSearchOut,
    JiraIssueOut,
    JiraSearchOut,
    Live,
)
from briefd.service.deps import Head, State
from briefd.service.schemas import ErrorBody, split_list

router = APIRouter(prefix="/api", tags=["atlassian"])
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (400, 401, 404, 422, 429, 502)
}
Tokens = Annotated[int, Query(ge=50, le=MAX_TOKENS, description="Budget of the answer.")]
Limit = Annotated[int, Query(ge=1, le=50)]


@router.get("/confluence/search", response_model=ConfluenceSearchOut, responses=ERRORS)
def confluence_search(
    state: State,
    head: Head,
    request: Request,
    q: Annotated[str, Query(min_length=1, max_length=500, description="Words to search for.")],
    spaces: Annotated[
        list[str] | None, Query(description="Space keys (comma or repeated).")
    ] = None,
    limit: Limit = 10,
    max_tokens: Tokens = 1000,
) -> ConfluenceSearchOut:
    """Confluence pages matching ``q`` within the configured spaces (CQL built by briefd)."""
    wanted = list(split_list(spaces) or ())
    account = caller_account(request.headers)
    return Live(state, head).confluence_search("rest", q, wanted, limit, max_tokens, account)


@router.get("/confluence/pages/{page_id}", response_model=ConfluencePageOut, responses=ERRORS)
def confluence_page(
    state: State,
    head: Head,
    request: Request,
    page_id: Annotated[str, Path(max_length=40)],
    max_tokens: Tokens = 3000,
) -> ConfluencePageOut:
    """One Confluence page as Markdown, cut from the end to ``max_tokens``."""
    account = caller_account(request.headers)
    return Live(state, head).confluence_page("rest", page_id, max_tokens, account)


@router.get("/jira/search", response_model=JiraSearchOut, responses=ERRORS)
def jira_search(
    state: State,
    head: Head,
    request: Request,
    text: Annotated[str | None, Query(max_length=500)] = None,
    projects: Annotated[list[str] | None, Query(description="Project keys.")] = None,
    status: Annotated[str | None, Query(max_length=100)] = None,
    type: Annotated[str | None, Query(max_length=100)] = None,
    assignee: Annotated[str | None, Query(max_length=200)] = None,
    open_only: bool = False,
    limit: Limit = 10,
    max_tokens: Tokens = 800,
) -> JiraSearchOut:
    """Jira issues matching the filters, newest first, within the configured projects."""
    wanted = split_list(projects) or ()
    query = JiraQuery(text, wanted, status, type, assignee, open_only, limit, max_tokens)
    return Live(state, head).jira_search("rest", query, caller_account(request.headers))


@router.get("/jira/issues/{key}", response_model=JiraIssueOut, responses=ERRORS)
def jira_issue(
    state: State,
    head: Head,
    request: Request,
    key: Annotated[str, Path(max_length=40)],
    comments: bool = True,
    max_tokens: Tokens = 2000,
) -> JiraIssueOut:
    """One Jira issue as Markdown (metadata, related issues, linked pages, description,
    configured fields, comments newest first), cut from the end to ``max_tokens``."""
    account = caller_account(request.headers)
    return Live(state, head).jira_issue("rest", key, comments, max_tokens, account)
