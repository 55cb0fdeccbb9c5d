"""The nouns of the live lookups (A1, A2): what Confluence and Jira answered, parsed, and what
briefd answers with (records plus the Markdown an agent reads, within ``max_tokens``).
Nothing here is stored."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PageHit:
    id: str
    type: str  # page | blogpost
    title: str
    space: str
    url: str
    excerpt: str
    updated: str


@dataclass(frozen=True, slots=True)
class PageInfo:
    id: str
    title: str
    space: str
    url: str
    version: int
    updated: str


@dataclass(frozen=True, slots=True)
class Page:
    info: PageInfo
    html: str


@dataclass(frozen=True, slots=True)
class IssueRow:
    """One hit of ``jira_search``."""

    key: str
    summary: str
    type: str
    status: str
    priority: str
    assignee: str
    updated: str
    url: str


@dataclass(frozen=True, slots=True)
class RelatedIssue:
    relation: str  # "blocks", "is blocked by", "parent", "subtask", …
    key: str
    summary: str  # "" when ``outside``
    status: str  # "" when ``outside``
    outside: bool = False  # in a project outside ``jira.projects``: only its key is shown


@dataclass(frozen=True, slots=True)
class LinkedPage:
    """A remote link of an issue; ``page_id`` when it is a Confluence page."""

    title: str
    url: str
    page_id: str | None


@dataclass(frozen=True, slots=True)
class Comment:
    author: str
    created: str
    html: str


@dataclass(frozen=True, slots=True)
class Issue:
    key: str
    url: str
    summary: str
    type: str
    status: str
    priority: str
    assignee: str
    reporter: str
    resolution: str
    created: str
    updated: str
    labels: tuple[str, ...]
    components: tuple[str, ...]
    fix_versions: tuple[str, ...]
    description_html: str
    fields: tuple[tuple[str, str], ...]  # (field name, value as HTML or text), jira.fields
    related: tuple[RelatedIssue, ...]
    pages: tuple[LinkedPage, ...]
    comments: tuple[Comment, ...]  # newest first
    comments_total: int = 0  # how many the issue has; only the newest jira.MAX_COMMENTS are read


@dataclass(frozen=True, slots=True)
class Fitted:
    """Markdown cut from the end to a budget: ``tokens`` counts ``markdown``."""

    markdown: str
    tokens: int
    truncated: bool
    whole: int = 0  # tokens of all of it before the cut (render.fit; 0: not counted)
    ask: str = ""  # how the cut marker says to get the rest (render.fit), kept for a refit


@dataclass(frozen=True, slots=True)
class PageSearchAnswer:
    cql: str
    hits: tuple[PageHit, ...]
    omitted: int
    text: Fitted
    more: str = ""  # that more match than the limit fetched, and what to do ("": none)


@dataclass(frozen=True, slots=True)
class PageAnswer:
    page: Page
    text: Fitted
    blocks: tuple[str, ...]  # the Markdown ``text`` was cut from: a refit cuts it, not the HTML


@dataclass(frozen=True, slots=True)
class IssueSearchAnswer:
    jql: str
    issues: tuple[IssueRow, ...]
    omitted: int
    text: Fitted
    unseen: tuple[str, ...] = ()  # projects of jira.projects Jira knows not for this account
    more: str = ""  # that more match than the limit fetched, and what to do ("": none)


@dataclass(frozen=True, slots=True)
class IssueAnswer:
    issue: Issue
    text: Fitted
    query: str  # summary and the head of the description: what a bundle searches with
    blocks: tuple[str, ...]  # the Markdown ``text`` was cut from: a refit cuts it, not the HTML
