"""The ollama adapter against a local server speaking Ollama's /api/embed wire format."""

from __future__ import annotations

import time

import httpx
import numpy as np
import pytest

from briefd.embeddings.ollama import OllamaEmbedder
from briefd.embeddings.registry import create_embedder
from briefd.errors import EmbeddingError
from briefd.settings import Settings, with_overrides
from tests.embeddings.fakehttp import FakeServer, Reply, Request, closed_port_url, json_reply


def embed_reply(request: Request) -> Reply:
    body = request.json()
    rows = [[float(len(text)), 0.0, 0.0, 0.0] for text in body["input"]]
    rows[0] = [3.0, 4.0, 0.0, 0.0]
    return json_reply({"model": body["model"], "embeddings": rows})


def make(server: FakeServer, client: httpx.Client) -> OllamaEmbedder:
    return OllamaEmbedder("nomic-embed-text", server.url + "/", client)


def test_posts_model_and_inputs_and_returns_unit_rows_in_order(
    server: FakeServer, client: httpx.Client
) -> None:
    server.on("POST", "/api/embed", embed_reply)
    vectors = make(server, client).embed_batch(["first", "a second text"], "passage")
    assert server.requests[0].json() == {
        "model": "nomic-embed-text",
        "input": ["first", "a second text"],
    }
    assert server.requests[0].headers["content-type"] == "application/json"
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, [[0.6, 0.8, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]], atol=1e-7)


def test_model_id_and_dim_learned_from_the_first_answer(
    server: FakeServer, client: httpx.Client
) -> None:
    server.on("POST", "/api/embed", embed_reply)
    embedder = make(server, client)
    assert embedder.model_id == "nomic-embed-text@ollama"
    assert embedder.dim == 4  # read before any call: one probe request
    assert [r.json()["input"] for r in server.requests] == [["dimension probe"]]
    embedder.embed_batch(["x"], "query")
    assert embedder.dim == 4 and len(server.requests) == 2


def test_empty_batch_makes_no_request(server: FakeServer, client: httpx.Client) -> None:
    assert make(server, client).embed_batch([], "query").shape == (0, 0)
    assert server.requests == []


def test_unknown_model_says_to_pull_it(server: FakeServer, client: httpx.Client) -> None:
    server.on(
        "POST",
        "/api/embed",
        lambda r: json_reply(
            {"error": 'model "nomic-embed-text" not found, try pulling it first'}, 404
        ),
    )
    with pytest.raises(EmbeddingError) as error:
        make(server, client).embed_batch(["x"], "query")
    assert str(error.value) == (
        f'Ollama at {server.url}/api/embed answered HTTP 404: model "nomic-embed-text" not found, '
        "try pulling it first; run `ollama pull nomic-embed-text`, or check embeddings.model"
    )


def test_a_base_url_that_is_not_ollamas_own_says_to_check_it(
    server: FakeServer, client: httpx.Client
) -> None:
    """A base_url copied from Ollama's OpenAI-compatible docs (…:11434/v1) reaches no
    /api/embed: Ollama answers its router's plain 404, and briefd said to `ollama pull` a
    model that was there all along."""
    page = Reply(404, b"404 page not found", "text/plain")
    server.on("POST", "/v1/api/embed", lambda r: page)
    embedder = OllamaEmbedder("nomic-embed-text", server.url + "/v1", client)
    with pytest.raises(EmbeddingError) as error:
        embedder.embed_batch(["x"], "query")
    assert str(error.value) == (
        f"Ollama at {server.url}/v1/api/embed answered HTTP 404: 404 page not found; no "
        "/api/embed there: set embeddings.base_url to Ollama's own address "
        "(http://HOST:11434, without /v1 or /api), or upgrade an Ollama too old to have it"
    )


def test_server_error(server: FakeServer, client: httpx.Client) -> None:
    server.on("POST", "/api/embed", lambda r: Reply(500, b"llama runner crashed\n", "text/plain"))
    with pytest.raises(EmbeddingError) as error:
        make(server, client).embed_batch(["x"], "query")
    assert str(error.value) == (
        f"Ollama at {server.url}/api/embed answered HTTP 500: llama runner crashed; "
        "check embeddings.model and the service's log"
    )


def test_connection_refused(client: httpx.Client) -> None:
    url = closed_port_url()
    with pytest.raises(EmbeddingError) as error:
        OllamaEmbedder("m", url, client).embed_batch(["x"], "query")
    assert str(error.value) == (
        f"Ollama at {url}/api/embed cannot be reached (ConnectError); "
        "start it with `ollama serve`, or check embeddings.base_url"
    )


def test_a_base_url_holding_an_account_is_never_shown_with_its_password(
    server: FakeServer, client: httpx.Client
) -> None:
    server.on("POST", "/api/embed", lambda r: Reply(500, b"llama runner crashed\n", "text/plain"))
    answering = server.url.replace("http://", "http://svc:s3cr3tpw@")
    refusing = closed_port_url().replace("http://", "http://svc:s3cr3tpw@")
    said = []
    for url in (answering, refusing):
        with pytest.raises(EmbeddingError) as error:
            OllamaEmbedder("m", url, client).embed_batch(["x"], "query")
        said.append(str(error.value))
    assert server.requests[0].headers["authorization"].startswith("Basic ")  # still sent
    assert said[0].startswith(f"Ollama at http://***@{server.url[7:]}/api/embed answered HTTP 500")
    assert said[1].startswith(
        f"Ollama at http://***@{refusing.rpartition('@')[2]}/api/embed cannot"
    )
    assert not any("s3cr3tpw" in line or "svc:" in line for line in said)


