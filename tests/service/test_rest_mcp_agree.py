"""The same request over REST and over MCP (the SDK's own client, real uvicorn): the same
answer, the same error, counted alike (I1, I2, I4)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp_types import CallToolResult

from briefd.api import Briefd
from briefd.service import create_app
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving
from tests.service.test_mcp import run

AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def base(service_api: Briefd) -> Iterator[str]:
    with serving(create_app(service_api, service_config())) as url:
        yield url


def rest(base: str, method: str, path: str, **options: Any) -> httpx2.Response:
    headers = {**AUTH, **options.pop("headers", {})}
    return httpx2.request(method, base + path, headers=headers, timeout=30, **options)


def requests_row(base: str, surface: str, name: str) -> dict[str, Any]:
    rows = rest(base, "GET", "/api/stats").json()["requests"]
    return next(r for r in rows if (r["surface"], r["name"]) == (surface, name))


def test_a_bundle_without_a_task_is_one_counted_error_on_both_surfaces(base: str) -> None:
    async def body(client: Client) -> CallToolResult:
        return await client.call_tool("compile_bundle", {"task_description": "  "})

    result = run(base + "/mcp", "legacy", body)
    answer = rest(base, "POST", "/api/bundle", json={"task": "  "})
    assert answer.status_code == 400
    assert result.is_error
    assert result.content[0].text == answer.json()["detail"]  # type: ignore[union-attr]
    for surface in ("mcp", "rest"):
        row = requests_row(base, surface, "compile_bundle")
        assert (row["count"], row["errors"], row["invalid"]) == (1, 1, 0), surface


def test_scopes_and_tags_in_a_body_are_read_as_the_tools_read_them(base: str) -> None:
    """A comma list and a blank entry mean on REST what they mean on MCP (and in ?scopes=)."""
    bundle = {"scopes": ["projects/ledger, domain", ""], "tags": ["refunds,ledger"]}

    async def body(client: Client) -> list[CallToolResult]:
        return [
            await client.call_tool(
                "compile_bundle", {"task_description": "refund ledger entries", **bundle}
            ),
            await client.call_tool("document_context", {"doc_path": "domain/refunds.md", **bundle}),
        ]

    tools = run(base + "/mcp", "legacy", body)
    answers = [
        rest(base, "POST", "/api/bundle", json={"task": "refund ledger entries", **bundle}),
        rest(base, "POST", "/api/context", json={"doc_path": "domain/refunds.md", **bundle}),
    ]
    for tool, answer in zip(tools, answers, strict=True):
        assert not tool.is_error, tool.content
        assert answer.status_code == 200, answer.text
        assert tool.structured_content is not None
        assert answer.json()["bundle_id"] == tool.structured_content["bundle_id"]
        assert answer.json()["text"] == tool.structured_content["text"]
    assert "projects/ledger" in answers[0].json()["text"]


def test_an_argument_a_tool_does_not_take_names_those_it_does(base: str) -> None:
    async def body(client: Client) -> CallToolResult:
        return await client.call_tool("list_scopes", {"scope": "domain"})

    result = run(base + "/mcp", "legacy", body)
    assert result.is_error
    assert result.content[0].text == (  # type: ignore[union-attr]
        "list_scopes: scope: not an argument of this tool (it takes limit, offset)"
    )


def test_a_body_nested_too_deep_to_read_says_so(base: str) -> None:
    answer = rest(
        base,
        "POST",
        "/api/bundle",
        content="[" * 100_000,
        headers={"Content-Type": "application/json"},
    )
    assert answer.status_code == 400
    assert answer.json() == {
        "error": "bad_request",
        "detail": "the JSON body nests deeper than the server reads; send one JSON object of "
        "the route's fields (see /docs)",
    }


def test_a_base_for_another_request_is_not_called_unknown(base: str) -> None:
    """B5: a base compiled for another task is known, just not comparable: the full bundle
    comes back marked recovered, and the text says why without calling the base unknown."""
    other = rest(base, "POST", "/api/bundle", json={"task": "chargeback evidence"}).json()

    async def body(client: Client) -> CallToolResult:
        arguments = {"task_description": "refund window", "base": other["bundle_id"]}
        return await client.call_tool("compile_bundle", arguments)

    result = run(base + "/mcp", "legacy", body)
    assert result.structured_content is not None and result.structured_content["recovered"]
    text = result.content[0].text  # type: ignore[union-attr]
    assert "base unknown:" not in text
    assert "base unknown or compiled for another request, full bundle" in text
    schema = rest(base, "GET", "/openapi.json").json()["components"]["schemas"]["BundleOut"]
    assert "another request" in schema["properties"]["recovered"]["description"]


def test_an_error_never_echoes_a_huge_value_back(base: str) -> None:
    """A 100,000-character scope, tag or chunk id is named by its head in the error, as a
    document path is, not sent back whole (REST and MCP share the words)."""
    huge = "x" * 100_000
    bundle = rest(base, "POST", "/api/bundle", json={"task": "refund"}).json()
    answers = [
        rest(base, "POST", "/api/bundle", json={"task": "refund", "scopes": [huge]}),
        rest(base, "POST", "/api/bundle", json={"task": "refund", "tags": [huge]}),
        rest(
            base,
            "POST",
            "/api/usage",
            json={"bundle_id": bundle["bundle_id"], "useful_chunk_ids": [huge]},
        ),
    ]

    async def body(client: Client) -> CallToolResult:
        arguments = {"doc_path": "domain/refunds.md", "scopes": [huge]}
        return await client.call_tool("get_document", arguments)

    tool = run(base + "/mcp", "legacy", body)
    for answer in answers:
        assert answer.status_code == 400
        detail = answer.json()["detail"]
        assert "x" * 200 + "…" in detail and len(detail) < 5000, detail[:300]
    assert tool.is_error
    assert len(tool.content[0].text) < 5000  # type: ignore[union-attr]


def test_a_bundle_takes_as_many_paths_on_both_surfaces(base: str) -> None:
    paths = [f"services/payment-gateway/internal/refunds/f{n}.go" for n in range(201)]

    async def body(client: Client) -> CallToolResult:
        arguments = {"task_description": "refund", "paths": paths}
        return await client.call_tool("compile_bundle", arguments)

    tool = run(base + "/mcp", "legacy", body)
    answer = rest(base, "POST", "/api/bundle", json={"task": "refund", "paths": paths})
    assert answer.status_code == 422
    assert tool.is_error
    assert tool.content[0].text == f"compile_bundle: {answer.json()['detail']}"  # type: ignore[union-attr]
    assert requests_row(base, "mcp", "compile_bundle")["invalid"] == 1


def test_a_search_takes_as_many_paths_as_a_bundle(base: str) -> None:
    """search_context read any number of paths (150,000 held every other request for seconds);
    it takes as many as compile_bundle and POST /api/bundle, refused alike and counted."""
    paths = [f"services/payment-gateway/internal/refunds/f{n}.go" for n in range(201)]

    async def body(client: Client) -> list[CallToolResult]:
        return [
            await client.call_tool("search_context", {"query": "refund", "paths": paths[:n]})
            for n in (201, 200)
        ]

    refused, answered = run(base + "/mcp", "legacy", body)
    assert refused.is_error
    assert refused.content[0].text == (  # type: ignore[union-attr]
        "search_context: paths: List should have at most 200 items after validation, not 201"
    )
    assert not answered.is_error and answered.structured_content["hits"]  # type: ignore[index]
    row = requests_row(base, "mcp", "search_context")
    assert (row["count"], row["invalid"]) == (2, 1)  # one answered, one refused


def test_a_proposal_while_proposals_are_off_is_said_alike(base: str) -> None:
    """The tool is not listed while proposals are off, but a client that calls it anyway is
    told what REST tells it (how to turn them on), not "Unknown tool", and it is counted."""
    change = {"doc_path": "domain/x.md", "change_description": "x", "new_content": "# X\n"}

    async def body(client: Client) -> CallToolResult:
        return await client.call_tool("propose_update", change)

    tool = run(base + "/mcp", "legacy", body)
    answer = rest(base, "POST", "/api/proposals", json=change)
    assert answer.status_code == 403
    assert tool.is_error
    assert tool.content[0].text == answer.json()["detail"]  # type: ignore[union-attr]
    for surface in ("mcp", "rest"):
        row = requests_row(base, surface, "propose_update")
        assert (row["count"], row["errors"]) == (1, 1), surface


def test_a_jira_or_confluence_tool_while_off_is_said_alike(base: str) -> None:
    """Listed only when configured: a client that calls jira_search or confluence_page anyway
    (the setup page and README name them) is told what REST tells it, counted, not "Unknown
    tool"; a name no tool has gets the tools there are."""

    async def body(client: Client) -> list[CallToolResult]:
        return [
            await client.call_tool("jira_search", {"jql": "project = SHOP"}),
            await client.call_tool("confluence_page", {"page": "123"}),
            await client.call_tool("search", {"query": "refund"}),
        ]

    jira, confluence, misspelt = run(base + "/mcp", "legacy", body)
    for tool, path in (
        (jira, "/api/jira/search?text=x"),
        (confluence, "/api/confluence/search?q=x"),
    ):
        answer = rest(base, "GET", path)
        assert answer.status_code == 404
        assert tool.is_error
        assert tool.content[0].text == answer.json()["detail"]  # type: ignore[union-attr]
    assert requests_row(base, "mcp", "jira_search")["errors"] == 1
    assert misspelt.is_error
    said = misspelt.content[0].text  # type: ignore[union-attr]
    assert said.startswith("no tool 'search' on this server; its tools: search_context, ")
    assert "report_usage" in said


