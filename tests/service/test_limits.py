"""Failure 4 of issue 16: unbounded input on open routes, against the app on a real uvicorn
(``briefd serve``'s protocol) over real sockets. Bodies are refused from ``Content-Length``
and while streaming, before the webhook's HMAC; signed deliveries are not accepted twice;
``session_id`` is at most 256 characters; a 1 MB URL is answered 414; open MCP event streams
are capped."""

from __future__ import annotations

import contextlib
import json
import socket
import sqlite3
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import replace
from urllib.parse import urlsplit

import anyio
import httpx
import pytest
from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.service import create_app
from briefd.settings import Settings, with_overrides
from briefd.sync.webhook import signature
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving

SECRET = "webhook-secret-16-chars"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
LIMIT = 4 * 1024 * 1024  # serve.max_body_bytes by default
STREAMS = 16  # serve.max_streams by default


@pytest.fixture
def url(service_settings: Settings) -> Iterator[str]:
    settings = with_overrides(service_settings, {"sync.webhook_secret": SECRET, "sync.interval": 0})
    api = Briefd(settings, embedder=None)
    with api, serving(create_app(api, service_config())) as base:  # the default limits
        yield base


def raw(base: str, request: bytes, timeout: float = 10) -> bytes:
    """Send ``request`` as it is and read the answer until the server closes or goes quiet."""
    address = urlsplit(base)
    with socket.create_connection((address.hostname, address.port), timeout=timeout) as sock:
        sock.sendall(request)
        answer = b""
        while b"\r\n\r\n" not in answer or len(answer) < answer.find(b"\r\n\r\n") + 4 + 10:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
        return answer


def test_a_declared_400_mb_webhook_body_is_refused_before_it_is_read(url: str) -> None:
    started = time.monotonic()
    answer = raw(
        url,
        b"POST /webhook/git HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: 400000000\r\n\r\n{",
    )
    assert answer.startswith(b"HTTP/1.1 413 ")
    body = json.loads(answer.split(b"\r\n\r\n", 1)[1])
    assert body == {
        "error": "too_large",
        "detail": f"the request body is over {LIMIT} bytes (serve.max_body_bytes); send less, "
        "or raise the limit on the server",
    }
    assert time.monotonic() - started < 5


def test_a_streamed_webhook_body_is_refused_at_the_limit(url: str) -> None:
    """No Content-Length (chunked): the body is counted as it arrives."""
    chunk = b" " * 16384
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(300)) + b"0\r\n\r\n"
    head = (
        b"POST /webhook/git HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
    )
    assert raw(url, head + body).startswith(b"HTTP/1.1 413 ")


def test_the_body_is_read_no_further_than_the_limit() -> None:
    """At the ASGI level: the middleware stops pulling chunks once past the limit, answers
    413, and the route never runs."""
    from briefd.service.limits import Limits

    pulled, answered, reached = 0, [], []

    async def receive() -> dict[str, object]:
        nonlocal pulled
        pulled += 1
        return {"type": "http.request", "body": b" " * 16384, "more_body": pulled < 1000}

    async def send(message: dict[str, object]) -> None:
        answered.append(message)

    async def route(scope: object, receive: object, send: object) -> None:
        reached.append(scope)

    scope = {"type": "http", "method": "POST", "path": "/webhook/git", "headers": []}
    limits = Limits(route, service_config(max_body_bytes=64 * 1024))
    anyio.run(limits, scope, receive, send)
    assert pulled == 64 * 1024 // 16384 + 1
    assert answered[0]["status"] == 413 and reached == []


def test_signed_deliveries_are_not_accepted_twice(url: str) -> None:
    def deliver(body: bytes, delivery: str) -> httpx.Response:
        headers = {
            "X-Hub-Signature-256": signature(SECRET, body),
            "X-GitHub-Delivery": delivery,
            "X-GitHub-Event": "push",
            "Content-Type": "application/json",
        }
        return httpx.post(url + "/webhook/git", content=body, headers=headers)

    push = json.dumps({"ref": "refs/heads/main", "repository": {"pushed_at": int(time.time())}})
    first = deliver(push.encode(), "72d3162e-cc78-11e3-81ab-4c9367dc0958")
    assert first.status_code == 202
    again = deliver(push.encode(), "72d3162e-cc78-11e3-81ab-4c9367dc0958")
    assert again.status_code == 409
    assert again.json()["detail"] == (
        "delivery 72d3162e-cc78-11e3-81ab-4c9367dc0958 was already received; a replayed "
        "delivery starts nothing"
    )
    renamed = deliver(push.encode(), "another-id")
    assert renamed.status_code == 409
    assert renamed.json()["detail"].startswith("the same body was already received")
    old = json.dumps({"ref": "refs/heads/main", "repository": {"pushed_at": 1_700_000_000}})
    stale = deliver(old.encode(), "third-id")
    assert stale.status_code == 409
    assert "older than sync.webhook_window (3600 s)" in stale.json()["detail"]
    unsigned = httpx.post(
        url + "/webhook/git", content=b"{}", headers={"X-GitHub-Delivery": "fourth-id"}
    )
    assert unsigned.status_code == 401
    fresh = json.dumps({"ref": "refs/heads/main", "zen": "x"}).encode()
    assert deliver(fresh, "fourth-id").status_code == 202  # an unsigned try spent nothing