def test_timeout(server: FakeServer) -> None:
    def slow(request: Request) -> Reply:
        time.sleep(0.5)
        return embed_reply(request)

    server.on("POST", "/api/embed", slow)
    with httpx.Client(timeout=0.1) as quick, pytest.raises(EmbeddingError) as error:
        OllamaEmbedder("m", server.url, quick).embed_batch(["x"], "query")
    assert str(error.value) == (
        f"Ollama at {server.url}/api/embed timed out; "
        "check that it is up, or raise embeddings.timeout_seconds"
    )


@pytest.mark.parametrize(
    ("reply", "what"),
    [
        (Reply(200, b"<html>proxy login</html>", "text/html"), "a body that is not JSON"),
        (json_reply({"embedding": [1.0, 2.0]}), "JSON without 'embeddings'"),
        (json_reply({"embeddings": [[1.0, 2.0]]}), "1 vectors for 2 texts"),
        (
            json_reply({"embeddings": [[1.0, 2.0], [1.0]]}),
            "vectors that are not equal-length lists of numbers",
        ),
        (
            json_reply({"embeddings": [[1.0, "a"], [1.0, 2.0]]}),
            "vectors that are not equal-length lists of numbers",
        ),
        (
            json_reply({"embeddings": [[], []]}),
            "vectors that are not equal-length lists of numbers",
        ),
    ],
)
def test_malformed_answers(
    server: FakeServer, client: httpx.Client, reply: Reply, what: str
) -> None:
    server.on("POST", "/api/embed", lambda r: reply)
    with pytest.raises(EmbeddingError) as error:
        make(server, client).embed_batch(["x", "y"], "passage")
    assert str(error.value) == (
        f"Ollama at {server.url}/api/embed answered {what}; "
        "check that embeddings.base_url points at it"
    )


def test_dimension_change_between_calls(server: FakeServer, client: httpx.Client) -> None:
    sizes = iter([4, 8])

    def changing(request: Request) -> Reply:
        return json_reply({"embeddings": [[1.0] * next(sizes)]})

    server.on("POST", "/api/embed", changing)
    embedder = make(server, client)
    embedder.embed_batch(["x"], "passage")
    with pytest.raises(EmbeddingError) as error:
        embedder.embed_batch(["y"], "passage")
    assert str(error.value) == (
        f"Ollama at {server.url}/api/embed returned 8-dim vectors after 4-dim ones; "
        "embeddings.model must name one model ('nomic-embed-text') and the service must not "
        "switch it"
    )


def test_create_embedder_builds_ollama_from_settings(
    settings: Settings, server: FakeServer
) -> None:
    server.on("POST", "/api/embed", embed_reply)
    configured = with_overrides(
        settings,
        {
            "embeddings.enabled": True,
            "embeddings.adapter": "ollama",
            "embeddings.model": "bge-m3",
            "embeddings.base_url": server.url,
        },
    )
    embedder = create_embedder(configured)
    assert isinstance(embedder, OllamaEmbedder)
    assert embedder.embed_batch(["x"], "query").shape == (1, 4)
    assert server.requests[0].json()["model"] == "bge-m3"


@pytest.mark.parametrize(
    ("model", "overrides", "sent", "model_id"),
    [
        (
            "jeffh/intfloat-multilingual-e5-small:q8_0",
            {},
            ["query: kısmi iade", "passage: Partial refunds"],
            "jeffh/intfloat-multilingual-e5-small:q8_0@ollama+prefixes['query: ', 'passage: ']",
        ),
        ("nomic-embed-text", {}, ["kısmi iade", "Partial refunds"], "nomic-embed-text@ollama"),
        (
            "nomic-embed-text",
            {"embeddings.query_prefix": "search_query: ", "embeddings.passage_prefix": ""},
            ["search_query: kısmi iade", "Partial refunds"],
            "nomic-embed-text@ollama+prefixes['search_query: ', '']",
        ),
    ],
)
def test_prefixes_follow_the_model_family_or_the_settings(
    settings: Settings,
    server: FakeServer,
    model: str,
    overrides: dict[str, str],
    sent: list[str],
    model_id: str,
) -> None:
    server.on("POST", "/api/embed", embed_reply)
    configured = with_overrides(
        settings,
        {
            "embeddings.enabled": True,
            "embeddings.adapter": "ollama",
            "embeddings.model": model,
            "embeddings.base_url": server.url,
            **overrides,
        },
    )
    embedder = create_embedder(configured)
    assert embedder is not None
    embedder.embed_batch(["kısmi iade"], "query")
    embedder.embed_batch(["Partial refunds"], "passage")
    assert [r.json()["input"][0] for r in server.requests] == sent
    assert embedder.model_id == model_id
