from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.errors import ConfigError
from briefd.retrieval.search import SearchRequest
from briefd.service import ServiceConfig, create_app
from briefd.service.app import ROUTERS
from briefd.service.config import check_bind
from tests.service.conftest import service_config, service_settings_for
from tests.service.live import TOKEN

MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}

# (method, path, JSON body) of every route that hands out or changes data.
PROTECTED = [
    ("GET", "/api/search?q=retry", None),
    ("POST", "/api/bundle", {"task": "retry"}),
    ("POST", "/api/usage", {"bundle_id": "x", "useful_chunk_ids": []}),
    ("GET", "/api/docs/domain/retry-policy.md", None),
    ("GET", "/api/scopes", None),
    ("GET", "/api/links/suggestions", None),
    ("GET", "/api/stats", None),
    ("POST", "/api/admin/rebuild", None),
    ("POST", "/api/admin/reset-counters", None),
    ("POST", "/api/admin/sync", None),
    ("GET", "/api/proposals", None),
    ("POST", "/api/proposals", {"doc_path": "domain/x.md"}),
    ("POST", "/mcp", LIST_TOOLS),
]


@pytest.fixture
def anonymous(service_api: Briefd) -> Iterator[TestClient]:
    with TestClient(create_app(service_api, service_config())) as http:
        yield http


@pytest.fixture(scope="module")
def refusing(
    tmp_path_factory: pytest.TempPathFactory, example_copy: tuple[Path, Path]
) -> Iterator[TestClient]:
    """One app for every request refused below (a hundred): a request refused for want of
    the token reads and changes nothing, so none of them needs an app of its own."""
    source, template = example_copy
    db = tmp_path_factory.mktemp("refusing") / "index.db"
    shutil.copyfile(template, db)
    with (
        Briefd(service_settings_for(source, db), embedder=None) as api,
        TestClient(create_app(api, service_config())) as http,
    ):
        yield http