def test_the_replay_window_forgets_after_it() -> None:
    from briefd.sync.webhook import Deliveries

    now = [1000.0]
    seen = Deliveries(60, clock=lambda: now[0])
    assert seen.refusal("a", b"x") is None
    assert seen.refusal("a", b"y") is not None
    now[0] += 61
    assert seen.refusal("a", b"x") is None


def test_a_long_session_id_is_refused_and_nothing_stored(
    url: str, service_settings: Settings
) -> None:
    def recall(session: str) -> httpx.Response:
        body = {  # the gate's verdict alone (no keyword tiers): something to remember
            "prompt": "how many times do we retry a soft decline",
            "session_id": session,
            "mode": "bm25",
        }
        return httpx.post(url + "/api/hook/recall?format=json", json=body, headers=AUTH)

    huge = recall("s" * 1_000_000)
    assert huge.status_code == 400
    assert huge.json()["detail"].startswith("session_id is 1000000 characters; at most 256")
    long = recall("s" * 257)
    assert long.status_code == 400
    assert long.json()["detail"] == (
        "session_id is 257 characters; at most 256 (send the agent's session id, not content)"
    )
    assert recall("s" * 256).status_code == 200
    with sqlite3.connect(service_settings.db) as conn:
        stored = conn.execute("SELECT DISTINCT length(session_id) FROM recall_injections")
        assert stored.fetchall() == [(256,)]


def test_a_1_mb_url_is_answered_414_not_reset(url: str) -> None:
    answer = raw(
        url, b"GET /api/health?" + b"q" * 1_000_000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    )
    assert answer.startswith(b"HTTP/1.1 414 URI Too Long\r\n")
    assert b'"error": "uri_too_long"' in answer
    middling = httpx.get(url + "/api/search", params={"q": "x" * 10_000}, headers=AUTH)
    assert middling.status_code == 414
    assert middling.json()["detail"] == (  # a GET with no body form: no "POST body" advice
        "the request URL is over 8192 bytes; search with the query's key words (a search reads "
        "at most its first 256 distinct words), or send long text as the task of POST /api/bundle"
    )
    other = httpx.get(url + "/api/docs", params={"q": "x" * 10_000}, headers=AUTH)
    assert other.json()["detail"].endswith("; send long input in a POST body")
    assert httpx.get(url + "/api/health").status_code == 200  # the server is fine


def test_headers_over_16_kib_are_431_however_the_head_arrives(url: str) -> None:
    """A head over 16 KiB was refused only when it reached the server in pieces (h11 gives up
    on an incomplete one); sent in one piece, 20 KiB of headers were answered 200."""
    head = b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"x" * 20_000
    answer = raw(url, head + b"\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 431 ")
    assert b'{"error": "headers_too_large", "detail": "the request headers are over 16 KiB"}' in (
        answer
    )
    assert httpx.get(url + "/api/health", headers={"X-Big": "x" * 15_000}).status_code == 200


