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
