"""``briefd jira search|issue``, ``briefd confluence search|page`` and ``briefd bundle --issue``
as real processes against the fake Data Center site (a personal access token from the
environment variable the config file names)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult

from briefd.atlassian import caller_account
from briefd.tokens import count_tokens
from tests.atlassian import data
from tests.atlassian.conftest import DC_PAT
from tests.atlassian.fake import FakeSite
from tests.cli.test_cli import briefd
from tests.conftest import EXAMPLE


def configure(tmp_path: Path, site: FakeSite) -> dict[str, str]:
    (tmp_path / "briefd.yaml").write_text(
        f"source: {EXAMPLE}\n"
        f"confluence:\n  url: {site.url}\n  deployment: datacenter\n  token_env: WIKI_PAT\n"
        "  spaces: [ENG]\n"
        f"jira:\n  url: {site.url}\n  deployment: datacenter\n  projects: [SHOP]\n",
        encoding="utf-8",
    )
    return {"WIKI_PAT": DC_PAT}  # Jira has no token: it uses the Confluence one


def test_jira_and_confluence_commands(tmp_path: Path, dc: FakeSite) -> None:
    env = configure(tmp_path, dc)
    issue = briefd("jira", "issue", "SHOP-42", "--no-comments", cwd=tmp_path, env=env)
    assert issue.returncode == 0, issue.stderr
    assert issue.stdout.startswith("# SHOP-42: Partial refunds can exceed the captured amount\n")
    assert data.ISSUE_TEXT in issue.stdout and "## Comments" not in issue.stdout
    found = briefd("jira", "search", "refund", "--limit", "2", "--json", cwd=tmp_path, env=env)
    assert found.returncode == 0, found.stderr
    answer = json.loads(found.stdout)
    assert [i["key"] for i in answer["issues"]] == ["SHOP-42", "SHOP-41"]
    page = briefd("confluence", "page", "98765", cwd=tmp_path, env=env)
    assert page.returncode == 0 and data.PAGE_TEXT in page.stdout
    assert {s.authorization for s in dc.seen} == {f"Bearer {DC_PAT}"}
    missing = briefd("jira", "issue", "SHOP-999", cwd=tmp_path, env=env)
    assert missing.returncode == 1
    assert missing.stderr.strip() == (
        "error: Jira issue SHOP-999 does not exist, or the account may not see it; check the key"
    )


def test_bundle_with_an_issue_key_and_no_task(tmp_path: Path, dc: FakeSite) -> None:
    env = configure(tmp_path, dc)
    assert briefd("index", cwd=tmp_path, env=env).returncode == 0
    bundle = briefd("bundle", "--issue", "SHOP-42", "--max-tokens", "1500", cwd=tmp_path, env=env)
    assert bundle.returncode == 0, bundle.stderr
    assert bundle.stdout.startswith(
        "> tracker issue · SHOP-42\n\nSHOP-42: Partial refunds can exceed"
    )
    rule = r"\n> domain/refunds\.md:\d+-\d+ · Refunds and partial refunds › Partial refunds · "
    assert re.search(rule, bundle.stdout), bundle.stdout
    lower = briefd("bundle", "--issue", "shop-42", "--max-tokens", "1500", cwd=tmp_path, env=env)
    assert lower.returncode == 0, lower.stderr  # a key in any case is looked up, as jira issue
    assert lower.stdout == bundle.stdout


def test_a_malformed_site_url_is_one_line_at_load(tmp_path: Path, dc: FakeSite) -> None:
    env = configure(tmp_path, dc)
    config = tmp_path / "briefd.yaml"
    config.write_text(
        config.read_text(encoding="utf-8").replace(dc.url, "http://127.0.0.1:8O80"),
        encoding="utf-8",
    )
    issue = briefd("jira", "issue", "SHOP-42", cwd=tmp_path, env=env)
    assert issue.returncode == 1 and issue.stdout == ""
    assert issue.stderr.splitlines() == [
        "error: briefd.yaml: confluence.url: 'http://127.0.0.1:8O80' is not a site URL (port "
        "'8O80' is not a number from 1 to 65535); expected https://host (or http://host:port), "
        "optionally with a path"
    ]
    assert dc.seen == []


def test_a_site_url_holding_an_account_is_refused_without_showing_it(
    tmp_path: Path, dc: FakeSite
) -> None:
    """``http://user:token@host`` was sent as the account and written into every link the
    lookups served (``…/browse/SHOP-42``) and into every error: refused at load, the token
    masked in the message."""
    env = configure(tmp_path, dc)
    config = tmp_path / "briefd.yaml"
    held = dc.url.replace("http://", f"http://svc:{DC_PAT}@")
    config.write_text(config.read_text(encoding="utf-8").replace(dc.url, held), encoding="utf-8")
    issue = briefd("jira", "issue", "SHOP-42", cwd=tmp_path, env=env)
    assert issue.returncode == 1 and issue.stdout == ""
    shown = dc.url.replace("http://", "http://***@")
    assert issue.stderr.splitlines() == [
        f"error: briefd.yaml: confluence.url: '{shown}' is not a site URL (it holds an account "
        "(user:token@); the account comes from the environment variables named by email_env / "
        "token_env, never from the file); expected https://host (or http://host:port), "
        "optionally with a path"
    ]
    assert dc.seen == []


def test_json_is_what_rest_answers_within_max_tokens(tmp_path: Path, dc: FakeSite) -> None:
    """``--json`` printed the shape around the Markdown fitted alone, so a search of 300 tokens
    came out at ~780 (REST and MCP cut the shape again, to what the client receives)."""
    env = configure(tmp_path, dc)
    calls = [
        ("jira", "search", "refund", "--limit", "5", "--max-tokens", "300"),
        ("confluence", "search", "refund", "--max-tokens", "300"),
        ("jira", "issue", "SHOP-42", "--max-tokens", "400"),
        ("confluence", "page", "98765", "--max-tokens", "200"),
    ]
    answers = []
    for args in calls:
        done = briefd(*args, "--json", cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)
        wire = json.dumps(answer, ensure_ascii=False, separators=(",", ":"))
        assert count_tokens(wire) <= int(args[-1]), args
        answers.append(answer)
    issues, pages, issue, page = answers
    assert issues["issues"] and len(issues["issues"]) + issues["omitted"] == 5
    assert issues["text"].endswith(f"({issues['omitted']} more left out to stay within max_tokens)")
    assert len(pages["hits"]) + pages["omitted"] == 3
    assert issue["markdown"].startswith("# SHOP-42: Partial refunds") and issue["truncated"]
    assert page["markdown"].startswith("# Refund incident review") and page["truncated"]


def test_briefd_mcp_over_stdio_serves_the_live_lookups(tmp_path: Path, dc: FakeSite) -> None:
    """I9: ``briefd mcp`` built its tools without the live lookups, so over stdio jira_issue
    and confluence_page were missing and, called, said "Jira is not configured: set jira.url"
    while compile_bundle(issue=KEY) read the very same Jira."""
    env = configure(tmp_path, dc)
    assert briefd("index", cwd=tmp_path, env=env).returncode == 0
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "briefd", "mcp", "--no-index"],
        env={**env, "BRIEFD_EMBEDDINGS__ENABLED": "false"},
        cwd=tmp_path,
    )

    async def main() -> tuple[set[str], list[CallToolResult]]:
        async with Client(params) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            calls = [
                ("jira_issue", {"key": "SHOP-42", "comments": False}),
                ("jira_search", {"text": "refund", "limit": 2}),
                ("confluence_search", {"query": "refund", "limit": 1}),
                ("confluence_page", {"id": "98765"}),
            ]
            return names, [await client.call_tool(name, args) for name, args in calls]

    names, (issue, issues, pages, page) = anyio.run(main)
    assert {"jira_search", "jira_issue", "confluence_search", "confluence_page"} <= names
    assert not any(r.is_error for r in (issue, issues, pages, page)), issue.content
    assert (issue.structured_content or {})["markdown"].startswith("# SHOP-42: Partial refunds")
    assert [i["key"] for i in (issues.structured_content or {})["issues"]] == ["SHOP-42", "SHOP-41"]
    assert [h["id"] for h in (pages.structured_content or {})["hits"]] == ["98765"]
    assert data.PAGE_TEXT in (page.structured_content or {})["markdown"]
    assert {s.authorization for s in dc.seen} == {f"Bearer {DC_PAT}"}


def test_a_cloud_account_without_its_email_says_which_variable_to_export(
    tmp_path: Path, cloud: FakeSite
) -> None:
    """The service account of the environment, token only, was told to "send X-Atlassian-Email
    too, or set jira.email_env": a header a shell cannot send, and a setting of the product
    whose account it was not (Jira falls back to the Confluence account)."""
    (tmp_path / "briefd.yaml").write_text(
        f"source: {EXAMPLE}\nconfluence:\n  url: {cloud.url}\njira:\n  url: {cloud.url}\n",
        encoding="utf-8",
    )
    issue = briefd("jira", "issue", "SHOP-42", cwd=tmp_path, env={"CONFLUENCE_TOKEN": "t0k"})
    assert issue.returncode == 1 and issue.stdout == ""
    assert issue.stderr.strip() == (
        "error: Jira Cloud needs the account's email with its API token, and $CONFLUENCE_EMAIL "
        "/ $CONFLUENCE_TOKEN gave only a token; export $CONFLUENCE_EMAIL too (Data Center "
        "personal access tokens: jira.deployment: datacenter)"
    )
    assert cloud.seen == []
    caller = caller_account({"X-Confluence-Token": "t0k"})
    assert caller is not None and caller.give_email == "send X-Confluence-Email too"
