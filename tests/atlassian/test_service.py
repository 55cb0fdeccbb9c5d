"""The lookups through the service against the fake Cloud site: the MCP tools through the
SDK's own client on a real uvicorn (listed only when configured, read-only and open-world,
the caller's own account from its headers), REST, bundles headed by a live issue (B1), and
no credential, page or issue text in logs, the query log or the metrics."""

from __future__ import annotations

import base64
import dataclasses
import json
import logging
import shutil
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import jsonschema
import pytest
from fastapi.testclient import TestClient
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

from briefd.api import Briefd
from briefd.bundles import BundleRequest
from briefd.errors import IntegrationOffError, RemoteNotFoundError
from briefd.service import create_app
from briefd.settings import Settings, load_settings
from briefd.tokens import count_tokens
from tests.atlassian import data
from tests.atlassian.conftest import (
    CALLER_EMAIL,
    CALLER_TOKEN,
    SECRETS,
    SERVICE_EMAIL,
    SERVICE_TOKEN,
)
from tests.atlassian.fake import FakeSite
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving

LIVE_TOOLS = {"confluence_search", "confluence_page", "jira_search", "jira_issue"}
CALLER = {"X-Atlassian-Email": CALLER_EMAIL, "X-Atlassian-Token": CALLER_TOKEN}
TEXTS = (data.ISSUE_TEXT, data.PAGE_TEXT, data.COMMENT_TEXT)


def live_settings(source: Path, db: Path, site: FakeSite | None) -> Settings:
    values: dict[str, Any] = {"db": str(db), "source": str(source), "embeddings.enabled": False}
    if site is not None:
        values |= {
            "confluence.url": site.url,
            "confluence.spaces": ["ENG"],
            "jira.url": site.url,
            "jira.projects": ["SHOP"],
        }
    return load_settings(config=None, env={}, overrides=values)


@pytest.fixture
def live_api(
    tmp_path: Path,
    example_copy: tuple[Path, Path],
    cloud: FakeSite,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Briefd]:
    """The example index with Confluence and Jira on the fake Cloud site; the service account
    in the environment (Jira falls back to it)."""
    monkeypatch.setenv("CONFLUENCE_EMAIL", SERVICE_EMAIL)
    monkeypatch.setenv("CONFLUENCE_TOKEN", SERVICE_TOKEN)
    source, template = example_copy
    shutil.copyfile(template, tmp_path / "index.db")
    with Briefd(live_settings(source, tmp_path / "index.db", cloud), embedder=None) as api:
        yield api


@pytest.fixture
def rest(live_api: Briefd) -> Iterator[TestClient]:
    with TestClient(create_app(live_api, service_config())) as http:
        http.headers["Authorization"] = f"Bearer {TOKEN}"
        yield http