def test_an_absolute_code_path_is_read_from_its_work_trees_root(base: str, tmp_path: Path) -> None:
    """Agents name files by absolute path (/home/dev/shop/tools/ledger-replay/main.go): read
    as a path from the root, it matched no anchored refs (tools/ledger-replay/**), and the
    governing document silently did not lead, over MCP and REST alike. A path in no work tree
    this server sees (another machine's) is read as written, as before."""
    shop = tmp_path / "shop"
    (shop / ".git").mkdir(parents=True)
    inside, elsewhere = str(shop / "tools/ledger-replay/main.go"), "/elsewhere/tools/x/main.go"

    async def body(client: Client) -> list[CallToolResult]:
        return [
            await client.call_tool(
                "compile_bundle",
                {
                    "task_description": "ledger posting",
                    "paths": [p],
                    "scopes": ["all"],
                    "mode": "manifest",
                },
            )
            for p in (inside, elsewhere)
        ]

    found, missed = run(base + "/mcp", "legacy", body)
    first = found.structured_content["items"][0]  # type: ignore[index]
    assert first["location"]["path"] == "projects/ledger/runbook.md", first
    assert first["reasons"][0].startswith("refs ") and "tools/ledger-replay/main.go" in str(
        first["reasons"]
    ), first
    assert "refs " not in str(missed.structured_content["items"])  # type: ignore[index]
    params = {"q": "ledger posting", "scopes": "all", "paths": inside}
    hits = rest(base, "GET", "/api/search", params=params).json()["hits"]
    assert hits[0]["doc_path"] == "projects/ledger/runbook.md"