def test_a_request_head_that_does_not_arrive_in_time_is_408_and_closed(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A connection that sent part of a head (slow-loris style) or nothing at all was held
    open for good, each one a file descriptor of the server's."""
    from briefd.service import listener

    monkeypatch.setattr(listener, "HEAD_TIMEOUT_S", 1.0, raising=False)
    address = urlsplit(url)
    started = time.monotonic()
    with socket.create_connection((address.hostname, address.port), timeout=10) as slow:
        slow.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        time.sleep(0.5)
        slow.sendall(b"X-Trickle: a\r\n")  # a byte now and then does not keep it open
        answer = b""
        while chunk := slow.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert answer.endswith(
        b'{"error": "request_timeout", "detail": "the request head did not arrive within 1 s"}'
    )
    assert time.monotonic() - started < 5
    with socket.create_connection((address.hostname, address.port), timeout=10) as idle:
        assert idle.recv(65536) == b""  # nothing sent: closed without a word
    with socket.create_connection((address.hostname, address.port), timeout=10) as kept:
        kept.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        first = kept.recv(65536)
        head, _, body = first.partition(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        while len(body) < length:
            body += kept.recv(65536)
        assert first.startswith(b"HTTP/1.1 200 OK\r\n")  # a whole head is answered
        kept.sendall(b"GET /api/health HTTP/1.1\r\n")  # the next one, kept alive, stalls
        later = b""
        while chunk := kept.recv(65536):
            later += chunk
        assert later.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert httpx.get(url + "/api/health").status_code == 200


def test_a_body_that_does_not_arrive_in_time_ends_its_connection(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The webhook needs no token and its body is read before its signature is checked: a
    body declared and never finished held the request (and its connection) for good; so did
    the body of a request refused before it was read (no token), trickled on."""
    from briefd.service import limits, listener

    monkeypatch.setattr(limits, "BODY_TIMEOUT_S", 1.0, raising=False)
    address = urlsplit(url)
    started = time.monotonic()
    with socket.create_connection((address.hostname, address.port), timeout=10) as slow:
        slow.sendall(
            b"POST /webhook/git HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
        )
        answer = b""
        while chunk := slow.recv(65536):  # until the server closes the connection
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert answer.endswith(
        b'{"error": "request_timeout", "detail": "the request body did not arrive within 1 s"}'
    )
    assert time.monotonic() - started < 5
    monkeypatch.setattr(listener, "HEAD_TIMEOUT_S", 1.0, raising=False)
    started = time.monotonic()
    with socket.create_connection((address.hostname, address.port), timeout=10) as refused:
        refused.sendall(  # no token: answered 401 at once, its body never read
            b"POST /api/bundle HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"
        )
        answer = refused.recv(65536)
        for _ in range(4):  # the body trickling on does not keep the connection
            time.sleep(0.4)
            with contextlib.suppress(OSError):  # closed already
                refused.sendall(b" ")
        while chunk := refused.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 401 Unauthorized\r\n")
    assert time.monotonic() - started < 5
    assert httpx.get(url + "/api/health").status_code == 200


def test_open_mcp_event_streams_are_capped(url: str) -> None:
    headers = {**AUTH, "Accept": "text/event-stream", "mcp-protocol-version": "2025-11-25"}
    with httpx.Client(timeout=10) as client, ExitStack() as streams:
        for _ in range(STREAMS):
            opened = streams.enter_context(client.stream("GET", url + "/mcp", headers=headers))
            assert opened.status_code == 200
        refused = client.get(url + "/mcp", headers=headers)
        assert refused.status_code == 503 and refused.headers["retry-after"] == "5"
        said = refused.json()["error"]  # a JSON-RPC error, as on every refusal at /mcp
        assert said["message"].startswith(f"{STREAMS} MCP event streams are open")
        assert said["data"] == {"error": "too_many_streams"}
        search = client.get(url + "/api/search", params={"q": "chargeback"}, headers=AUTH)
        assert search.status_code == 200  # other requests are not affected
    time.sleep(0.5)
    with (
        httpx.Client(timeout=10) as client,
        client.stream("GET", url + "/mcp", headers=headers) as again,
    ):
        assert again.status_code == 200  # closed streams free their places


def test_limits_come_from_settings(service_settings: Settings) -> None:
    serve = replace(service_settings.serve, max_body_bytes=1234, max_streams=2)
    from briefd.service import ServiceConfig

    config = ServiceConfig.from_settings(serve, env={})
    assert (config.max_body_bytes, config.max_streams) == (1234, 2)


@pytest.mark.parametrize("depth", [990, 5000])
def test_a_deeply_nested_body_with_a_lone_surrogate_is_a_400_not_a_500(
    service_api: Briefd, depth: int
) -> None:
    """The Unicode check reads JSON nested deeper than Python recurses (990 levels: parsed,
    then walked; 5,000: too deep to parse, left to the route) without failing the request."""
    nested = "[" * depth + '"\\ud800"' + "]" * depth
    body = '{"task": "refund", "paths": ' + nested + "}"
    call = '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": ' + body + "}"
    headers = {**AUTH, "Content-Type": "application/json"}
    mcp_headers = {**headers, "Accept": "application/json, text/event-stream"}
    app = create_app(service_api, service_config())
    with TestClient(app, raise_server_exceptions=False) as http:
        answers = [
            http.post("/api/bundle", content=body, headers=headers),
            http.post("/api/usage", content=body, headers=headers),
            http.post("/mcp", content=call, headers=mcp_headers),
        ]
    for answer in answers:
        assert answer.status_code == 400, answer.text[:200]
    for answer in answers[:2]:
        assert set(answer.json()) == {"error", "detail"}
