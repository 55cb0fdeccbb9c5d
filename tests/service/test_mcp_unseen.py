"""MCP text (I1, R1): what a request held is repeated visibly, never as raw control codes."""

from __future__ import annotations

from typing import Any

from mcp import Client

from briefd.api import Briefd
from briefd.service import create_app
from tests.service.conftest import service_config
from tests.service.live import serving
from tests.service.test_mcp import run

ODD = "\x00\x1b[2J\u202e"  # a NUL, a terminal's clear-screen, a right-to-left override
SHOWN = "\\x00\\x1b[2J\\u202e"


def test_control_characters_of_a_request_are_shown_escaped_in_the_text(
    service_api: Briefd,
) -> None:
    """A NUL or a terminal escape in a query, a path or a scope came back in the text the
    model reads as it was sent ("No knowledge matches 'zzqx\\x00\\x1b[31m…'" with the raw
    bytes); the text now writes them as escapes, and the structured content still holds the
    query as sent."""
    calls = [
        ("search_context", {"query": f"zzqxv wibblor{ODD}"}),
        ("search_context", {"query": f"refunds{ODD}"}),
        ("document_context", {"doc_path": f"domain/nope{ODD}.md"}),
        ("search_context", {"query": "refunds", "scopes": [f"dom{ODD}"]}),
    ]

    async def body(client: Client) -> list[Any]:
        return [await client.call_tool(name, args) for name, args in calls]

    with serving(create_app(service_api, service_config())) as base:
        empty, found, missing, scope = run(base + "/mcp", "auto", body)
    texts = [r.content[0].text for r in (empty, found, missing, scope)]
    assert texts[0].startswith(f"No knowledge matches 'zzqxv wibblor{SHOWN}' in scopes ")
    assert texts[1].startswith(f"section(s) for 'refunds{SHOWN}' (", texts[1].index(" ") + 1)
    assert texts[2].startswith(f"no document 'domain/nope{SHOWN}.md' in scopes ")
    assert texts[3].startswith(f"scope 'dom{SHOWN}' does not exist; known scopes: ")
    assert missing.is_error and scope.is_error and not found.is_error
    assert not any(c in text for text in texts for c in "\x00\x1b\u202e")
    assert found.structured_content["query"] == f"refunds{ODD}"
