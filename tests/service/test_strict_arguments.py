"""A count sent as a JSON boolean is refused naming the field, on every REST body and every MCP
tool (pydantic's lax mode took ``true`` as a budget of 1 token); a count sent as JSON text or as
``500.0`` is still read, as agents' tool calls send them, and query parameters still parse."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp import Client

from briefd.api import Briefd
from briefd.service import create_app
from tests.service.conftest import service_config
from tests.service.live import serving
from tests.service.test_mcp import run

WRONG: dict[str, tuple[bool, ...]] = {"integer": (True, False)}


def typed_fields(schema: dict[str, Any]) -> dict[str, str]:
    """The integer properties of an object schema (``T | None`` included)."""
    found: dict[str, str] = {}
    for name, prop in schema.get("properties", {}).items():
        kinds = [prop.get("type")] + [option.get("type") for option in prop.get("anyOf", [])]
        kind = next((k for k in kinds if k in WRONG), None)
        if kind is not None:
            found[name] = kind
    return found


def required(schema: dict[str, Any]) -> dict[str, object]:
    """A string for every required property (the type check comes first either way)."""
    return dict.fromkeys(schema.get("required", []), "domain/refunds.md")


def test_every_rest_body_refuses_a_count_sent_as_a_flag(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    defs = spec["components"]["schemas"]
    checked = []
    for path, methods in spec["paths"].items():
        for method, operation in methods.items():
            content = operation.get("requestBody", {}).get("content", {})
            ref = content.get("application/json", {}).get("schema", {}).get("$ref")
            if ref is None:
                continue
            schema = defs[ref.rsplit("/", 1)[1]]
            for field, kind in typed_fields(schema).items():
                for value in WRONG[kind]:
                    body = {**required(schema), field: value}
                    response = client.request(method, path, json=body)
                    assert response.status_code == 422, (path, field, value, response.text)
                    said = f"{field}: Input should be a number, not {str(value).lower()}"
                    assert said in response.json()["detail"], response.text
                checked.append((path, field))
    assert ("/api/bundle", "max_tokens") in checked and ("/api/context", "hard_limit") in checked
    for budget in (500, "500", 500.0):
        good = client.post("/api/bundle", json={"task": "refund", "max_tokens": budget})
        assert good.status_code == 200, good.text
        assert good.json()["budget"] == 500, good.text
    query = client.get("/api/search", params={"q": "refund", "max_tokens": "500", "top_k": "3"})
    assert query.status_code == 200, query.text  # a query string is text: "500" is 500


@pytest.fixture
def url(service_api: Briefd) -> Iterator[str]:
    with serving(create_app(service_api, service_config())) as base:
        yield base + "/mcp"


def test_every_mcp_tool_refuses_a_count_sent_as_a_flag(url: str) -> None:
    async def body(client: Client) -> Any:
        said: list[tuple[str, str, str, bool, str]] = []
        for tool in (await client.list_tools()).tools:
            for field, kind in typed_fields(tool.input_schema).items():
                for value in WRONG[kind]:
                    arguments = {**required(tool.input_schema), field: value}
                    result = await client.call_tool(tool.name, arguments)
                    text = result.content[0].text  # type: ignore[union-attr]
                    said.append((tool.name, field, kind, result.is_error, text))
        fine = [
            await client.call_tool(
                "search_context", {"query": "refund", "max_tokens": budget, "scopes": '["all"]'}
            )
            for budget in (500, "500", 500.0)
        ]
        return said, fine

    said, fine = run(url, "auto", body)
    for name, field, _kind, is_error, text in said:
        assert is_error, (name, field, text)
        assert text.startswith(f"{name}: {field}: Input should be a number, not "), text
    tools = {(name, field) for name, field, *_ in said}
    assert {("search_context", "max_tokens"), ("search_context", "top_k")} <= tools
    assert ("knowledge_gaps", "limit") in tools
    for answer in fine:  # a list sent as JSON text is still unwrapped, "500" is still 500
        assert not answer.is_error, answer.content
        assert "refund" in answer.content[0].text.lower()  # type: ignore[union-attr]


def test_one_scope_tag_or_path_sent_as_a_string_is_read_as_a_list_of_one(url: str) -> None:
    """`scopes` is described as names 'or 'all'': agents send `"scopes": "all"` (or one tag,
    one path) as a string, and were told only 'scopes: Input should be a valid list'. One
    string is read as a list of one, as `?scopes=all` is over REST; the schemas still say
    list."""

    async def body(client: Client) -> Any:
        tools = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
        every = await client.call_tool("search_context", {"query": "refund", "scopes": "all"})
        listed = await client.call_tool("search_context", {"query": "refund", "scopes": ["all"]})
        tagged = await client.call_tool(
            "compile_bundle",
            {"task_description": "refund", "tags": "refunds", "paths": "src/refunds.py"},
        )
        return tools, every, listed, tagged

    tools, every, listed, tagged = run(url, "auto", body)
    assert tools["search_context"]["properties"]["scopes"]["anyOf"][0]["type"] == "array"
    assert not every.is_error, every.content
    assert every.structured_content["scopes"] == listed.structured_content["scopes"]
    assert "projects/checkout" in every.structured_content["scopes"]
    assert not tagged.is_error, tagged.content
    assert tagged.structured_content["items"]