def test_documents_governing_the_paths_in_scopes_not_requested_are_named(base: str) -> None:
    """The runbook governing tools/ledger-replay/** is in scope projects/ledger: a bundle or
    search of the default scopes left it out, and said so only in a bundle's verbose
    diagnostics, which MCP does not send — the agent never learned the document existed."""
    path = "tools/ledger-replay/main.go"
    warning = (
        "documents governing these paths are in scopes not requested (projects/ledger): "
        "projects/ledger/runbook.md (refs tools/ledger-replay/** covers "
        "tools/ledger-replay/main.go); add them to the requested scopes to get them"
    )

    async def body(client: Client) -> list[CallToolResult]:
        ask = {"task_description": "ledger posting", "paths": [path]}
        return [
            await client.call_tool("compile_bundle", ask),
            await client.call_tool("compile_bundle", {**ask, "scopes": ["all"]}),
            await client.call_tool("search_context", {"query": "ledger posting", "paths": [path]}),
        ]

    told, whole, searched = run(base + "/mcp", "legacy", body)
    assert f"Warning: {warning}" in told.content[0].text  # type: ignore[union-attr]
    assert told.structured_content["warnings"] == [warning]  # type: ignore[index]
    assert "warnings" not in whole.structured_content  # type: ignore[operator]
    assert searched.structured_content["warnings"] == [warning]  # type: ignore[index]
    params = {"q": "ledger posting", "paths": path}
    assert rest(base, "GET", "/api/search", params=params).json()["warnings"] == [warning]


def test_json_the_old_name_of_package_is_read_on_every_surface(base: str) -> None:
    """``briefd bundle --mode json`` always meant package; REST and MCP refused it (422)."""
    task, doc = {"task": "refund a partial payment"}, {"doc_path": "domain/refunds.md"}

    async def body(client: Client) -> list[CallToolResult]:
        bundle = {"task_description": task["task"]}
        return [
            await client.call_tool("compile_bundle", {**bundle, "mode": "json"}),
            await client.call_tool("document_context", {**doc, "mode": "json"}),
            await client.call_tool("compile_bundle", {**bundle, "format": "json"}),
        ]

    old_bundle, old_context, formatted = run(base + "/mcp", "legacy", body)
    answers = {
        "bundle": rest(base, "POST", "/api/bundle", json={**task, "mode": "json"}),
        "context": rest(base, "POST", "/api/context", json={**doc, "mode": "json"}),
        "context format": rest(base, "POST", "/api/context", json={**doc, "format": "json"}),
    }
    package = {
        "bundle": rest(base, "POST", "/api/bundle", json={**task, "mode": "package"}).json(),
        "context": rest(base, "POST", "/api/context", json={**doc, "mode": "package"}).json(),
    }
    for name, answer in answers.items():
        assert answer.status_code == 200, (name, answer.text)
        assert answer.json()["mode"] == "package"
        assert answer.json()["bundle_id"] == package[name.split()[0]]["bundle_id"]
    for name, tool in (("bundle", old_bundle), ("context", old_context)):
        assert not tool.is_error, tool.content
        assert tool.structured_content is not None
        assert tool.structured_content["bundle_id"] == package[name]["bundle_id"]
    assert formatted.is_error
    said = formatted.content[0].text  # type: ignore[union-attr]
    assert said.startswith(
        "compile_bundle: format: not an argument of this tool, send mode (format is its old "
        "name over REST and the CLI)"
    ), said
    clash = rest(base, "POST", "/api/context", json={**doc, "format": "manifest", "mode": "json"})
    assert clash.status_code == 422
    assert clash.json()["detail"] == (
        "mode 'package' and format 'manifest' (its old name) disagree; send mode only"
    )
