"""The knowledge-health reports read what was just answered (T3, T6): a search and then
``knowledge_usage`` / ``knowledge_gaps`` in one session, over stdio (``briefd mcp``) and HTTP
(MCP and REST), count that search, rather than waiting for the periodic flush of the query log
and saying meanwhile that nothing was logged."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from mcp import Client

from briefd.api import Briefd
from briefd.service import create_app
from briefd.settings import Settings
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving
from tests.service.test_mcp import run
from tests.service.test_stdio import session, stdio

QUERY = "refund a captured payment"
SINCE = r"Since \d{4}-\d\d-\d\d \d\d:\d\d UTC"


async def _search_then_report(client: Client) -> tuple[Any, Any]:
    await client.call_tool("search_context", {"query": QUERY})
    usage = await client.call_tool("knowledge_usage", {})
    gaps = await client.call_tool("knowledge_gaps", {})
    return usage, gaps


def _check(usage: Any, gaps: Any) -> None:
    first = usage.content[0].text.splitlines()[0]
    assert re.fullmatch(
        SINCE + r": 1 request\(s\) \(1 mcp\); 0 usage report\(s\), 0 said nothing helped\.", first
    ), first
    assert usage.structured_content["requests"] == 1
    assert gaps.structured_content["groups"] == 1  # the search, as one group of queries
    assert "Nothing was logged" not in gaps.content[0].text


def test_stdio_reports_count_the_search_just_answered(
    service_settings: Settings, tmp_path: Path
) -> None:
    params = stdio(service_settings, tmp_path, "--no-index")
    usage, gaps = session(params, "legacy", _search_then_report)
    _check(usage, gaps)


def test_http_reports_count_the_search_just_answered(service_api: Briefd) -> None:
    config = service_config(flush_seconds=3600)  # the periodic flush never comes in the test
    with serving(create_app(service_api, config)) as base:
        usage, gaps = run(base + "/mcp", "auto", _search_then_report)
    _check(usage, gaps)
    with TestClient(create_app(service_api, config)) as http:
        http.headers["Authorization"] = f"Bearer {TOKEN}"
        assert http.get("/api/search", params={"q": "chargeback evidence"}).status_code == 200
        assert http.get("/api/usage").json()["surfaces"] == {"mcp": 1, "rest": 1}
        assert http.get("/api/gaps").json()["groups"] == 2
