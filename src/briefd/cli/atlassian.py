"""``briefd jira search|issue`` and ``briefd confluence search|page``: the live lookups (A1,
A2) from a shell, as the configured account; Markdown on stdout, or ``--json`` in the same
shape REST and MCP answer with."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import typer

from briefd.api import Briefd
from briefd.atlassian.query import MAX_LIMIT, MIN_TOKENS, JiraQuery
from briefd.cli.output import reported_errors
from briefd.cli.search import split_scopes

if TYPE_CHECKING:  # pydantic is ~55 ms of every command's start: the shapes bring it when used
    from pydantic import BaseModel

    from briefd.atlassian.model import IssueAnswer, IssueSearchAnswer, PageAnswer, PageSearchAnswer

jira_app = typer.Typer(
    help="Live Jira lookups (read-only): search issues, read one.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
confluence_app = typer.Typer(
    help="Live Confluence lookups (read-only): search pages, read one.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
A = TypeVar("A", "PageSearchAnswer", "PageAnswer", "IssueSearchAnswer", "IssueAnswer")
JSON = typer.Option(False, "--json", help="Print the answer as JSON (as REST returns it).")
LIMIT = typer.Option(10, "--limit", min=1, max=MAX_LIMIT, help="At most this many results.")


def register(app: typer.Typer) -> None:
    app.add_typer(jira_app, name="jira")
    app.add_typer(confluence_app, name="confluence")


def _print(answer: A, shape: Callable[[A], BaseModel], max_tokens: int, json_output: bool) -> None:
    """The answer's Markdown (within ``max_tokens``); with ``--json`` what REST answers: the
    shape cut again until its JSON is within ``max_tokens`` too."""
    # the shapes import the MCP SDK (~0.5 s): only once there is an answer to shape
    from briefd.service.atlassian import delivered

    text = answer.text.markdown
    if json_output:
        text = delivered(answer, shape, max_tokens)[1].model_dump_json(indent=2)
    sys.stdout.write(text.rstrip("\n") + "\n")


@jira_app.command("search")
def jira_search(
    ctx: typer.Context,
    text: str | None = typer.Argument(None, help="Words to find (optional)."),
    projects: list[str] | None = typer.Option(
        None, "--project", "--projects", help="Project keys (repeat or comma-separate)."
    ),
    status: str | None = typer.Option(None, "--status", help="e.g. 'In Progress'."),
    issue_type: str | None = typer.Option(None, "--type", help="Issue type, e.g. Bug."),
    assignee: str | None = typer.Option(None, "--assignee", help="Name, email, me, unassigned."),
    open_only: bool = typer.Option(False, "--open", help="Only issues not done."),
    limit: int = LIMIT,
    max_tokens: int = typer.Option(
        800, "--max-tokens", min=MIN_TOKENS, help="Budget of the answer."
    ),
    json_output: bool = JSON,
) -> None:
    """Search Jira issues, newest first, within jira.projects (JQL built by briefd)."""
    wanted = split_scopes(projects) or ()
    query = JiraQuery(text, wanted, status, issue_type, assignee, open_only, limit, max_tokens)
    with reported_errors(), Briefd(ctx.obj.settings()) as api:
        found = api.atlassian.jira_search(query, None)
    from briefd.service.atlassian import issue_search_out

    _print(found, issue_search_out, max_tokens, json_output)


@jira_app.command("issue")
def jira_issue(
    ctx: typer.Context,
    key: str = typer.Argument(..., help="Issue key, e.g. SHOP-42."),
    comments: bool = typer.Option(True, "--comments/--no-comments", help="Include comments."),
    max_tokens: int = typer.Option(
        2000, "--max-tokens", min=MIN_TOKENS, help="Budget of the answer."
    ),
    json_output: bool = JSON,
) -> None:
    """Read one Jira issue as Markdown: metadata, related issues, linked pages, description,
    jira.fields, comments newest first."""
    with reported_errors(), Briefd(ctx.obj.settings()) as api:
        issue = api.atlassian.jira_issue(key, comments, max_tokens, None)
    from briefd.service.atlassian import issue_out

    _print(issue, issue_out, max_tokens, json_output)


@confluence_app.command("search")
def confluence_search(
    ctx: typer.Context,
    query: str = typer.Argument(..., help="Words to search pages for."),
    spaces: list[str] | None = typer.Option(
        None, "--space", "--spaces", help="Space keys (repeat or comma-separate)."
    ),
    limit: int = LIMIT,
    max_tokens: int = typer.Option(
        1000, "--max-tokens", min=MIN_TOKENS, help="Budget of the answer."
    ),
    json_output: bool = JSON,
) -> None:
    """Search Confluence pages within confluence.spaces (CQL built by briefd)."""
    wanted = list(split_scopes(spaces) or ())
    with reported_errors(), Briefd(ctx.obj.settings()) as api:
        answer = api.atlassian.confluence_search(query, wanted, limit, max_tokens, None)
    from briefd.service.atlassian import page_search_out

    _print(answer, page_search_out, max_tokens, json_output)


@confluence_app.command("page")
def confluence_page(
    ctx: typer.Context,
    page_id: str = typer.Argument(..., help="Page id, as confluence search prints it."),
    max_tokens: int = typer.Option(
        3000, "--max-tokens", min=MIN_TOKENS, help="Budget of the answer."
    ),
    json_output: bool = JSON,
) -> None:
    """Read one Confluence page as Markdown."""
    with reported_errors(), Briefd(ctx.obj.settings()) as api:
        page = api.atlassian.confluence_page(page_id, max_tokens, None)
    from briefd.service.atlassian import page_out

    _print(page, page_out, max_tokens, json_output)
