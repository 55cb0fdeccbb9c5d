"""List arguments of the MCP tools read as REST reads ``?scopes=`` and ``?tags=`` for the same
request (comma lists, spaces around names, an empty entry: none), through the SDK's client."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from briefd.api import Briefd
from briefd.service import create_app
from tests.service.conftest import service_config
from tests.service.live import serving
from tests.service.test_mcp import run


@pytest.fixture
def url(service_api: Briefd) -> Iterator[str]:
    with serving(create_app(service_api, service_config())) as base:
        yield base + "/mcp"


def test_scopes_and_tags_read_as_rest_reads_them(url: str) -> None:
    async def body(client: Client) -> Any:
        calls = {
            "none": {"query": "refund window"},
            "empty": {"query": "refund window", "scopes": [""]},
            "comma": {"query": "refund window", "scopes": ["domain, projects/checkout"]},
            "spaced": {"query": "refund window", "scopes": [" domain ", "projects/checkout"]},
            "tags": {"query": "refund window", "tags": ["refunds, checkout"]},
        }
        found = {
            name: await client.call_tool("search_context", args) for name, args in calls.items()
        }
        found["document"] = await client.call_tool(
            "get_document", {"doc_path": "projects/checkout/overview.md", "scopes": [" all"]}
        )
        return found

    found = run(url, "auto", body)
    for name, result in found.items():
        assert not result.is_error, (name, result.content[0].text)
    scopes = {name: r.structured_content.get("scopes") for name, r in found.items()}
    assert scopes["empty"] == scopes["none"] == ["domain", "conventions"]
    assert scopes["comma"] == scopes["spaced"] == ["domain", "projects/checkout"]
    assert found["empty"].structured_content["hits"] == found["none"].structured_content["hits"]
    assert found["tags"].structured_content["hits"]  # two tags, not one named "refunds, checkout"
    assert found["document"].structured_content["path"] == "projects/checkout/overview.md"


def test_the_text_does_not_count_linked_sections_left_out_as_ranked(url: str) -> None:
    """``omitted`` counts every section left out, the related (linked) ones too: three ranked
    asked for, one kept, and "4 more ranked section(s)" was what the model read."""

    async def body(client: Client) -> Any:
        args = {"query": "refund window", "top_k": 3, "max_tokens": 600}
        return await client.call_tool("search_context", args)

    result = run(url, "auto", body)
    out = result.structured_content
    assert len(out["hits"]) == 1 and out["omitted"] > 2  # more than the two other ranked ones
    text = result.content[0].text
    assert "more ranked" not in text
    assert text.endswith(
        f"({out['omitted']} more section(s), ranked or linked to them, left out to stay in "
        "max_tokens)"
    )


def test_an_unknown_prompt_is_an_invalid_parameter_that_says_there_are_none(url: str) -> None:
    """The server lists no prompts; prompts/get of a name answered JSON-RPC error code 0
    (no such code) and logged a traceback on the server."""

    async def body(client: Client) -> Any:
        listed = await client.list_prompts()
        with pytest.raises(MCPError) as refused:
            await client.get_prompt("summarise")
        return listed.prompts, refused.value

    prompts, error = run(url, "auto", body)
    assert prompts == []
    assert (error.code, error.message) == (
        INVALID_PARAMS,
        "no prompt 'summarise' on this server; it has none",
    )
