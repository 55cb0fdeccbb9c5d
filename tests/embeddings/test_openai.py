"""The openai-compatible adapter against a local server speaking the /v1/embeddings format."""

from __future__ import annotations

import httpx
import numpy as np
import pytest

from briefd.embeddings.openai import OpenAIEmbedder, embeddings_url
from briefd.embeddings.registry import create_embedder
from briefd.errors import EmbeddingError
from briefd.settings import Settings, with_overrides
from tests.embeddings.fakehttp import FakeServer, Reply, Request, closed_port_url, json_reply


def openai_reply(request: Request) -> Reply:
    """The real shape, with ``data`` deliberately out of order."""
    texts = request.json()["input"]
    data = [
        {"object": "embedding", "index": i, "embedding": [float(i + 1), 0.0, 1.0]}
        for i in range(len(texts))
    ]
    return json_reply(
        {
            "object": "list",
            "data": list(reversed(data)),
            "model": request.json()["model"],
            "usage": {"prompt_tokens": 3, "total_tokens": 3},
        }
    )


@pytest.mark.parametrize("base", ["http://h:1", "http://h:1/", "http://h:1/v1", "http://h:1/v1/"])
def test_base_url_with_or_without_v1(base: str) -> None:
    assert embeddings_url(base) == "http://h:1/v1/embeddings"


