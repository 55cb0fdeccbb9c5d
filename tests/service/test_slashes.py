"""An address with a slash too many (``…/mcp/``, ``…/api/stats/``: copied from a browser,
typed into a client's settings) is sent on to its route by a relative redirect, so it stays
under the path a reverse proxy serves briefd at."""

from __future__ import annotations

import anyio
import httpx
import httpx2
import pytest
from fastapi.testclient import TestClient
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from briefd.api import Briefd
from briefd.service import create_app
from briefd.service.slashes import relative_location
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving
from tests.service.test_dashboard_browser import under_a_path

HEADERS = {"Authorization": f"Bearer {TOKEN}"}


def test_an_mcp_client_and_a_rest_caller_with_a_final_slash_stay_under_the_proxy_path(
    service_api: Briefd,
) -> None:
    """Behind a proxy serving briefd at /briefd, ``…/briefd/mcp/`` was redirected to the host's
    /mcp (Starlette names the root: ``Location: http://host/mcp``), another site's 404, so the
    MCP client never connected; ``…/briefd/api/stats/`` the same."""
    app = under_a_path(create_app(service_api, service_config()), "/briefd")
    with serving(app) as url:  # type: ignore[arg-type]
        stats = httpx.get(f"{url}/briefd/api/stats/", headers=HEADERS, follow_redirects=True)

        async def tools() -> set[str]:
            async with httpx2.AsyncClient(headers=HEADERS, timeout=30) as http:
                transport = streamable_http_client(f"{url}/briefd/mcp/", http_client=http)
                async with Client(transport, mode="legacy") as client:
                    return {tool.name for tool in (await client.list_tools()).tools}

        names = anyio.run(tools)
    assert stats.status_code == 200, stats.text
    assert stats.json()["index"]["documents"] == 45
    assert {"search_context", "compile_bundle"} <= names


@pytest.mark.parametrize(
    "asked, location",
    [
        ("/api/search/?q=refund%20window", "../search?q=refund%20window"),
        ("/mcp/", "../mcp"),
    ],
)
def test_the_redirect_is_relative_and_keeps_the_query(
    client: TestClient, asked: str, location: str
) -> None:
    answer = client.get(asked, follow_redirects=False)
    assert (answer.status_code, answer.headers["location"]) == (307, location)


def test_a_path_with_no_route_is_not_redirected_and_the_token_comes_first(
    service_api: Briefd,
) -> None:
    with TestClient(create_app(service_api, service_config())) as anonymous:
        unknown = anonymous.get("/nothing/", headers=HEADERS, follow_redirects=False)
        doubled = anonymous.get("/api/stats//", headers=HEADERS, follow_redirects=False)
        refused = anonymous.get("/api/stats/", follow_redirects=False)
    assert (unknown.status_code, doubled.status_code) == (404, 404)
    assert refused.status_code == 401  # a caller without the token learns nothing of routes


def test_relative_locations_resolve_to_the_route() -> None:
    assert relative_location("/docs/", b"") == "docs/"
    assert httpx.URL("https://h/briefd/docs").join("docs/").path == "/briefd/docs/"
    assert httpx.URL("https://h/briefd/api/stats/").join("../stats").path == "/briefd/api/stats"
