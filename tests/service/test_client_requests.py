"""What a client developer sees for the requests REST clients commonly get wrong: a JSON body
sent under another ``Content-Type``, a body that is not UTF-8, a URL too long for its
``paths``."""

from __future__ import annotations

from fastapi.testclient import TestClient

CURL_D = {"Content-Type": "application/x-www-form-urlencoded"}  # what `curl -d` sends


def test_a_json_body_sent_as_a_form_names_the_content_type_to_send(client: TestClient) -> None:
    """``curl -d '{"task": …}'`` (no ``-H``) sends the JSON object as a form: FastAPI does not
    read it as JSON, and the answer said "the body must be one JSON object", which it was."""
    sent = client.post("/api/bundle", content=b'{"task": "deploy the service"}', headers=CURL_D)
    assert sent.status_code == 422
    assert sent.json() == {
        "error": "invalid_request",
        "detail": "the body was sent as application/x-www-form-urlencoded, which is not read as "
        "JSON; send the JSON object with 'Content-Type: application/json' (curl: --json, or -H "
        "'Content-Type: application/json' beside -d)",
    }
    plain = {"Content-Type": "text/plain; charset=utf-8"}
    hook = client.post("/api/hook/recall", content=b'{"prompt": "deploy"}', headers=plain)
    assert hook.status_code == 422
    assert hook.json()["detail"].startswith("the body was sent as text/plain, which is not read")
    # JSON under its own type, or a +json one, is read; a list as JSON is still not an object
    typed = {"Content-Type": "application/vnd.api+json"}
    assert client.post("/api/bundle", content=b'{"task": "deploy"}', headers=typed).is_success
    assert client.post("/api/bundle", json=["deploy"]).json()["detail"] == (
        "the body must be one JSON object of the route's fields (see /docs)"
    )


def test_a_body_that_is_not_utf8_says_where_and_what_to_send(client: TestClient) -> None:
    """A task typed with an é and sent as Latin-1 (Windows PowerShell 5.1's
    ``Invoke-RestMethod`` encodes a string body so) was answered 400 "There was an error
    parsing the body", naming neither the encoding nor where it went wrong."""
    body = '{"task": "café deploy"}'.encode("latin-1")
    sent = client.post("/api/bundle", content=body, headers={"Content-Type": "application/json"})
    assert sent.status_code == 400
    assert sent.json() == {
        "error": "bad_request",
        "detail": "the body is not UTF-8 text: byte 0xe9 at offset 13 (invalid continuation "
        "byte); send the JSON encoded as UTF-8 (é, for one, is two bytes there, 0xc3 0xa9)",
    }
    assert client.post("/api/bundle", json={"task": "café deploy"}).is_success


def test_a_search_url_too_long_for_its_paths_says_so(client: TestClient) -> None:
    """A client passing a diff's 300 changed files as ``paths`` got 414 with the advice to
    "search with the query's key words", for a query of one word."""
    changed = ",".join(f"svc/ledger/balance/file_{n}.go" for n in range(300))
    sent = client.get("/api/search", params={"q": "rounding", "paths": changed})
    assert sent.status_code == 414
    assert sent.json()["detail"] == (
        "the request URL is over 8192 bytes: its 300 paths alone take 11594 bytes; send the paths the "
        "task changes most (bundles and the MCP tools take at most 200), or send them as the "
        "paths of POST /api/bundle, whose JSON body the URL does not limit"
    )
    repeated = client.get("/api/search", params={"q": "rounding", "paths": changed.split(",")})
    assert "its 300 paths alone take 12790 bytes;" in repeated.json()["detail"]
    # a long query keeps its advice, paths or not
    pasted = client.get("/api/search", params={"q": "x " * 5000, "paths": "svc/ledger"})
    assert pasted.json()["detail"].endswith("or send long text as the task of POST /api/bundle")
    few = changed.split(",")[:20]
    assert client.get("/api/search", params={"q": "rounding", "paths": few}).is_success