@pytest.mark.parametrize("suffix", ["", "/v1"])
def test_sends_bearer_key_and_sorts_by_index(
    server: FakeServer, client: httpx.Client, suffix: str
) -> None:
    server.on("POST", "/v1/embeddings", openai_reply)
    embedder = OpenAIEmbedder("text-embedding-3-small", server.url + suffix, client, "sk-test")
    vectors = embedder.embed_batch(["a", "b", "c"], "query")
    request = server.requests[0]
    assert request.json() == {"model": "text-embedding-3-small", "input": ["a", "b", "c"]}
    assert request.headers["authorization"] == "Bearer sk-test"
    expected = np.array([[1, 0, 1], [2, 0, 1], [3, 0, 1]], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(vectors, expected, atol=1e-7)
    assert embedder.dim == 3 and embedder.model_id == "text-embedding-3-small@openai-compatible"


def test_key_comes_from_the_named_environment_variable(
    settings: Settings, server: FakeServer, client: httpx.Client
) -> None:
    server.on("POST", "/v1/embeddings", openai_reply)
    config = with_overrides(
        settings,
        {"embeddings.base_url": server.url, "embeddings.api_key_env": "TEAM_EMBED_KEY"},
    ).embeddings
    OpenAIEmbedder.from_settings(config, client, env={"TEAM_EMBED_KEY": "k-123"}).embed_batch(
        ["x"], "passage"
    )
    OpenAIEmbedder.from_settings(config, client, env={}).embed_batch(["x"], "passage")
    assert server.requests[0].headers["authorization"] == "Bearer k-123"
    assert "authorization" not in server.requests[1].headers


def test_refused_key_names_the_variable(server: FakeServer, client: httpx.Client) -> None:
    error_body = {
        "error": {
            "message": "Incorrect API key provided: sk-wrong.",
            "type": "invalid_request_error",
            "code": "invalid_api_key",
        }
    }
    server.on("POST", "/v1/embeddings", lambda r: json_reply(error_body, 401))
    embedder = OpenAIEmbedder("m", server.url, client, "sk-wrong", "TEAM_EMBED_KEY")
    with pytest.raises(EmbeddingError) as error:
        embedder.embed_batch(["x"], "query")
    assert str(error.value) == (
        f"OpenAI-compatible service at {server.url}/v1/embeddings answered HTTP 401: "
        "Incorrect API key provided: $TEAM_EMBED_KEY.; the API key was refused; set the environment "
        "variable TEAM_EMBED_KEY (named by embeddings.api_key_env; it is set)"
    )


def test_a_key_the_service_quotes_back_is_never_shown(
    server: FakeServer, client: httpx.Client
) -> None:
    """A service that quotes the refused key whole in its error body had it shown in the
    error: on the terminal, in a search's warning served over REST and MCP, in the logs
    (also its first part, where the message was cut at 200 characters)."""
    key = "sk-proj-" + "Q7x" * 20
    said = "Invalid proxy server token passed. " * 4 + f"Received API Key = {key}"
    server.on("POST", "/v1/embeddings", lambda r: json_reply({"error": {"message": said}}, 401))
    embedder = OpenAIEmbedder("m", server.url, client, key, "TEAM_EMBED_KEY")
    with pytest.raises(EmbeddingError) as error:
        embedder.embed_batch(["x"], "query")
    assert "sk-proj-" not in str(error.value) and "Q7x" not in str(error.value)
    assert "Received API Key = $TEAM_EMBED_KEY; the API key was refused" in str(error.value)


@pytest.mark.parametrize(
    ("status", "said"),
    [
        (413, "Input validation error: `inputs` must have less than 512 tokens. Given: 534"),
        (
            400,
            "This model's maximum context length is 512 tokens. However, you requested 600 "
            "tokens in the input for embedding generation. Please reduce the length of the input.",
        ),
    ],
)
def test_a_passage_longer_than_the_model_takes_is_not_blamed_on_batch_size(
    server: FakeServer, client: httpx.Client, status: int, said: str
) -> None:
    """text-embeddings-inference (413) and vLLM (400) refuse a text longer than a 512-token
    model takes (briefd's sections reach 800 tokens) unless told to truncate; briefd said to
    check embeddings.batch_size, which changes nothing: the same section fails again."""
    server.on("POST", "/v1/embeddings", lambda r: json_reply({"error": said}, status))
    with pytest.raises(EmbeddingError) as error:
        OpenAIEmbedder("intfloat/multilingual-e5-small", server.url, client).embed_batch(
            ["x"], "passage"
        )
    assert str(error.value).endswith(
        f"answered HTTP {status}: {said[:200]}; a text is longer than the model takes: have "
        "the service truncate its inputs (text-embeddings-inference: --auto-truncate); for a "
        "limit on a whole request, lower embeddings.batch_size (the texts one request "
        "carries: all)"
    )


def test_wrong_path_is_a_404_with_a_hint(server: FakeServer, client: httpx.Client) -> None:
    with pytest.raises(EmbeddingError) as error:
        OpenAIEmbedder("m", server.url + "/api", client).embed_batch(["x"], "query")
    assert str(error.value) == (
        f"OpenAI-compatible service at {server.url}/api/v1/embeddings answered HTTP 404: "
        "not found; check embeddings.base_url and that model 'm' exists there"
    )


def test_connection_refused(client: httpx.Client) -> None:
    url = closed_port_url()
    with pytest.raises(EmbeddingError) as error:
        OpenAIEmbedder("m", url, client).embed_batch(["x"], "query")
    assert str(error.value) == (
        f"OpenAI-compatible service at {url}/v1/embeddings cannot be reached (ConnectError); "
        "check embeddings.base_url and that the service is running"
    )


@pytest.mark.parametrize(
    ("body", "what"),
    [
        ({"object": "list"}, "JSON without a 'data' list"),
        ({"data": [{"index": 0}, {"index": 1}]}, "'data' items without 'index' and 'embedding'"),
        (
            {"data": [{"index": 0, "embedding": [1.0]}, {"index": 2, "embedding": [1.0]}]},
            "indexes [0, 2] for 2 texts",
        ),
        ({"data": [{"index": 0, "embedding": [1.0]}]}, "1 vectors for 2 texts"),
        (["not", "an", "object"], "JSON without a 'data' list"),
    ],
)
def test_malformed_answers(
    server: FakeServer, client: httpx.Client, body: object, what: str
) -> None:
    server.on("POST", "/v1/embeddings", lambda r: json_reply(body))
    with pytest.raises(EmbeddingError) as error:
        OpenAIEmbedder("m", server.url, client).embed_batch(["x", "y"], "query")
    assert str(error.value) == (
        f"OpenAI-compatible service at {server.url}/v1/embeddings answered {what}; "
        "check that embeddings.base_url points at it"
    )


def test_create_embedder_builds_openai_from_settings(
    settings: Settings, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.on("POST", "/v1/embeddings", openai_reply)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    configured = with_overrides(
        settings,
        {
            "embeddings.enabled": True,
            "embeddings.adapter": "openai-compatible",
            "embeddings.model": "text-embedding-3-small",
            "embeddings.base_url": server.url + "/v1",
        },
    )
    embedder = create_embedder(configured)
    assert isinstance(embedder, OpenAIEmbedder)
    assert embedder.embed_batch(["x", "y"], "passage").shape == (2, 3)
    assert server.requests[0].headers["authorization"] == "Bearer sk-env"


def test_a_key_pasted_with_a_line_break_is_sent_without_it(
    settings: Settings, server: FakeServer, client: httpx.Client
) -> None:
    """A key read from a file or a Kubernetes secret often ends in a line break: every batch
    failed with "cannot be reached (LocalProtocolError); check that it is up", a server that
    was up, while httpx refused the header the key was in."""
    server.on("POST", "/v1/embeddings", openai_reply)
    config = with_overrides(settings, {"embeddings.base_url": server.url}).embeddings
    env = {"OPENAI_API_KEY": "sk-test\r\n"}
    OpenAIEmbedder.from_settings(config, client, env=env).embed_batch(["x"], "passage")
    assert server.requests[0].headers["authorization"] == "Bearer sk-test"


def test_a_key_no_header_can_carry_is_refused_without_being_shown(
    settings: Settings, server: FakeServer, client: httpx.Client
) -> None:
    server.on("POST", "/v1/embeddings", openai_reply)
    config = with_overrides(settings, {"embeddings.base_url": server.url}).embeddings
    embedder = OpenAIEmbedder.from_settings(config, client, env={"OPENAI_API_KEY": "sk-te st"})
    with pytest.raises(EmbeddingError) as error:
        embedder.embed_batch(["x"], "passage")
    assert str(error.value) == (
        "the environment variable OPENAI_API_KEY (named by embeddings.api_key_env) holds a "
        "character (character 6: a space) that an HTTP header cannot carry: a paste that took "
        "a line break or a space with it? Set it again, exactly as issued"
    )
    assert server.requests == []
