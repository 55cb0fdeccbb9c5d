"""Live Confluence and Jira (A1, A2) in the service: the wire shapes, the four lookups with
their bookkeeping (counted and timed like every call, never in the query log, tokens served
counted), and the MCP tools — registered only for what is configured, read-only and
open-world. REST (``routes/atlassian.py``) calls the same :class:`Live`. A caller's own account
comes from its ``X-Atlassian-*`` (or ``X-Confluence-*``) headers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import anyio.to_thread
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, Field

from briefd.atlassian import Account, JiraQuery, render
from briefd.atlassian.model import (
    IssueAnswer,
    IssueRow,
    IssueSearchAnswer,
    LinkedPage,
    PageAnswer,
    PageHit,
    PageInfo,
    PageSearchAnswer,
    RelatedIssue,
)
from briefd.service.mcpserver import account_of, add_tool, ok_result
from briefd.service.state import ServiceState
from briefd.tokens import count_tokens

T = TypeVar("T")
A = TypeVar("A", PageSearchAnswer, PageAnswer, IssueSearchAnswer, IssueAnswer)
M = TypeVar("M", bound=BaseModel)
MAX_REFITS = 8
LIVE = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=True)
MAX_TOKENS = render.LARGEST


class ConfluenceSearchOut(BaseModel):
    cql: str = Field(description="The CQL briefd built and ran.")
    hits: list[PageHit] = Field(description="Pages and blog posts; pass an id to confluence_page.")
    omitted: int = Field(description="Hits left out to stay within max_tokens.")
    tokens: int
    text: str


class ConfluencePageOut(BaseModel):
    page: PageInfo
    markdown: str = Field(description="The page as Markdown, cut from the end to max_tokens.")
    tokens: int
    truncated: bool


class JiraSearchOut(BaseModel):
    jql: str = Field(description="The JQL briefd built and ran (newest first).")
    issues: list[IssueRow]
    omitted: int = Field(description="Issues left out to stay within max_tokens.")
    tokens: int
    text: str


class JiraIssueOut(BaseModel):
    key: str
    summary: str
    url: str
    type: str
    status: str
    assignee: str
    related: list[RelatedIssue] = Field(
        description="Issue links with their relation, parent, subtasks (those the Markdown kept)."
    )
    pages: list[LinkedPage] = Field(
        description="Remote links; Confluence ones carry page_id (those the Markdown kept)."
    )
    comments: int
    markdown: str = Field(
        description="Metadata, related issues, linked pages, description, configured fields, "
        "comments newest first; cut from the end to max_tokens."
    )
    tokens: int
    truncated: bool


def page_search_out(answer: PageSearchAnswer) -> ConfluenceSearchOut:
    text = answer.text
    return ConfluenceSearchOut(
        cql=answer.cql,
        hits=list(answer.hits),
        omitted=answer.omitted,
        tokens=text.tokens,
        text=text.markdown,
    )


def page_out(answer: PageAnswer) -> ConfluencePageOut:
    text = answer.text
    return ConfluencePageOut(
        page=answer.page.info, markdown=text.markdown, tokens=text.tokens, truncated=text.truncated
    )


def issue_search_out(answer: IssueSearchAnswer) -> JiraSearchOut:
    text = answer.text
    return JiraSearchOut(
        jql=answer.jql,
        issues=list(answer.issues),
        omitted=answer.omitted,
        tokens=text.tokens,
        text=text.markdown,
    )


def issue_out(answer: IssueAnswer) -> JiraIssueOut:
    """The answer's shape; its related issues and linked pages those the Markdown kept."""
    issue, text = answer.issue, answer.text
    related, pages = render.shown(answer)
    return JiraIssueOut(
        key=issue.key,
        summary=issue.summary,
        url=issue.url,
        type=issue.type,
        status=issue.status,
        assignee=issue.assignee,
        related=list(related),
        pages=list(pages),
        comments=len(issue.comments),
        markdown=text.markdown,
        tokens=text.tokens,
        truncated=text.truncated,
    )