def mcp(url: str, body: Callable[[Client], Awaitable[Any]], headers: dict[str, str]) -> Any:
    async def main() -> Any:
        sent = {"Authorization": f"Bearer {TOKEN}", **headers}
        async with (
            httpx2.AsyncClient(headers=sent, timeout=30) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            return await body(client)

    return anyio.run(main)


def structured(result: CallToolResult, schema: dict[str, Any] | None) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert schema is not None and result.structured_content is not None
    jsonschema.validate(result.structured_content, schema)
    return result.structured_content


def basic(email: str, token: str) -> str:
    return "Basic " + base64.b64encode(f"{email}:{token}".encode()).decode()


def test_mcp_tools_are_listed_read_only_and_open_world_and_answer(
    live_api: Briefd, cloud: FakeSite
) -> None:
    async def body(client: Client) -> tuple[Any, list[CallToolResult]]:
        tools = (await client.list_tools()).tools
        calls = [
            ("jira_search", {"text": "refund", "limit": 3}),
            ("jira_issue", {"key": "SHOP-42", "max_tokens": 1500}),
            ("confluence_search", {"query": "refund"}),
            ("confluence_page", {"id": "98765"}),
            ("jira_issue", {"key": "SHOP-999"}),
            ("compile_bundle", {"issue": "SHOP-42", "max_tokens": 1500}),
        ]
        return tools, [await client.call_tool(name, args) for name, args in calls]

    with serving(create_app(live_api, service_config())) as base:
        tools, results = mcp(base + "/mcp", body, CALLER)
    listed = {t.name: t for t in tools}
    assert set(listed) >= LIVE_TOOLS
    for name in LIVE_TOOLS:
        hints = listed[name].annotations
        assert hints is not None and hints.read_only_hint and hints.open_world_hint, name
        assert "ctx" not in listed[name].input_schema["properties"]
    assert "ctx" not in listed["compile_bundle"].input_schema["properties"]
    search = structured(results[0], listed["jira_search"].output_schema)
    assert [i["key"] for i in search["issues"]] == ["SHOP-42", "SHOP-41", "SHOP-40"]
    assert search["jql"] == 'project in ("SHOP") AND text ~ "refund" ORDER BY created DESC'
    issue = structured(results[1], listed["jira_issue"].output_schema)
    assert issue["pages"] == [
        {
            "title": "Refund incident review",
            "url": f"{cloud.url}/wiki/pages/viewpage.action?pageId=98765",
            "page_id": "98765",
        }
    ]
    assert [r["key"] for r in issue["related"]] == ["SHOP-43", "PAY-7"]
    assert results[1].content[0].text == issue["markdown"]  # type: ignore[union-attr]
    pages = structured(results[2], listed["confluence_search"].output_schema)
    assert [h["id"] for h in pages["hits"]] == ["98765", "98766", "55555"]
    page = structured(results[3], listed["confluence_page"].output_schema)
    assert data.PAGE_TEXT in page["markdown"] and "```sql" in page["markdown"]
    assert results[4].is_error
    assert results[4].content[0].text == (  # type: ignore[union-attr]
        "Jira issue SHOP-999 does not exist, or the account may not see it; check the key"
    )
    bundle = structured(results[5], listed["compile_bundle"].output_schema)
    assert bundle["text"].startswith(
        "> tracker issue · SHOP-42\n\nSHOP-42: Partial refunds can exceed the captured amount"
    )
    every = {s.authorization for s in cloud.seen}
    assert every == {basic(CALLER_EMAIL, CALLER_TOKEN)}  # the caller's account, every time


def test_max_tokens_bounds_the_answer_as_the_client_receives_it(
    live_api: Briefd, rest: TestClient
) -> None:
    """Claude Code and VS Code hand the model JSON.stringify(structuredContent): a hit costs
    its Markdown line and its fields, so the Markdown alone within max_tokens was ~2x over."""
    calls = [
        ("confluence_search", {"query": "refund", "max_tokens": 300}),
        ("jira_search", {"text": "refund", "limit": 5, "max_tokens": 300}),
        ("confluence_page", {"id": "98765", "max_tokens": 200}),
        ("jira_issue", {"key": "SHOP-42", "max_tokens": 400}),
    ]

    async def body(client: Client) -> list[CallToolResult]:
        return [await client.call_tool(name, args) for name, args in calls]

    with serving(create_app(live_api, service_config())) as base:
        results = mcp(base + "/mcp", body, {})
    assert not any(r.is_error for r in results), [r.content for r in results]
    sent = [r.structured_content or {} for r in results]
    for (name, args), out in zip(calls, sent, strict=True):
        wire = json.dumps(out, ensure_ascii=False, separators=(",", ":"))
        assert count_tokens(wire) <= args["max_tokens"], name
    pages, issues, page, issue = sent
    assert pages["hits"] and len(pages["hits"]) + pages["omitted"] == 3
    assert pages["text"].endswith(f"({pages['omitted']} more left out to stay within max_tokens)")
    assert issues["issues"] and len(issues["issues"]) + issues["omitted"] == 5
    assert page["markdown"].startswith("# Refund incident review") and page["truncated"]
    assert issue["markdown"].startswith("# SHOP-42: Partial refunds") and issue["truncated"]
    over_rest = rest.get("/api/jira/search", params={"text": "refund", "max_tokens": 300})
    assert count_tokens(over_rest.content.decode()) <= 300
    assert over_rest.json()["issues"] == issues["issues"]


def test_a_list_keeps_every_hit_that_fits_max_tokens_as_sent(rest: TestClient) -> None:
    """The list was cut by the Markdown's share of the JSON alone, and a hit costs its fields
    more than its line: jira_search(limit=3, max_tokens=200) answered no issue ('3 more left
    out') in 76 tokens where one fitted in 191; limit=5 at 425 two where three fitted in 413."""
    for route, params, hits in (
        ("/api/jira/search", {"text": "refund", "limit": 5}, "issues"),
        ("/api/confluence/search", {"q": "refund"}, "hits"),
    ):
        sizes: dict[int, int] = {}  # hits kept → tokens sent
        kept: dict[int, int] = {}  # max_tokens → hits kept
        for budget in range(150, 700, 25):
            answer = rest.get(route, params={**params, "max_tokens": budget})
            assert answer.status_code == 200, answer.text
            sent = count_tokens(answer.content.decode())
            assert sent <= budget
            kept[budget] = len(answer.json()[hits])
            sizes[kept[budget]] = sent
        for budget, count in kept.items():
            more = sizes.get(count + 1)
            assert more is None or more > budget, (route, budget, count, sizes)
    one = rest.get("/api/jira/search", params={"text": "refund", "limit": 5, "max_tokens": 200})
    assert [i["key"] for i in one.json()["issues"]] == ["SHOP-42"]
    assert one.json()["text"].endswith("(4 more left out to stay within max_tokens)")


def test_an_issue_with_many_links_stays_within_max_tokens_and_keeps_its_head(
    live_api: Briefd, cloud: FakeSite
) -> None:
    """An issue linking 80 others (a release, a clone family): the structured answer listed
    all 80 beside the Markdown, so the JSON stayed ~1.5x over max_tokens however far the
    Markdown was cut, and the cut left the agent no Markdown at all, not even the title."""
    links = [
        {
            "id": str(40000 + n),
            "type": {"name": "Relates", "inward": "relates to", "outward": "relates to"},
            "outwardIssue": {
                "id": str(20000 + n),
                "key": f"SHOP-{100 + n}",
                "fields": {
                    "summary": f"Follow-up {n}: refund rounding for currency number {n}",
                    "status": {"name": "To Do"},
                },
            },
        }
        for n in range(80)
    ]
    issue = {
        "id": "10042",
        "key": "SHOP-42",
        "fields": {**data.SHOP_42_FIELDS, "issuelinks": links},
        "renderedFields": {"description": data.DESCRIPTION_HTML},
    }
    cloud.script(r"/issue/SHOP-42$", 200, body=issue)

    async def body(client: Client) -> CallToolResult:
        return await client.call_tool("jira_issue", {"key": "SHOP-42", "max_tokens": 2000})

    with serving(create_app(live_api, service_config())) as base:
        result = mcp(base + "/mcp", body, {})
    out = result.structured_content or {}
    wire = json.dumps(out, ensure_ascii=False, separators=(",", ":"))
    assert count_tokens(wire) <= 2000
    assert out["truncated"] and out["markdown"].startswith("# SHOP-42: Partial refunds")
    lines = out["markdown"].splitlines()
    listed = [r["key"] for r in out["related"]]
    assert 10 < len(listed) < 80
    assert listed == [
        k
        for k in (f"SHOP-{100 + n}" for n in range(80))
        if any(line.startswith(f"- relates to {k} (To Do)") for line in lines)
    ]


def test_a_page_past_the_largest_budget_says_where_the_rest_is(
    live_api: Briefd, cloud: FakeSite
) -> None:
    """A page of ~80,000 tokens read with the largest max_tokens the tool takes: the cut
    marker told the agent to ask with a larger max_tokens, which the tool refuses."""
    webui = "/spaces/ENG/pages/77777/Load+test+log"
    page = {
        "id": "77777",
        "status": "current",
        "title": "Load test log",
        "spaceId": data.SPACES["ENG"][0],
        "version": {"createdAt": "2026-04-01T10:00:00.000Z", "number": 1},
        "body": {"export_view": {"value": "<p>" + "refund ok " * 40_000 + "</p>"}},
        "_links": {"webui": webui, "base": cloud.url + "/wiki"},
    }
    cloud.script(r"/api/v2/pages/77777$", 200, body=page, times=2)

    async def body(client: Client) -> list[CallToolResult]:
        asked = [{"id": "77777", "max_tokens": 50_000}, {"id": "77777", "max_tokens": 50_001}]
        return [await client.call_tool("confluence_page", args) for args in asked]

    with serving(create_app(live_api, service_config())) as base:
        largest, larger = mcp(base + "/mcp", body, {})
    out = largest.structured_content or {}
    assert out["truncated"] and out["tokens"] <= 50_000
    assert out["markdown"].endswith(
        f"tokens shown; 50000 is the largest max_tokens: read the rest at {cloud.url}/wiki{webui}]"
    )
    assert larger.is_error  # what "ask with a larger max_tokens" led to


def test_unconfigured_lists_no_live_tools_and_rest_says_what_to_set(
    tmp_path: Path, example_copy: tuple[Path, Path]
) -> None:
    source, template = example_copy
    shutil.copyfile(template, tmp_path / "index.db")
    with Briefd(live_settings(source, tmp_path / "index.db", None), embedder=None) as api:

        async def body(client: Client) -> set[str]:
            return {t.name for t in (await client.list_tools()).tools}

        with serving(create_app(api, service_config())) as base:
            names = mcp(base + "/mcp", body, {})
        assert not names & LIVE_TOOLS and "compile_bundle" in names
        with TestClient(create_app(api, service_config())) as http:
            setup = http.get("/setup").text  # explains the settings; open, and holds no token
            assert "jira:" in setup and "X-Atlassian-Token" in setup and TOKEN not in setup
            http.headers["Authorization"] = f"Bearer {TOKEN}"
            response = http.get("/api/jira/issues/SHOP-42")
            unbounded = http.get("/api/confluence/search", params={"q": "***"})
            assert unbounded.status_code == 404  # "not configured" before any other complaint
            assert response.status_code == 404
            assert response.json() == {
                "error": "integration_off",
                "detail": "Jira is not configured: set jira.url in briefd.yaml or "
                "BRIEFD_JIRA__URL, and the account in JIRA_EMAIL / JIRA_TOKEN (README: "
                "Confluence and Jira) (this server's /setup page shows the settings)",
            }
            bundle = http.post("/api/bundle", json={"task": "", "issue": "SHOP-42"})
            assert bundle.status_code == 404
            assert bundle.json()["detail"].startswith("issue 'SHOP-42' is a Jira key, but Jira")
            # text that only has a key's shape is the issue's text, without Jira
            shaped = http.post("/api/bundle", json={"task": "", "issue": "utf-8"})
            assert shaped.status_code == 200 and "utf-8" in shaped.json()["text"]
        with pytest.raises(IntegrationOffError):
            api.compile_bundle(BundleRequest("", issue="SHOP-42"))


def test_rest_routes_and_their_status_codes(rest: TestClient, cloud: FakeSite) -> None:
    issue = rest.get("/api/jira/issues/SHOP-42", params={"max_tokens": 200})
    assert issue.status_code == 200
    body = issue.json()
    assert body["key"] == "SHOP-42" and body["truncated"] and body["tokens"] <= 200
    found = rest.get("/api/jira/search", params={"text": "refund", "open_only": "true"}).json()
    assert found["jql"].endswith("AND statusCategory != Done ORDER BY created DESC")
    pages = rest.get("/api/confluence/search", params={"q": "refund", "spaces": "ENG"}).json()
    assert pages["cql"].startswith('space in ("ENG") AND siteSearch ~ "refund"')
    page = rest.get("/api/confluence/pages/98765").json()
    assert page["page"]["space"] == "ENG" and page["page"]["version"] == 4
    missing = rest.get("/api/jira/issues/SHOP-999")
    assert missing.status_code == 404 and missing.json()["error"] == "remote_not_found"
    outside = rest.get("/api/confluence/search", params={"q": "refund", "spaces": "OPS"})
    assert outside.status_code == 400
    lower = rest.post("/api/bundle", json={"task": "", "issue": "shop-42", "max_tokens": 1500})
    assert lower.status_code == 200  # a key in any case is looked up, as /api/jira/issues takes it
    assert lower.json()["text"].startswith(
        "> tracker issue · SHOP-42\n\nSHOP-42: Partial refunds can exceed"
    )
    shaped = rest.post("/api/bundle", json={"task": "", "issue": "utf-8", "max_tokens": 1500})
    assert shaped.status_code == 200  # no issue UTF-8: the text as given, not a failed bundle
    assert "tracker issue · UTF-8" not in shaped.json()["text"]
    assert rest.post("/api/bundle", json={"task": "", "issue": "UTF-8"}).status_code == 404
    refused = rest.get("/api/jira/issues/SHOP-42", headers={**CALLER, "X-Atlassian-Token": "x"})
    assert refused.status_code == 400 and refused.json()["error"] == "query"  # the caller's
    assert "refused the credentials from the caller's X-Atlassian-Token header" in refused.text
    cloud.script(r"/search/jql$", 429, headers={"Retry-After": "0"}, times=2)
    limited = rest.get("/api/jira/search", params={"text": "refund"})
    assert limited.status_code == 429 and limited.json()["error"] == "rate_limited"
    assert limited.headers["Retry-After"] == "0"
    cloud.script(r"/search/jql$", 429, headers={"Retry-After": "3600"})
    later = rest.get("/api/jira/search", params={"text": "refund"})
    assert later.status_code == 429 and later.headers["Retry-After"] == "3600"  # the site's
    assert "asked to wait 3600 s, longer than jira.timeout_seconds" in later.json()["detail"]
    cloud.script(r"/search/jql$", 429, times=2)  # no Retry-After: none passed on
    unsaid = rest.get("/api/jira/search", params={"text": "refund"})
    assert unsaid.status_code == 429 and "Retry-After" not in unsaid.headers
    assert rest.get("/api/health").json()["status"] == "ok"  # the rest of briefd is unaffected


def test_a_caller_naming_its_account_without_a_token_is_not_served_as_the_service_account(
    rest: TestClient, cloud: FakeSite
) -> None:
    """A client whose X-Atlassian-Token is set from a variable that is unset (an MCP client's
    configured headers) sends it empty: the lookup ran as the service account, so the caller
    read what its own account may not see and never learnt its token was missing."""
    for headers in (
        {"X-Atlassian-Email": CALLER_EMAIL, "X-Atlassian-Token": ""},
        {"X-Atlassian-Email": CALLER_EMAIL},
        {"X-Confluence-Email": CALLER_EMAIL, "X-Confluence-Token": " "},
    ):
        page = rest.get("/api/confluence/pages/98765", headers=headers)
        assert page.status_code == 400, (headers, page.text)
        assert page.json()["error"] == "query"
        token = next(h for h in headers if h.endswith("Email")).replace("Email", "Token")
        assert page.json()["detail"] == (
            f"the request names its own Confluence account, but the caller's {token} header is "
            "missing or empty: send the account's token in it (Cloud: an API token with "
            "X-Atlassian-Email; Data Center: a personal access token), or leave the "
            "X-Atlassian-* (X-Confluence-*) headers out to be served as briefd's own account"
        )
    issue = rest.post("/api/bundle", json={"issue": "SHOP-42"}, headers={"X-Atlassian-Token": ""})
    assert issue.status_code == 400 and "its own Jira account" in issue.json()["detail"]
    assert cloud.seen == []  # nothing was read as the service account
    plain = rest.post("/api/bundle", json={"task": "refunds"}, headers={"X-Atlassian-Token": ""})
    assert plain.status_code == 200  # a bundle without an issue reads no account


def test_a_cloud_caller_sending_its_token_without_its_email_is_told_so_as_a_400(
    rest: TestClient, cloud: FakeSite
) -> None:
    """A caller's Cloud token without X-Atlassian-Email was refused before anything was sent,
    as a token left empty is, but answered 502, a failure of the site, where the empty token
    answered 400: the caller's headers are the caller's to fix."""
    alone = {"X-Atlassian-Token": CALLER_TOKEN}
    issue = rest.get("/api/jira/issues/SHOP-42", headers=alone)
    assert (issue.status_code, issue.json()) == (
        400,
        {
            "error": "query",
            "detail": "Jira Cloud needs the account's email with its API token, and the "
            "caller's X-Atlassian-Token header gave only a token; send X-Atlassian-Email too "
            "(Data Center personal access tokens: jira.deployment: datacenter)",
        },
    )
    bundle = rest.post("/api/bundle", json={"issue": "SHOP-42"}, headers=alone)
    assert bundle.status_code == 400 and bundle.json()["error"] == "query"
    assert cloud.seen == []


def test_a_retry_after_that_is_no_number_of_seconds_is_a_429_not_a_500(
    rest: TestClient, cloud: FakeSite
) -> None:
    """``Retry-After: 1e400`` (or ``inf``) parsed as infinity: the 429 was not retried, and
    REST's Retry-After header, ceil(inf), was an OverflowError, a 500."""
    cloud.script(r"/issue/SHOP-42$", 429, headers={"Retry-After": "1e400"}, times=2)
    limited = rest.get("/api/jira/issues/SHOP-42")
    assert limited.status_code == 429 and limited.json()["error"] == "rate_limited"
    assert limited.headers["Retry-After"] == "1"  # as for a wait it did not name
    assert cloud.paths() == ["GET /rest/api/3/issue/SHOP-42"] * 2  # waited once and retried
    cloud.script(r"/issue/SHOP-42$", 429, headers={"Retry-After": "inf"})
    again = rest.get("/api/jira/issues/SHOP-42")
    assert again.status_code == 200 and again.json()["key"] == "SHOP-42"


def test_a_filter_value_jira_does_not_know_is_400_on_rest_and_an_mcp_error(
    live_api: Briefd, rest: TestClient
) -> None:
    said = (
        "Jira answered 400 to POST /rest/api/3/search/jql: The value 'Nope' does not exist for "
        "the field 'status'."
    )
    refused = rest.get("/api/jira/search", params={"text": "refund", "status": "Nope"})
    assert refused.status_code == 400
    assert refused.json() == {"error": "query", "detail": said}

    async def body(client: Client) -> CallToolResult:
        return await client.call_tool("jira_search", {"text": "refund", "status": "Nope"})

    with serving(create_app(live_api, service_config())) as base:
        result = mcp(base + "/mcp", body, {})
    assert result.is_error and result.content[0].text == said  # type: ignore[union-attr]


def test_an_invalid_url_is_a_502_that_names_it_not_a_500(
    tmp_path: Path, example_copy: tuple[Path, Path], cloud: FakeSite
) -> None:
    source, template = example_copy
    shutil.copyfile(template, tmp_path / "index.db")
    settings = live_settings(source, tmp_path / "index.db", cloud)
    broken = dataclasses.replace(settings.jira, url="http://127.0.0.1:8O80")
    with (
        Briefd(dataclasses.replace(settings, jira=broken), embedder=None) as api,
        TestClient(create_app(api, service_config())) as http,
    ):
        http.headers.update({"Authorization": f"Bearer {TOKEN}", **CALLER})
        response = http.get("/api/jira/issues/SHOP-42")
    assert response.status_code == 502
    assert response.json() == {
        "error": "integration",
        "detail": "cannot send GET /rest/api/3/issue/SHOP-42 to Jira: the URL is invalid "
        "(Invalid port: '8O80'); check jira.url ('http://127.0.0.1:8O80')",
    }


def test_a_bundle_is_headed_by_the_live_issue_then_the_teams_rules(
    live_api: Briefd, cloud: FakeSite
) -> None:
    bundle = live_api.compile_bundle(BundleRequest("", max_tokens=2000, issue="SHOP-42"))
    first = bundle.items[0]
    assert first.tier == "mandatory" and first.title == "SHOP-42"
    assert bundle.text.startswith(  # the issue is named by its key, its text sent once
        "> tracker issue · SHOP-42\n\n"
        "SHOP-42: Partial refunds can exceed the captured amount\n\nBug · In Progress"
    )
    assert "- [Refund incident review](" in first.content and data.ISSUE_TEXT in first.content
    assert first.tokens <= 2000 * 0.35
    rules = [(i.doc_path, i.heading_path) for i in bundle.items[1:]]
    assert rules[0] == ("domain/refunds.md", ("Partial refunds",))
    assert all(i.tier != "mandatory" for i in bundle.items[1:])
    stored = live_api.store.read
    with stored() as conn:
        rows = conn.execute("SELECT task, content FROM bundles").fetchall()
    assert rows == []  # a live issue's text is never stored
    with pytest.raises(RemoteNotFoundError, match="Jira issue SHOP-999 does not exist"):
        live_api.compile_bundle(BundleRequest("fix it", issue="SHOP-999"))
    before = len(cloud.seen)
    text = live_api.compile_bundle(BundleRequest("", issue="SHOP-42 refunds race each other"))
    assert len(cloud.seen) == before  # issue text, not a key: used as given, no lookup
    assert text.items[0].content == "SHOP-42 refunds race each other"


def long_shop_42(cloud: FakeSite, steps: int) -> None:
    """SHOP-42 on the fake site with a description of ``steps`` paragraphs ("Step n: ledger
    row n was written twice.")."""
    html = "".join(f"<p>Step {n}: ledger row {n} was written twice.</p>" for n in range(steps))
    issue = {
        "id": "10042",
        "key": "SHOP-42",
        "fields": dict(data.SHOP_42_FIELDS),
        "renderedFields": {"description": html},
    }
    cloud.script(r"/issue/SHOP-42$", 200, body=issue)


def test_a_huge_live_issue_is_cut_to_its_share_of_a_hard_limit_below_max_tokens(
    rest: TestClient, cloud: FakeSite
) -> None:
    """B1, B7: a live issue's share was taken of max_tokens alone, so with hard_limit 1000
    under max_tokens 8000 a 11,000-token issue came at ~2,900 tokens and the bundle at ~3,000
    (budget_exceeded), as pasted issue text no longer does: its share is of the tighter."""
    long_shop_42(cloud, 800)
    asked = {"task": "partial refunds", "issue": "SHOP-42", "max_tokens": 8000}
    answer = rest.post("/api/bundle", json={**asked, "hard_limit": 1000})
    assert answer.status_code == 200, answer.text
    bundle = answer.json()
    text, tail = bundle["text"].partition("\n\n> domain/refunds.md")[::2]
    assert text.startswith("> tracker issue · SHOP-42\n\nSHOP-42: Partial refunds can exceed")
    assert "Step 0: ledger row 0 was written twice." in text
    assert text.endswith("; ask jira_issue with a larger max_tokens]")
    assert count_tokens(text) <= 1000 * 0.35
    assert [i["tier"] for i in bundle["items"]][:2] == ["mandatory", "ranked"]
    assert (
        "A payment can have any number of partial refunds." in tail
    )  # the team's section still fits beside the issue
    assert not bundle["budget_exceeded"] and bundle["tokens"] <= 1000
    assert count_tokens(answer.content.decode()) <= 1000


def test_an_issue_that_leaves_a_hard_limit_no_room_names_the_hard_limit_to_raise(
    live_api: Briefd,
) -> None:
    """B1, B7: with hard_limit 300 under max_tokens 2000 the live issue took the room, and
    the warning said 'of max_tokens 2000 … raise max_tokens (to 478 or more)': already more,
    and raising it changes nothing. It names the limit that binds, and raising it to the
    figure given lets a section in."""
    request = BundleRequest("", max_tokens=2000, hard_limit=300, issue="SHOP-42")
    crowded = live_api.compile_bundle(request)
    assert [i.tier for i in crowded.items] == ["mandatory"]
    (said,) = crowded.warnings
    assert said.startswith(
        f"the tracker issue takes {crowded.items[0].tokens} tokens of hard_limit 300, so no "
        "section that matched fits ("
    )
    assert "raise hard_limit (to " in said and said.endswith(" or more) or shorten the issue text")
    needed = int(said.rsplit("(to ", 1)[1].split(" ", 1)[0])
    roomy = live_api.compile_bundle(dataclasses.replace(request, hard_limit=needed))
    assert "domain/refunds.md" in {i.doc_path for i in roomy.items} and roomy.warnings == ()
    assert not roomy.diagnostics.budget_exceeded


def test_the_warning_of_an_issue_that_leaves_no_room_keeps_within_the_hard_limit(
    live_api: Briefd,
) -> None:
    """B6, B7: at hard_limit 200 the live issue (cut to its share) and the answer's envelope
    fit, but the warning saying the issue left no room for a section took the answer to 222
    tokens, budget_exceeded. Where the full warning does not fit, a shorter one says the
    same, as the 'fits no section' warning does."""
    bundle = live_api.compile_bundle(
        BundleRequest("", max_tokens=2000, hard_limit=200, issue="SHOP-42")
    )
    assert [i.tier for i in bundle.items] == ["mandatory"]
    assert bundle.warnings == (
        f"the tracker issue takes {bundle.items[0].tokens} tokens of hard_limit 200, so no "
        "section that matched fits; raise it",
    )
    assert bundle.tokens <= 200 and not bundle.diagnostics.budget_exceeded


@pytest.mark.parametrize("mode", ["markdown", "package"])
def test_a_live_issue_that_cannot_fit_a_small_hard_limit_is_left_out_and_said(
    rest: TestClient, mode: str
) -> None:
    """B1, B7: under hard_limit ~200 a live issue still came at its floor (its title and the
    cut marker) beside the answer's envelope: at hard_limit 100 the answer was 189 tokens,
    budget_exceeded, past the limit the user set. The issue that fits not even alone is left
    out, a warning names the limit (and the one that holds it, where that fits), and the
    answer stays within; at that limit the issue heads the bundle again."""
    asked = {"task": "partial refunds", "issue": "SHOP-42", "max_tokens": 2000, "mode": mode}
    said: list[str] = []
    for limit in (100, 150):
        answer = rest.post("/api/bundle", json={**asked, "hard_limit": limit})
        assert answer.status_code == 200, answer.text
        bundle = answer.json()
        assert bundle["tokens"] <= limit and count_tokens(answer.content.decode()) <= limit
        assert not bundle["budget_exceeded"] and bundle["items"] == []
        (warning,) = bundle["warnings"]
        assert warning.startswith("issue left out: ") and f"hard_limit {limit}" in warning
        said.append(warning)
    assert said[0] == "issue left out: over hard_limit 100"
    assert said[1].startswith("issue left out: the tracker issue needs ")
    needed = int(said[1].rsplit("(to ", 1)[1].split(" ", 1)[0])
    roomy = rest.post("/api/bundle", json={**asked, "hard_limit": needed}).json()
    assert roomy["items"][0]["chunk_id"].startswith("issue:") and roomy["tokens"] <= needed
    assert not roomy["budget_exceeded"]


def test_an_issues_browse_url_is_read_as_its_key(
    rest: TestClient, live_api: Briefd, cloud: FakeSite
) -> None:
    """B1, A2: the issue's address as a browser shows it (or Jira's "copy link"), passed as
    the issue, headed the bundle as text, and the bundle was about whatever its words matched
    (fees, for 'http 127 browse shop 42'); `briefd jira issue URL` said it is no key. A browse
    URL on jira.url is read as the key it ends in; one of another site stays text."""
    asked = {"task": "", "max_tokens": 1500}
    keyed = rest.post("/api/bundle", json={**asked, "issue": "SHOP-42"}).json()
    linked = f"{cloud.url}/browse/SHOP-42?focusedCommentId=10001#comment-10001"
    browsed = rest.post("/api/bundle", json={**asked, "issue": linked})
    assert browsed.status_code == 200, browsed.text
    assert browsed.json()["text"] == keyed["text"]
    assert keyed["text"].startswith("> tracker issue · SHOP-42\n\nSHOP-42: Partial refunds")
    issue = live_api.atlassian.jira_issue(f"{cloud.url}/browse/shop-42/", False, 2000, None)
    assert issue.text.markdown.startswith("# SHOP-42: Partial refunds can exceed the captured")
    before = len(cloud.seen)
    other = "https://jira.other.example/browse/SHOP-42"
    elsewhere = rest.post("/api/bundle", json={**asked, "issue": other})
    assert elsewhere.status_code == 200, elsewhere.text
    assert elsewhere.json()["text"].startswith(f"> tracker issue\n\n{other}\n")
    assert len(cloud.seen) == before  # another site's issue is not looked up here


def test_the_jira_issue_tool_reads_a_browse_url_as_its_key(
    live_api: Briefd, cloud: FakeSite
) -> None:
    """A2, I1: compile_bundle took an issue's browse URL as its key, but the jira_issue tool
    refused the same URL before any lookup ('String should have at most 40 characters'), so an
    agent handed a link by its user could not read the issue it names."""
    linked = f"{cloud.url}/browse/SHOP-42?focusedCommentId=10001#comment-10001"

    async def body(client: Client) -> CallToolResult:
        return await client.call_tool("jira_issue", {"key": linked, "comments": False})

    with serving(create_app(live_api, service_config())) as base:
        result = mcp(base + "/mcp", body, {})
    assert not result.is_error, result.content
    assert (result.structured_content or {})["markdown"].startswith("# SHOP-42: Partial refunds")


def test_a_huge_issue_is_converted_once_as_it_is_fetched(live_api: Briefd, cloud: FakeSite) -> None:
    """B1, O4: the issue's HTML (here 20 comments of CI logs, ~450 KB) was converted to
    Markdown when the bundle fitted it, under the server's lock: every search and bundle sent
    meanwhile waited seconds; and converted whole a second time for the 60 words the bundle
    searches with. It is converted as it is fetched (a server does that outside its lock),
    and the fit for a budget is kept: fitting it again costs nothing."""
    log = "".join(
        f"<p>[10:{i % 60:02d}] ERROR refund worker {i} retry failed</p>" for i in range(400)
    )
    said = [
        {"id": str(i), "author": {"displayName": "CI bot"}, "renderedBody": log}
        | {"created": f"2026-05-01T10:{i:02d}:00.000+0000"}
        for i in range(20)
    ]
    long_shop_42(cloud, 900)
    cloud.script(r"/issue/SHOP-42/comment$", 200, body={"comments": said, "total": 20})
    lookup = live_api.atlassian.prefetch("SHOP-42")
    first = lookup("SHOP-42", 600)
    assert first is not None and first[0].startswith("SHOP-42: Partial refunds")
    started = time.perf_counter()
    again = lookup("SHOP-42", 600)
    assert time.perf_counter() - started < 0.2  # kept, not converted again (that takes ~1 s)
    assert again is first
    words = "Step 0: ledger row 0 was written twice. Step 1: ledger row 1 was written twice."
    assert first[1].startswith(f"Partial refunds can exceed the captured amount {words}")
    assert len(first[1].split()) == len(data.SHOP_42_FIELDS["summary"].split()) + 60


def test_a_bundle_headed_by_a_live_issue_takes_usage_reports_and_serves_as_a_base(
    live_api: Briefd, cloud: FakeSite
) -> None:
    """Its text is never stored, but what it holds (ids and fingerprints) is: report_usage
    accepts its sections and base= gives a delta, as for any bundle."""
    request = BundleRequest("", max_tokens=2000, issue="SHOP-42")
    bundle = live_api.compile_bundle(request)
    ids = [i.chunk_id for i in bundle.items]
    assert ids[0].startswith("issue:")
    receipt = live_api.report_usage(bundle.bundle_id, ids[:2])
    assert receipt.useful_chunk_ids == tuple(ids[:2])
    again = live_api.compile_bundle(dataclasses.replace(request, base=bundle.bundle_id))
    assert not again.recovered and again.delta is not None
    assert [(e.op, e.chunk_id) for e in again.delta.entries] == [("reuse", i) for i in ids]
    with live_api.store.read() as conn:
        assert conn.execute("SELECT count(*) FROM bundles").fetchone()[0] == 0
        held = conn.execute("SELECT sections FROM bundle_manifests").fetchall()
    assert len(held) == 1 and data.ISSUE_TEXT not in held[0][0] and "SHOP-42" not in held[0][0]


def test_no_secret_page_or_issue_text_in_logs_query_log_or_metrics(
    live_api: Briefd, cloud: FakeSite, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    app = create_app(live_api, service_config())

    async def body(client: Client) -> None:
        await client.call_tool("jira_issue", {"key": "SHOP-42"})
        await client.call_tool("confluence_page", {"id": "98765"})
        await client.call_tool("compile_bundle", {"issue": "SHOP-42"})
        await client.call_tool("jira_issue", {"key": "SHOP-999"})

    with serving(app) as base:
        mcp(base + "/mcp", body, CALLER)
        auth = {"Authorization": f"Bearer {TOKEN}"}
        with httpx.Client(base_url=base, headers=auth, timeout=30) as http:
            assert http.get("/api/jira/issues/SHOP-42").status_code == 200
            bundle = http.post("/api/bundle", json={"task": "", "issue": "SHOP-42"})
            assert bundle.status_code == 200
            wrong = {**CALLER, "X-Atlassian-Token": "bad"}
            assert http.get("/api/confluence/pages/98765", headers=wrong).status_code == 400
            metrics = http.get("/metrics").text
    app.state.briefd.flush()
    queries = [f"{q.kind} {q.query} {q.client}" for q in live_api.state.recent_queries()]
    assert queries and all(q.startswith("bundle SHOP-42") for q in queries)
    assert 'name="jira_issue"' in metrics and 'name="confluence_page"' in metrics
    logged = "\n".join(f"{r.name} {r.getMessage()}" for r in caplog.records)
    assert logged  # something was logged (httpx at least), and none of it is secret
    for haystack in (logged, "\n".join(queries), metrics):
        for secret in (*SECRETS, "bad", CALLER_EMAIL, SERVICE_EMAIL, *TEXTS):
            if secret == "bad":
                assert "X-Atlassian-Token: bad" not in haystack
                continue
            assert secret not in haystack
        assert (
            base64.b64encode(f"{SERVICE_EMAIL}:{SERVICE_TOKEN}".encode()).decode() not in haystack
        )
    with live_api.store.read() as conn:
        dump = "\n".join(conn.iterdump())
    for secret in (*SECRETS, *TEXTS):
        assert secret not in dump


def test_a_bundle_whose_issue_lookup_fails_answers_a_documented_status(
    rest: TestClient, cloud: FakeSite
) -> None:
    """B1/I2: a bundle's live issue lookup fails as the Jira routes do (400 for a caller's
    refused token, 502, 429), and the OpenAPI entry of POST /api/bundle lists those statuses."""
    refused = rest.post(
        "/api/bundle", json={"issue": "SHOP-42"}, headers={**CALLER, "X-Atlassian-Token": "x"}
    )
    assert refused.status_code == 400 and refused.json()["error"] == "query"
    cloud.script(r"/issue/SHOP-42$", 500, body={"errorMessages": ["boom"], "errors": {}})
    failed = rest.post("/api/bundle", json={"issue": "SHOP-42"})
    assert failed.status_code == 502 and failed.json()["error"] == "integration"
    cloud.script(r"/issue/SHOP-42$", 429, headers={"Retry-After": "0"}, times=2)
    limited = rest.post("/api/bundle", json={"issue": "SHOP-42"})
    assert limited.status_code == 429 and limited.json()["error"] == "rate_limited"
    responses = rest.get("/openapi.json").json()["paths"]["/api/bundle"]["post"]["responses"]
    assert {"400", "429", "502"} <= set(responses)


def test_a_head_on_a_live_lookup_serves_no_tokens(rest: TestClient) -> None:
    """A HEAD on a live lookup route is answered as its GET, without the body: its tokens
    were counted as served. It counts as a request only."""
    lookups = ("/api/jira/issues/SHOP-42", "/api/confluence/pages/98765")

    def ask(method: str) -> tuple[float, list[float]]:
        for path in lookups:
            assert rest.request(method, path).status_code == 200
        stats = rest.get("/api/stats").json()
        rows = {(r["surface"], r["name"]): r["count"] for r in stats["requests"]}
        return stats["tokens_served"], [
            rows[("rest", n)] for n in ("jira_issue", "confluence_page")
        ]

    assert ask("HEAD") == (0, [1, 1])
    tokens, requests = ask("GET")
    assert tokens > 0 and requests == [2, 2]