@pytest.mark.parametrize(("method", "path", "body"), PROTECTED)
@pytest.mark.parametrize(
    "authorization", [None, "Bearer wrong-token", f"Basic {TOKEN}", "Bearer", f"bearer {TOKEN}x"]
)
def test_protected_routes_need_the_token(
    refusing: TestClient,
    method: str,
    path: str,
    body: object,
    authorization: str | None,
) -> None:
    headers = dict(MCP_HEADERS) if path == "/mcp" else {}
    if authorization is not None:
        headers["authorization"] = authorization
    response = refusing.request(method, path, json=body, headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Bearer realm="briefd"'
    detail = "missing or wrong bearer token; send 'Authorization: Bearer <BRIEFD_API_TOKEN>'"
    if path == "/mcp":  # a JSON-RPC error: what an MCP client shows
        said = {"code": -32600, "message": detail, "data": {"error": "unauthorized"}}
        assert response.json() == {"jsonrpc": "2.0", "id": None, "error": said}
    else:
        assert response.json() == {"error": "unauthorized", "detail": detail}


def test_every_route_in_the_schema_is_protected_or_deliberately_open(
    anonymous: TestClient,
) -> None:
    """Walks the app's own OpenAPI schema (plus /mcp), so a route added later is covered."""
    open_routes = {"/api/health", "/webhook/git"}  # the webhook is HMAC-signed instead
    schema = anonymous.get("/openapi.json", headers={"authorization": f"Bearer {TOKEN}"}).json()
    checked = []
    for path, operations in [*schema["paths"].items(), ("/mcp", {"post": {}})]:
        if path in open_routes:
            continue
        concrete = re.sub(r"\{[^}]+\}", "domain/retry-policy.md", path)
        for method in operations:
            response = anonymous.request(method.upper(), concrete, headers=MCP_HEADERS)
            assert response.status_code == 401, (method, path)
            checked.append(f"{method.upper()} {path}")
    assert {"GET /api/search", "POST /api/bundle", "POST /mcp", "GET /api/stats"} <= set(checked)
    assert len(checked) >= 15


def test_the_schema_declares_the_bearer_token_where_the_guard_asks_for_it(
    anonymous: TestClient,
) -> None:
    """Swagger's Authorize button (and a generated client's header) need a security scheme:
    each operation requires it exactly when the Guard refuses it without the token."""
    schema = anonymous.get("/openapi.json", headers={"authorization": f"Bearer {TOKEN}"}).json()
    scheme = schema["components"]["securitySchemes"]["bearerToken"]
    assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")
    marked, refused = set(), set()
    for path, operations in schema["paths"].items():
        concrete = re.sub(r"\{[^}]+\}", "domain/retry-policy.md", path)
        for method, operation in operations.items():
            if operation.get("security") == [{"bearerToken": []}]:
                marked.add(f"{method.upper()} {path}")
            response = anonymous.request(method.upper(), concrete, headers=MCP_HEADERS)
            if response.headers.get("www-authenticate") == 'Bearer realm="briefd"':
                refused.add(f"{method.upper()} {path}")
    assert marked == refused
    assert {"GET /api/search", "POST /api/bundle", "POST /api/admin/sync"} <= marked
    assert not {"GET /api/health", "POST /webhook/git"} & marked


def test_without_a_token_the_schema_asks_for_none(service_api: Briefd) -> None:
    with TestClient(create_app(service_api, service_config(token=None))) as http:
        schema = http.get("/openapi.json").json()
    assert "securitySchemes" not in schema.get("components", {})
    assert not [op for ops in schema["paths"].values() for op in ops.values() if "security" in op]


def test_the_token_opens_them(anonymous: TestClient) -> None:
    headers = {"authorization": f"Bearer {TOKEN}"}
    assert anonymous.get("/api/scopes", headers=headers).status_code == 200
    mcp = anonymous.post("/mcp", json=LIST_TOOLS, headers={**MCP_HEADERS, **headers})
    assert mcp.status_code == 200
    assert "search_context" in mcp.text


@pytest.mark.parametrize("path", ["/api/health", "/setup", "/"])
def test_open_routes(anonymous: TestClient, path: str) -> None:
    assert anonymous.get(path).status_code == 200


def test_the_health_probe_with_a_trailing_slash_is_open_with_a_token_as_without(
    anonymous: TestClient, service_api: Briefd
) -> None:
    """A probe configured as /api/health/ is sent on to /api/health whether or not a token is
    set, and answers 200 there; it never asks for the token."""
    with TestClient(create_app(service_api, service_config(token=None))) as tokenless:
        without = tokenless.get("/api/health/", follow_redirects=False)
    with_token = anonymous.get("/api/health/", follow_redirects=False)
    assert (with_token.status_code, with_token.headers.get("location")) == (
        without.status_code,
        without.headers.get("location"),
    )
    assert with_token.status_code == 307
    assert anonymous.get("/api/health/").json()["status"] == "ok"


def test_with_a_token_only_setup_health_and_the_empty_shell_answer(
    anonymous: TestClient, service_api: Briefd
) -> None:
    """Every route the app has (in its schema or not: /docs and its assets, /openapi.json,
    /metrics, the pages, /mcp, an unknown path), every method it takes, without the token:
    401, except /setup (and /setup/, sent to it), /api/health and the dashboard's shell, which
    carries no data."""
    routes = [(r.path, sorted(r.methods)) for router in ROUTERS for r in router.routes]
    routes += [
        ("/openapi.json", ["GET"]),
        ("/mcp", ["GET", "POST", "DELETE"]),
        ("/docs/assets/swagger-ui-bundle.js", ["GET"]),
        ("/setup/", ["GET"]),  # sent on to /setup by service/slashes.py
        ("/no/such/page", ["GET"]),
    ]
    answered = {}
    for path, methods in routes:
        concrete = re.sub(r"\{[^}]+\}", "domain/retry-policy.md", path)
        for method in methods:
            if method == "HEAD":
                continue
            response = anonymous.request(method, concrete, headers=MCP_HEADERS)
            answered[f"{method} {path}"] = response.status_code
    opened = {route for route, status in answered.items() if status != 401}
    assert opened == {"GET /", "GET /setup", "GET /setup/", "GET /api/health"}, answered
    slash = anonymous.get("/setup/", follow_redirects=False)  # the page's own address, no data
    assert (slash.status_code, slash.headers["location"]) == (307, "../setup")
    assert {"GET /docs", "GET /openapi.json", "GET /metrics", "POST /mcp"} <= set(answered)
    assert len(answered) >= 25

    shell = anonymous.get("/").text
    documents = {hit.doc_path for hit in service_api.search(SearchRequest("refund retry")).hits}
    assert documents and not any(path in shell for path in documents)
    assert 'id="token-input"' in shell  # it asks for the token


def test_metrics_can_be_left_open(service_api: Briefd) -> None:
    with TestClient(create_app(service_api, service_config(metrics_auth=False))) as http:
        assert http.get("/metrics").status_code == 200
        assert http.get("/openapi.json").status_code == 401


def test_metrics_need_the_token_as_prometheus_sends_it(anonymous: TestClient) -> None:
    assert anonymous.get("/metrics").status_code == 401
    ok = anonymous.get("/metrics", headers={"authorization": f"Bearer {TOKEN}"})
    assert ok.status_code == 200
    assert "briefd_index_documents 45.0" in ok.text


def test_without_a_token_loopback_is_open(service_api: Briefd) -> None:
    with TestClient(create_app(service_api, service_config(token=None))) as http:
        assert http.get("/api/scopes").status_code == 200


@pytest.mark.parametrize(
    "origin", ["http://evil.example", "http://127.0.0.1.evil.example:8484", "null", "file://"]
)
@pytest.mark.parametrize("path", ["/api/search?q=retry", "/mcp", "/api/health", "/"])
def test_foreign_origins_are_refused(client: TestClient, origin: str, path: str) -> None:
    headers = {"origin": origin, **(MCP_HEADERS if path == "/mcp" else {})}
    response = client.request(
        "POST" if path == "/mcp" else "GET",
        path,
        json=LIST_TOOLS if path == "/mcp" else None,
        headers=headers,
    )
    assert response.status_code == 403
    body = response.json()
    error = body["error"]["data"]["error"] if path == "/mcp" else body["error"]
    assert error == "forbidden_origin"


@pytest.mark.parametrize(
    "origin", ["http://testserver", "http://localhost:3000", "http://127.0.0.1:6274"]
)
def test_own_and_loopback_origins_pass(client: TestClient, origin: str) -> None:
    assert client.get("/api/scopes", headers={"origin": origin}).status_code == 200


def test_configured_origin_passes(service_api: Briefd) -> None:
    config = service_config(allowed_origins=("https://docs.example.com",))
    with TestClient(create_app(service_api, config)) as http:
        headers = {"origin": "https://docs.example.com", "authorization": f"Bearer {TOKEN}"}
        answered = http.get("/api/scopes", headers=headers)
        assert answered.status_code == 200
        assert answered.headers["access-control-allow-origin"] == "https://docs.example.com"
        asked = {  # the browser's preflight carries no token
            "origin": "https://docs.example.com",
            "access-control-request-method": "POST",
            "access-control-request-headers": "authorization, content-type",
        }
        preflight = http.options("/api/bundle", headers=asked)
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == "https://docs.example.com"
        assert "authorization" in preflight.headers["access-control-allow-headers"].lower()
        other = http.options("/api/bundle", headers={**asked, "origin": "https://evil.example"})
        assert "access-control-allow-origin" not in other.headers
        stolen = http.get("/api/scopes", headers={**headers, "origin": "https://evil.example"})
        assert stolen.status_code == 403


def test_a_preflight_from_another_origin_is_refused_as_its_requests_are(
    service_api: Briefd,
) -> None:
    """With serve.allowed_origins set, CORS answered another origin's preflight with a plain
    text 400 "Disallowed CORS origin"; its requests get the Guard's JSON 403 naming the fix."""
    config = service_config(allowed_origins=("https://docs.example.com",))
    with TestClient(create_app(service_api, config)) as http:
        evil = {"origin": "https://evil.example", "authorization": f"Bearer {TOKEN}"}
        request = http.get("/api/scopes", headers=evil)
        asked = {"origin": "https://evil.example", "access-control-request-method": "GET"}
        preflight = http.options("/api/scopes", headers=asked)
        allowed = http.options(
            "/api/scopes", headers={**asked, "origin": config.allowed_origins[0]}
        )
    assert (preflight.status_code, request.status_code) == (403, 403)
    assert preflight.headers["content-type"] == "application/json"
    assert (
        preflight.json()
        == request.json()
        == {
            "error": "forbidden_origin",
            "detail": "Origin 'https://evil.example' is not allowed; add it to serve.allowed_hosts"
            " / serve.allowed_origins in briefd.yaml if it is yours",
        }
    )
    assert "access-control-allow-origin" not in preflight.headers
    assert allowed.status_code == 200


def test_a_preflight_asking_for_a_method_or_header_not_allowed_is_refused_in_json(
    service_api: Briefd,
) -> None:
    """From an allowed origin, a preflight asking for a method or a request header CORS does
    not allow got Starlette's text/plain 400 "Disallowed CORS method" / "Disallowed CORS
    headers": no JSON, and no word of what is allowed. It is the service's JSON error now."""
    config = service_config(allowed_origins=("https://docs.example.com",))
    asked = {"origin": config.allowed_origins[0], "access-control-request-method": "PUT"}
    with TestClient(create_app(service_api, config)) as http:
        method = http.options("/api/scopes", headers=asked)
        header = http.options(
            "/api/scopes",
            headers={
                **asked,
                "access-control-request-method": "POST",
                "access-control-request-headers": "content-type, x-api-key",
            },
        )
        both = http.options(
            "/api/scopes", headers={**asked, "access-control-request-headers": "X-Trace,X-Span"}
        )
        private = http.options(
            "/api/scopes",
            headers={
                **asked,
                "access-control-request-method": "GET",
                "access-control-request-private-network": "true",
            },
        )
    allowed_headers = (
        "accept, accept-language, authorization, content-language, content-type, "
        "last-event-id, mcp-protocol-version, mcp-session-id, x-atlassian-email, "
        "x-atlassian-token, x-briefd-index, x-confluence-email, x-confluence-token"
    )
    assert [r.status_code for r in (method, header, both)] == [400] * 3
    assert {r.headers["content-type"] for r in (method, header, both)} == {"application/json"}
    assert method.json() == {
        "error": "cors_refused",
        "detail": "CORS preflight from https://docs.example.com refused: the method PUT is not "
        "allowed (allowed: GET, POST, DELETE)",
    }
    assert header.json() == {
        "error": "cors_refused",
        "detail": "CORS preflight from https://docs.example.com refused: the request header "
        f"x-api-key is not allowed (allowed: {allowed_headers})",
    }
    assert both.json()["detail"] == (
        "CORS preflight from https://docs.example.com refused: the method PUT is not allowed "
        "(allowed: GET, POST, DELETE); the request headers x-trace, x-span are not allowed "
        f"(allowed: {allowed_headers})"
    )
    assert (private.status_code, private.json()["detail"]) == (
        400,
        "CORS preflight from https://docs.example.com refused: private network access "
        "(Access-Control-Request-Private-Network) is not allowed",
    )
    assert method.headers["access-control-allow-methods"] == "GET, POST, DELETE"


def test_a_page_may_send_the_headers_briefd_reads_and_read_those_it_answers_with(
    service_api: Briefd,
) -> None:
    """A page on an allowed origin sending its own Atlassian account (X-Atlassian-* or the older
    X-Confluence-*) or the index a recall is for (X-Briefd-Index) had its preflight refused,
    and its code could not read Retry-After, X-Briefd-Recall or WWW-Authenticate."""
    config = service_config(allowed_origins=("https://docs.example.com",))
    sent = "X-Atlassian-Email, X-Atlassian-Token, X-Confluence-Email, X-Confluence-Token"
    asked = {
        "origin": "https://docs.example.com",
        "access-control-request-method": "POST",
        "access-control-request-headers": f"authorization, content-type, {sent}, X-Briefd-Index",
    }
    headers = {"origin": "https://docs.example.com", "authorization": f"Bearer {TOKEN}"}
    with TestClient(create_app(service_api, config)) as http:
        preflight = http.options("/api/confluence/search", headers=asked)
        answered = http.get("/api/scopes", headers=headers)
    assert preflight.status_code == 200, preflight.text
    allowed = preflight.headers["access-control-allow-headers"].lower()
    assert {"x-atlassian-email", "x-confluence-token", "x-briefd-index"} <= set(allowed.split(", "))
    exposed = answered.headers["access-control-expose-headers"].lower().split(", ")
    assert sorted(exposed) == [
        "mcp-session-id",
        "retry-after",
        "www-authenticate",
        "x-briefd-recall",
    ]
    with TestClient(create_app(service_api, service_config())) as http:  # the default: no CORS
        refused = http.options("/api/scopes", headers=asked)
    assert "access-control-allow-origin" not in refused.headers


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8484", "127.0.0.1.nip.io:8484"])
def test_dns_rebinding_hosts_are_refused(client: TestClient, host: str) -> None:
    response = client.get("/api/health", headers={"host": host})
    assert response.status_code == 421
    assert response.json()["error"] == "misdirected"


def test_loopback_hosts_pass(client: TestClient) -> None:
    for host in ("127.0.0.1:8484", "localhost:8484", "[::1]:8484", "localhost"):
        assert client.get("/api/health", headers={"host": host}).status_code == 200


@pytest.mark.parametrize(("bound", "host"), [("127.0.0.2", "127.0.0.2:8484"), ("::1", "[::1]")])
def test_the_bound_loopback_address_is_served(service_api: Briefd, bound: str, host: str) -> None:
    """``briefd serve --host 127.0.0.2`` prints http://127.0.0.2:8484 as its address: requests
    to it carry that Host and come from pages of that origin."""
    config = service_config(host=bound, allowed_hosts=(), token=None)
    with TestClient(create_app(service_api, config)) as http:
        page = {"host": host, "origin": f"http://{host}"}
        assert http.get("/api/scopes", headers=page).status_code == 200
        assert http.get("/api/scopes", headers={"host": "evil.example"}).status_code == 421


def test_binding_beyond_loopback_needs_a_token() -> None:
    with pytest.raises(ConfigError) as caught:
        check_bind(ServiceConfig(host="0.0.0.0"))
    assert str(caught.value) == (
        "refusing to bind 0.0.0.0 without a token: set BRIEFD_API_TOKEN to a long random "
        "secret, or bind 127.0.0.1 (the default)"
    )
    check_bind(ServiceConfig(host="0.0.0.0", token=TOKEN))
    check_bind(ServiceConfig(host="127.0.0.1"))
    check_bind(ServiceConfig(host="::1"))


def test_a_short_token_is_refused_beyond_loopback() -> None:
    """Failure 6 of issue 16: a one-character token was accepted for 0.0.0.0."""
    for token in ("x", "fifteen-chars-x"):
        with pytest.raises(ConfigError) as caught:
            check_bind(ServiceConfig(host="0.0.0.0", token=token))
        assert str(caught.value) == (
            f"refusing to bind 0.0.0.0 with a {len(token)}-character token: BRIEFD_API_TOKEN "
            "must have at least 16 characters there (e.g. the output of "
            "`python -c 'import secrets; print(secrets.token_urlsafe(32))'`)"
        )
    check_bind(ServiceConfig(host="0.0.0.0", token="sixteen-chars-xx"))
    check_bind(ServiceConfig(host="127.0.0.1", token="x"))  # this machine only: any token


def test_a_token_that_is_not_ascii_is_refused_at_start(service_api: Briefd) -> None:
    """A client sends ``Bearer tökén…`` as UTF-8 bytes, which the server reads back as other
    characters: the server started, and answered the right token 401 "wrong bearer token"."""
    token = "tökén-0123456789abcdef"
    with TestClient(create_app(service_api, service_config(token=token))) as http:
        sent = http.get("/api/scopes", headers={"authorization": f"Bearer {token}".encode()})
        assert sent.status_code == 401  # what every client got
    for host in ("127.0.0.1", "0.0.0.0"):
        with pytest.raises(ConfigError) as caught:
            check_bind(ServiceConfig(host=host, token=token))
        assert str(caught.value) == (
            "BRIEFD_API_TOKEN holds a character that is not ASCII (character 2): clients send it in an HTTP header, "
            "where it arrives as other bytes (every request would be refused as a wrong token); "
            "use letters, digits and punctuation (e.g. the output of "
            "`python -c 'import secrets; print(secrets.token_urlsafe(32))'`)"
        )


@pytest.mark.parametrize("host", ["0.0.0.0", "0", "::", "::0", "[::]"])
def test_every_spelling_of_every_interface_serves_any_host_name(
    service_api: Briefd, host: str
) -> None:
    """I3: `--host 0` and `--host ::0` (with a token) bound every interface, but the Host check
    took them for one named address: every client reaching the server by its name got 421."""
    config = service_config(host=host, allowed_hosts=())
    check_bind(config)
    with TestClient(create_app(service_api, config), base_url="http://kb.example.com:8484") as http:
        answer = http.get("/api/scopes", headers={"authorization": f"Bearer {TOKEN}"})
    assert answer.status_code == 200 and answer.json()["scopes"]
    assert "0" not in config.host_names and "[::0]" not in config.host_names


def test_token_comes_from_the_environment_only(service_api: Briefd) -> None:
    config = ServiceConfig.from_settings(
        service_api.settings.serve, env={"BRIEFD_API_TOKEN": " abc "}, port=9000
    )
    assert (config.token, config.port, config.host) == ("abc", 9000, "127.0.0.1")
    assert ServiceConfig.from_settings(service_api.settings.serve, env={}).token is None


def test_setup_page_never_contains_the_token(anonymous: TestClient) -> None:
    page = anonymous.get("/setup").text
    assert TOKEN not in page
    assert "claude mcp add --transport http briefd" in page
    assert "$BRIEFD_API_TOKEN" in page
    assert TOKEN not in anonymous.get("/").text
