"""O1, I1, I2: ``search.top_k`` in briefd.yaml is the number of hits a search returns when the
request names none — over REST and MCP too, not only on the command line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx2
from fastapi.testclient import TestClient
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from briefd.api import Briefd
from briefd.service import create_app
from briefd.settings import with_overrides
from tests.service.conftest import service_config, service_settings_for
from tests.service.live import TOKEN, serving

QUERY = "retry soft decline issuer"  # many sections of the example match it
BIG = 50_000  # a budget every hit fits in: top_k alone bounds the answer


def _ranked(hits: list[dict[str, Any]], omitted: int) -> int:
    """Ranked hits the answer counts: direct hits shown plus those left out for the budget."""
    return sum(hit["related_to"] is None for hit in hits) + omitted


def test_search_top_k_from_the_settings_bounds_rest_and_mcp_answers(
    tmp_path: Path, example_copy: tuple[Path, Path]
) -> None:
    source, template = example_copy
    db = tmp_path / "index.db"
    db.write_bytes(template.read_bytes())
    settings = with_overrides(service_settings_for(source, db), {"search.top_k": 3})
    with Briefd(settings, embedder=None) as api:
        app = create_app(api, service_config())
        with TestClient(app) as http:
            http.headers["Authorization"] = f"Bearer {TOKEN}"
            body = http.get("/api/search", params={"q": QUERY, "max_tokens": BIG}).json()
            assert _ranked(body["hits"], body["omitted"]) == 3, body
            asked = http.get("/api/search", params={"q": QUERY, "max_tokens": BIG, "top_k": 5})
            assert _ranked(asked.json()["hits"], asked.json()["omitted"]) == 5

        async def mcp(url: str) -> dict[str, Any]:
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with (
                httpx2.AsyncClient(headers=headers, timeout=30) as client,
                Client(streamable_http_client(url, http_client=client)) as session,
            ):
                arguments = {"query": QUERY, "max_tokens": BIG}
                result = await session.call_tool("search_context", arguments)
                assert not result.is_error, result.content
                assert result.structured_content is not None
                out: dict[str, Any] = result.structured_content
                return out

        with serving(create_app(api, service_config())) as base:
            out = anyio.run(mcp, base + "/mcp")
        assert _ranked(out["hits"], out["omitted"]) == 3, out