class Live:
    """The lookups with bookkeeping, for MCP and REST alike. They run outside the index lock
    (they never touch the index) and are never written to the query log; for a ``head``
    request (a HEAD answered as a GET) no tokens are counted as served either."""

    def __init__(self, state: ServiceState, head: bool = False) -> None:
        self.state = state
        self.atlassian = state.api.atlassian
        self.head = head

    def _run(
        self,
        surface: str,
        name: str,
        fn: Callable[[], A],
        out: Callable[[A], M],
        max_tokens: int,
    ) -> M:
        answer = self.state.call(surface, name, fn, exclusive=False)
        answer, result = delivered(answer, out, max_tokens)
        if not self.head:
            self.state.served(surface, name, answer.text.tokens)
        return result

    def confluence_search(
        self,
        surface: str,
        query: str,
        spaces: list[str] | None,
        limit: int,
        max_tokens: int,
        account: Account | None,
    ) -> ConfluenceSearchOut:
        def run() -> PageSearchAnswer:
            return self.atlassian.confluence_search(query, spaces or [], limit, max_tokens, account)

        return self._run(surface, "confluence_search", run, page_search_out, max_tokens)

    def confluence_page(
        self, surface: str, id: str, max_tokens: int, account: Account | None
    ) -> ConfluencePageOut:
        def run() -> PageAnswer:
            return self.atlassian.confluence_page(id, max_tokens, account)

        return self._run(surface, "confluence_page", run, page_out, max_tokens)

    def jira_search(self, surface: str, query: JiraQuery, account: Account | None) -> JiraSearchOut:
        def run() -> IssueSearchAnswer:
            return self.atlassian.jira_search(query, account)

        return self._run(surface, "jira_search", run, issue_search_out, query.max_tokens)

    def jira_issue(
        self, surface: str, key: str, comments: bool, max_tokens: int, account: Account | None
    ) -> JiraIssueOut:
        def run() -> IssueAnswer:
            return self.atlassian.jira_issue(key, comments, max_tokens, account)

        return self._run(surface, "jira_issue", run, issue_out, max_tokens)


