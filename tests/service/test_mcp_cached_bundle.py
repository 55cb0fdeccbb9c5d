"""What compile_bundle's description promises of a repeated call (B3) is what a repeated call
answers: the same bundle_id and the same sections, byte for byte, and only ``cached`` (in the
structured result, and in the text's closing line or JSON) saying it came from the cache."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client

from briefd.api import Briefd
from briefd.service import create_app
from tests.service.conftest import service_config
from tests.service.live import serving
from tests.service.test_mcp import run

TASK = "add partial refunds to the payment gateway"


@pytest.fixture
def url(service_api: Briefd) -> Iterator[str]:
    with serving(create_app(service_api, service_config())) as base:
        yield base + "/mcp"


def test_a_repeated_bundle_differs_only_where_the_description_says(url: str) -> None:
    async def body(client: Client) -> Any:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        answers = {}
        for mode in ("markdown", "package"):
            args = {"task_description": TASK, "max_tokens": 1500, "mode": mode}
            first = await client.call_tool("compile_bundle", args)
            again = await client.call_tool("compile_bundle", args)
            answers[mode] = (first, again)
        return tools["compile_bundle"].description, answers

    description, answers = run(url, "auto", body)
    assert len(description.encode()) < 2048
    assert "cached" in description and "same bytes and bundle_id" not in description
    first, again = answers["markdown"]
    one, two = dict(first.structured_content), dict(again.structured_content)
    assert (one.pop("cached"), two.pop("cached")) == (False, True)
    assert one == two and one["text"]
    head, _, tail = first.content[0].text.rpartition("\n(")
    assert again.content[0].text.startswith(head + "\n(")
    assert again.content[0].text.endswith(tail.replace(" tokens", " tokens, cached"))
    first, again = answers["package"]
    one, two = json.loads(first.content[0].text), json.loads(again.content[0].text)
    assert (one.pop("cached"), two.pop("cached")) == (False, True)
    assert one == two and one["items"]