def test_a_query_parameter_that_is_not_utf8_is_refused_not_searched_as_garbage(
    client: TestClient,
) -> None:
    """``?q=caf%E9`` (café percent-encoded from Latin-1, as a client encoding text so sends it)
    was searched as "caf\ufffd": 200, no hits, and a knowledge gap in the query log."""
    sent = client.get("/api/search?q=caf%E9")
    assert sent.status_code == 400
    assert sent.json() == {
        "error": "bad_request",
        "detail": "query parameter 'q' is not UTF-8 text: byte 0xe9 at offset 3 (unexpected "
        "end of data); percent-encode the text's UTF-8 bytes (é is %C3%A9)",
    }
    scopes = client.get("/api/docs?scopes=dom%FFain")
    assert scopes.status_code == 400
    assert scopes.json()["detail"].startswith("query parameter 'scopes' is not UTF-8 text")
    assert client.get("/api/search?q=caf%C3%A9+deploy").json()["query"] == "café deploy"
    assert client.get("/api/gaps").json()["gaps"] == []  # nothing was searched


def test_a_query_parameter_the_route_does_not_take_is_named_not_ignored(
    client: TestClient,
) -> None:
    """``?scope=`` (for ``scopes``) searched the default scopes, and ``top-k`` or ``limit`` the
    default count, each answered 200 as if the parameter had been read, as a body's unknown
    field never is."""
    scoped = client.get("/api/search", params={"q": "refund", "scope": "projects/ledger"})
    assert scoped.status_code == 422
    assert scoped.json() == {
        "error": "invalid_request",
        "detail": "query.scope: not a parameter of this route (did you mean scopes?); it takes "
        "q, scopes, top_k, max_tokens, paths, tags, client",
    }
    counted = client.get("/api/search", params={"q": "refund", "top-k": 1})
    assert counted.json()["detail"].startswith("query.top-k: not a parameter of this route (did")
    part = client.get("/api/docs/domain/refunds.md", params={"max_token": 600})
    assert part.json()["detail"] == (
        "query.max_token: not a parameter of this route (did you mean max_tokens?); it takes "
        "scopes, start_line, start_char, max_tokens"
    )
    paged = client.get("/api/links/suggestions", params={"page": 2})
    assert paged.json()["detail"] == (
        "query.page: not a parameter of this route; it takes doc_path, limit, offset, scopes"
    )
    # what routes read is read; a route that reads none (a probe's ?ready) answers as before
    wanted = client.get("/api/search", params={"q": "refund", "scopes": "projects/ledger"})
    assert wanted.json()["scopes"] == ["projects/ledger"]
    assert client.get("/api/health?ready").json()["status"] == "ok"


def test_a_parameter_of_one_value_given_twice_is_refused_not_read_as_the_last(
    client: TestClient,
) -> None:
    """``?q=refunds&q=chargebacks`` searched "chargebacks" alone and ``top_k=1&top_k=5`` gave
    five hits: the last value was read and the others dropped without a word."""
    twice = client.get("/api/search?q=refund&q=chargeback")
    assert twice.status_code == 422
    assert twice.json() == {
        "error": "invalid_request",
        "detail": "query.q: given 2 times, and it takes one value; send it once (scopes, paths, "
        "tags take several)",
    }
    since = client.get("/api/gaps?since=1d&since=30d")
    assert (
        since.json()["detail"] == "query.since: given 2 times, and it takes one value; send it once"
    )
    several = client.get("/api/search?q=refund&scopes=domain&scopes=conventions&top_k=2")
    assert several.json()["scopes"] == ["domain", "conventions"]
    assert len(several.json()["hits"]) == 2


def test_a_hook_asking_for_another_index_is_told_as_every_421_is(client: TestClient) -> None:
    """The 421 of ``/api/hook/recall`` for another index came as ``{"error": "error"}`` (the
    Guard's 421 says ``misdirected``) and was not in the OpenAPI schema."""
    other = {"X-Briefd-Index": "/elsewhere/briefd.db"}
    refused = client.post("/api/hook/recall", json={"prompt": "refunds"}, headers=other)
    assert refused.status_code == 421
    assert refused.json()["error"] == "misdirected"
    schema = client.get("/openapi.json").json()["paths"]["/api/hook/recall"]["post"]
    assert schema["responses"]["421"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ErrorBody"
    }