def delivered(answer: A, out: Callable[[A], M], max_tokens: int) -> tuple[A, M]:
    """``out(answer)``, cut again until its JSON — what a client receives: REST's body, MCP's
    structured content, which Claude Code and VS Code hand the model — is within
    ``max_tokens``; the lookups fit only the Markdown to it. A floor remains: the list's head
    (with its query) or the cut marker alone, and a page's or issue's metadata. Cut by the
    Markdown's share of the JSON first, then as little as that leaves room for (a hit costs
    its fields more than its line: the share alone left out hits that fit)."""
    result = out(answer)
    sent = _sent(result)
    if sent <= max_tokens:
        return answer, result
    whole, over, current = answer, answer.text.tokens, answer
    for _ in range(MAX_REFITS):
        # the Markdown's share of the JSON, scaled down
        budget = min(current.text.tokens - 1, current.text.tokens * max_tokens // sent)
        smaller = render.refit(whole, budget)
        if smaller.text.tokens >= current.text.tokens:
            return current, result  # nothing left to cut
        current, result = smaller, out(smaller)
        sent = _sent(result)
        if sent <= max_tokens:
            return _closer(whole, out, max_tokens, (budget, over), (current, result))
        over = budget
    return current, result


def _closer(
    whole: A, out: Callable[[A], M], max_tokens: int, span: tuple[int, int], fits: tuple[A, M]
) -> tuple[A, M]:
    """The largest cut of ``whole`` whose JSON is within ``max_tokens``, between the Markdown
    budgets ``span`` (the first fits: ``fits``; the second does not), bisected."""
    under, over = span
    for _ in range(MAX_REFITS):
        if over - under <= 1:
            break
        middle = (under + over) // 2
        candidate = render.refit(whole, middle)
        shaped = out(candidate)
        if _sent(shaped) <= max_tokens:
            under, fits = middle, (candidate, shaped)
        else:
            over = middle
    return fits


def _sent(result: BaseModel) -> int:
    return count_tokens(result.model_dump_json())


Tokens = Annotated[int, Field(ge=50, le=MAX_TOKENS, description="Budget of the answer.")]
Limit = Annotated[int, Field(ge=1, le=50, description="At most this many results.")]


class AtlassianTools:
    """``confluence_*`` and ``jira_*`` MCP tools over :class:`Live`."""

    def __init__(self, state: ServiceState) -> None:
        self.live = Live(state)

    async def _off_thread(self, fn: Callable[[], T]) -> T:
        return await anyio.to_thread.run_sync(fn)

    async def confluence_search(
        self,
        query: Annotated[
            str, Field(min_length=1, max_length=500, description="Words to search pages for.")
        ],
        spaces: Annotated[
            list[str] | None,
            Field(description="Space keys to search (within the configured ones). Default: all."),
        ] = None,
        limit: Limit = 10,
        max_tokens: Tokens = 1000,
        ctx: Context[Any, Any] | None = None,
    ) -> Annotated[CallToolResult, ConfluenceSearchOut]:
        """Search the team's Confluence live (read-only): pages and blog posts matching the
        words, with their ids, spaces, links and excerpts, within max_tokens. Read one with
        confluence_page(id). Only the configured spaces are searched."""
        account = account_of(ctx)
        out = await self._off_thread(
            lambda: self.live.confluence_search("mcp", query, spaces, limit, max_tokens, account)
        )
        return ok_result(out.text, out)

    async def confluence_page(
        self,
        id: Annotated[
            str, Field(min_length=1, max_length=40, description="Page id from confluence_search.")
        ],
        max_tokens: Tokens = 3000,
        ctx: Context[Any, Any] | None = None,
    ) -> Annotated[CallToolResult, ConfluencePageOut]:
        """Read one Confluence page live (read-only) as Markdown — code blocks with their
        language, panels, expands and task lists kept — cut from the end to max_tokens."""
        account = account_of(ctx)
        out = await self._off_thread(
            lambda: self.live.confluence_page("mcp", id, max_tokens, account)
        )
        return ok_result(out.markdown, out)

    async def jira_search(
        self,
        text: Annotated[str | None, Field(max_length=500, description="Words to find.")] = None,
        projects: Annotated[
            list[str] | None,
            Field(description="Project keys (within the configured ones). Default: all."),
        ] = None,
        status: Annotated[str | None, Field(max_length=100)] = None,
        type: Annotated[
            str | None, Field(max_length=100, description="Issue type, e.g. Bug.")
        ] = None,
        assignee: Annotated[
            str | None,
            Field(max_length=200, description="Name, email or account id; 'me'; or 'unassigned'."),
        ] = None,
        open_only: Annotated[bool, Field(description="Only issues not done.")] = False,
        limit: Limit = 10,
        max_tokens: Tokens = 800,
        ctx: Context[Any, Any] | None = None,
    ) -> Annotated[CallToolResult, JiraSearchOut]:
        """Search the team's Jira live (read-only), newest first: key, type, status, summary,
        assignee and link per issue, within max_tokens. briefd builds the JQL from the
        filters (shown in the answer); read an issue with jira_issue(key)."""
        wanted = tuple(projects or ())
        query = JiraQuery(text, wanted, status, type, assignee, open_only, limit, max_tokens)
        account = account_of(ctx)
        out = await self._off_thread(lambda: self.live.jira_search("mcp", query, account))
        return ok_result(out.text, out)

    async def jira_issue(
        self,
        key: Annotated[
            str,
            Field(
                min_length=3,
                max_length=2048,  # a browse URL with its query and fragment
                description="Issue key, e.g. SHOP-42, or its browse URL on the configured site "
                "(https://…/browse/SHOP-42), as compile_bundle's issue takes it.",
            ),
        ],
        comments: Annotated[bool, Field(description="Include comments, newest first.")] = True,
        max_tokens: Tokens = 2000,
        ctx: Context[Any, Any] | None = None,
    ) -> Annotated[CallToolResult, JiraIssueOut]:
        """Read one Jira issue live (read-only) as Markdown: metadata, related issues, linked
        Confluence pages, description, the configured fields and comments newest first, cut
        from the end to max_tokens. compile_bundle(issue=key) heads a bundle with it."""
        account = account_of(ctx)
        out = await self._off_thread(
            lambda: self.live.jira_issue("mcp", key, comments, max_tokens, account)
        )
        return ok_result(out.markdown, out)


def register(server: MCPServer[Any], state: ServiceState) -> None:
    """Add the tools of each configured product (none when neither is configured)."""
    tools = AtlassianTools(state)
    names = []
    if state.api.atlassian.confluence_on:
        names += ["confluence_search", "confluence_page"]
    if state.api.atlassian.jira_on:
        names += ["jira_search", "jira_issue"]
    for name in names:
        add_tool(server, getattr(tools, name), LIVE)
