"""HEAD wherever GET is allowed: same status and headers, no body, the token asked for as on
GET (a monitor's ``curl -I`` got 405 from every route)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.service import create_app
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving

AUTH = {"authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def anonymous(service_api: Briefd) -> Iterator[TestClient]:
    with TestClient(create_app(service_api, service_config())) as http:
        yield http


@pytest.mark.parametrize(
    ("path", "headers"),
    [
        ("/", {}),
        ("/setup", {}),
        ("/api/scopes", AUTH),
        ("/api/docs/domain/retry-policy.md", AUTH),
        ("/openapi.json", AUTH),
    ],
)
def test_head_answers_as_get_without_a_body(
    anonymous: TestClient, path: str, headers: dict[str, str]
) -> None:
    got = anonymous.get(path, headers=headers)
    head = anonymous.head(path, headers=headers)
    assert (head.status_code, got.status_code) == (200, 200)
    assert head.content == b""
    assert head.headers["content-type"] == got.headers["content-type"]
    assert head.headers["content-length"] == got.headers["content-length"]


def test_head_on_a_protected_route_needs_the_token(anonymous: TestClient) -> None:
    head = anonymous.head("/api/stats")
    assert head.status_code == 401
    assert head.headers["www-authenticate"] == 'Bearer realm="briefd"'
    assert head.content == b""


def test_head_where_only_post_is_allowed_is_refused_naming_the_method(
    anonymous: TestClient,
) -> None:
    head = anonymous.head("/api/bundle", headers=AUTH)
    assert head.status_code == 405
    assert head.headers["allow"] == "POST"


def test_head_over_real_http(service_api: Briefd) -> None:
    with serving(create_app(service_api, service_config())) as url:
        got = httpx.get(url + "/")
        head = httpx.head(url + "/")
        health = httpx.head(url + "/api/health")  # a monitor's probe
        refused = httpx.head(url + "/api/scopes")
    assert head.status_code == 200
    assert head.headers["content-length"] == got.headers["content-length"]
    assert head.content == b""
    assert (health.status_code, health.headers["content-type"]) == (200, "application/json")
    assert refused.status_code == 401


def test_a_head_serves_nobody_and_stays_out_of_the_query_log(client: TestClient) -> None:
    """A HEAD on /api/search ran as the GET it stands for and was bookkept as one: its query
    in the query log (gaps, usage, the daily charts) and its tokens served, as on a document
    read, though nobody was sent a byte. It counts as a request only."""
    state = client.app.state.briefd  # type: ignore[attr-defined]
    asked = ("purple elephant onboarding", "retry policy")
    doc = "/api/docs/domain/retry-policy.md"

    def ask(method: str) -> dict[str, Any]:
        for query in asked:
            params = {"q": query, "client": "claude-code", "scopes": "all"}
            assert client.request(method, "/api/search", params=params).status_code == 200
        assert client.request(method, doc).status_code == 200
        state.flush()
        stats = client.get("/api/stats").json()
        rows = {(r["surface"], r["name"]): r for r in stats["requests"]}
        return {
            "tokens": stats["tokens_served"],
            "gaps": [g["query"] for g in client.get("/api/gaps").json()["gaps"]],
            "usage": client.get("/api/usage").json()["requests"],
            "requests": [rows[("rest", name)]["count"] for name in ("search", "get_document")],
        }

    assert ask("HEAD") == {"tokens": 0, "gaps": [], "usage": 0, "requests": [2, 1]}
    got = ask("GET")
    assert got["tokens"] > 0 and got["usage"] == 2 and got["requests"] == [4, 2]
    assert got["gaps"] == ["purple elephant onboarding"]
