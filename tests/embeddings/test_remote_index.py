"""Index runs and searches against remote embedding services (real wire formats on 127.0.0.1)
as they behave in use: another model answering under the same name gives vectors of another
size (searches fall back to keywords saying why, and the next index run embeds everything
again instead of mixing sizes, which raised tracebacks everywhere and which even `index
--rebuild` could not mend); a service down at query time; a service capping a request's
inputs; a rate limit asking to wait."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterator

import numpy as np
import pytest
from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.bundles import BundleRequest
from briefd.bundles.warned import GATED
from briefd.embeddings.registry import create_embedder
from briefd.errors import EmbeddingError
from briefd.recall.engine import RecallRequest
from briefd.retrieval.search import SearchRequest
from briefd.service import create_app
from briefd.service.metrics import CountingEmbedder, Metrics
from briefd.settings import Settings, with_overrides
from tests.conftest import WriteFiles
from tests.embeddings.fakehttp import (
    FakeServer,
    Reply,
    Request,
    closed_port_url,
    fake_server,
    json_reply,
)
from tests.service.conftest import service_config
from tests.service.live import TOKEN

DOCS = {
    "domain/payments.md": """
        # Payments

        ## Retry policy
        Failed card payments are retried three times.

        ## Refunds
        Refunds take five days.
        """
}


class Resizable:
    """An Ollama /api/embed whose vectors have ``size`` dimensions (a hash of the text)."""

    def __init__(self) -> None:
        self.size = 8

    def __call__(self, request: Request) -> Reply:
        body = request.json()
        rows = [self._vector(text) for text in body["input"]]
        return json_reply({"model": body["model"], "embeddings": rows})

    def _vector(self, text: str) -> list[float]:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        return np.random.default_rng(seed).standard_normal(self.size).tolist()


@pytest.fixture
def ollama() -> Iterator[tuple[FakeServer, Resizable]]:
    answer = Resizable()
    with fake_server() as server:
        server.on("POST", "/api/embed", answer)
        yield server, answer


def ollama_settings(settings: Settings, url: str) -> Settings:
    """The tests' settings with Ollama's model at ``url``."""
    overrides = {"embeddings.adapter": "ollama", "embeddings.model": "nomic-embed-text"}
    return with_overrides(
        settings, {**overrides, "embeddings.enabled": True, "embeddings.base_url": url}
    )


def indexed_then_resized(settings: Settings, write_files: WriteFiles, answer: Resizable) -> None:
    """The knowledge indexed with 8-dim vectors, then the model answering 16-dim ones."""
    write_files(DOCS)
    with Briefd(settings) as api:
        assert api.index().vectors_missing == 0 and sizes(api) == {8}
    answer.size = 16


def sizes(api: Briefd) -> set[int]:
    rows = api.store.conn.execute("SELECT DISTINCT dim FROM chunk_vectors").fetchall()
    return {int(r[0]) for r in rows}


def test_vectors_of_another_size_are_embedded_again_not_mixed(
    settings: Settings, write_files: WriteFiles, ollama: tuple[FakeServer, Resizable]
) -> None:
    server, answer = ollama
    settings = ollama_settings(settings, server.url)
    indexed_then_resized(settings, write_files, answer)
    with Briefd(settings) as api:
        found = api.search(SearchRequest("card retry"))
        assert found.mode == "bm25" and found.hits[0].heading == "Retry policy"
        assert found.warnings == (
            "searched by keywords only (bm25): the embedding model failed (nomic-embed-text@"
            "ollama now gives 16-dim vectors, and this index holds 8-dim ones: another model "
            "answers under that name; run `briefd index --rebuild` to embed the index with it)",
        )
        with pytest.raises(EmbeddingError, match="16-dim vectors"):
            api.search(SearchRequest("card retry", mode="hybrid"))
        report = api.index(rebuild=True)
        assert (report.embedding_error, report.vectors_missing) == (None, 0)
        assert sizes(api) == {16}
        again = api.search(SearchRequest("card retry"))
        assert again.mode == "hybrid" and again.warnings == ()


def test_a_changed_document_after_a_resize_embeds_the_whole_index_again(
    settings: Settings, write_files: WriteFiles, ollama: tuple[FakeServer, Resizable]
) -> None:
    server, answer = ollama
    settings = ollama_settings(settings, server.url)
    indexed_then_resized(settings, write_files, answer)
    write_files({"domain/chargebacks.md": "# Chargebacks\n\nDisputes go to the risk team.\n"})
    with Briefd(settings) as api:
        report = api.index()
        assert (report.embedding_error, report.vectors_missing) == (None, 0)
        assert sizes(api) == {16}
        assert api.search(SearchRequest("risk team disputes")).mode == "hybrid"


def test_an_embedding_service_down_at_query_time_leaves_keyword_search(
    settings: Settings, write_files: WriteFiles, ollama: tuple[FakeServer, Resizable]
) -> None:
    """The index run already degrades to keywords when the service is down; a search did not:
    it failed, though the index holds every section's words."""
    server, _ = ollama
    write_files(DOCS)
    with Briefd(ollama_settings(settings, server.url)) as api:
        api.index()
    with Briefd(ollama_settings(settings, closed_port_url())) as api:
        found = api.search(SearchRequest("card retry"))
        assert found.mode == "bm25" and found.hits[0].heading == "Retry policy"
        (said,) = found.warnings
        assert said.startswith(
            "searched by keywords only (bm25): the embedding model failed (Ollama at "
        )
        with pytest.raises(EmbeddingError, match="cannot be reached"):
            api.search(SearchRequest("card retry", mode="vector"))


def test_a_bundle_is_compiled_by_keywords_while_the_embedding_service_is_down(
    settings: Settings, write_files: WriteFiles, ollama: tuple[FakeServer, Resizable]
) -> None:
    """A search fell back to keywords, but a bundle (`briefd bundle`, /api/bundle, the MCP
    tools' context) failed outright: no context at all while Ollama was away. Once the
    service is back, the bundle is hybrid again (the keyword one is not served from cache)."""
    server, _ = ollama
    write_files(DOCS)
    with Briefd(ollama_settings(settings, server.url)) as api:
        api.index()
    task = BundleRequest("change the card retry policy")
    with Briefd(ollama_settings(settings, closed_port_url())) as api:
        bundle = api.compile_bundle(task)
        assert [item.heading_path[-1] for item in bundle.items][:1] == ["Retry policy"]
        assert bundle.diagnostics.search_mode == "bm25"
        (said,) = bundle.warnings
        assert said.startswith(
            "compiled by keywords only (bm25): the embedding model failed (Ollama at "
        )
        assert "cannot be reached" in said
    with Briefd(ollama_settings(settings, server.url)) as api:
        again = api.compile_bundle(task)
        assert again.diagnostics.search_mode == "hybrid"
        # no keyword warning kept; the fake service's vectors have the gate empty this task,
        # which the bundle now says (bundles.warned.gated)
        assert (again.diagnostics.gate, again.knowledge) == ("empty", ())
        assert [w.split(";")[0] for w in again.warnings] == [GATED]


def test_the_recall_hook_answers_by_keywords_while_the_embedding_service_is_down(
    settings: Settings, write_files: WriteFiles, ollama: tuple[FakeServer, Resizable]
) -> None:
    """The hook's answer (the server's /api/hook/recall, the daemon, in-process) failed
    with the service away: HTTP 503 from the server, nothing injected in-process, where
    the index's words could answer. An explicit hybrid request still gets the error."""
    server, _ = ollama
    write_files(DOCS)
    with Briefd(ollama_settings(settings, server.url)) as api:
        api.index()
    prompt = "How many times are failed card payments retried?"
    with Briefd(ollama_settings(settings, closed_port_url())) as api:
        found = api.recall(RecallRequest(prompt))
        assert found.mode == "bm25" and "Failed card payments are retried" in found.knowledge
        (said,) = found.notes
        assert said.startswith(
            "answered by keywords only (bm25): the embedding model failed (Ollama at "
        )
        with pytest.raises(EmbeddingError, match="cannot be reached"):
            api.recall(RecallRequest(prompt, mode="hybrid"))


def capped(limit: int, busy: list[float]) -> Callable[[Request], Reply]:
    """An OpenAI-compatible /v1/embeddings refusing more than ``limit`` inputs (as
    text-embeddings-inference's --max-client-batch-size does), rate limiting the first
    requests with 429 and ``Retry-After`` (one wait each in ``busy``)."""

    def answer(request: Request) -> Reply:
        texts = request.json()["input"]
        if busy:
            wait = busy.pop(0)
            body = json.dumps({"error": {"message": "Rate limit reached"}}).encode()
            return Reply(429, body, headers=(("Retry-After", f"{wait:g}"),))
        if len(texts) > limit:
            return json_reply({"error": f"batch too large: {len(texts)} > {limit}"}, 413)
        rows = [{"index": i, "embedding": [1.0, float(len(t)), 0.5]} for i, t in enumerate(texts)]
        return json_reply({"object": "list", "data": rows, "model": "m"})

    return answer


def test_every_request_keeps_to_batch_size_and_a_rate_limit_is_waited_out(
    settings: Settings, write_files: WriteFiles
) -> None:
    """The gate's ~160 probes went out in one request whatever embeddings.batch_size said, so
    a service capping a request's inputs failed index, serve, eval and tune; one 429 left a
    run without vectors (exit 0) and failed a search."""
    write_files(DOCS)
    with fake_server() as server:
        server.on("POST", "/v1/embeddings", capped(32, [0.05]))
        settings = with_overrides(
            ollama_settings(settings, server.url + "/v1"),
            {"embeddings.adapter": "openai-compatible", "embeddings.batch_size": 32},
        )
        with Briefd(settings) as api:
            report = api.index()
            assert (report.embedding_error, report.vectors_missing) == (None, 0)
            sent = [len(r.json()["input"]) for r in server.requests]
            assert max(sent) == 32 and sent[0] == sent[1]  # the 429's request, sent again
            server.on("POST", "/v1/embeddings", capped(32, [0.05]))
            assert api.search(SearchRequest("card retry", mode="hybrid")).hits
        server.on("POST", "/v1/embeddings", capped(32, [3600.0]))
        with Briefd(settings) as api, pytest.raises(EmbeddingError) as caught:
            api.search(SearchRequest("a question never asked", mode="hybrid"))
    # a search is not mended by `briefd index` (said here before): its vectors are there
    assert str(caught.value).endswith(
        "answered HTTP 429: Rate limit reached; the service is rate limiting or busy: try "
        "again later"
    )


class Hanging:
    """An Ollama /api/embed that takes the request and answers nothing (a wedged service, a
    host whose model is still loading) until released, at the test's end."""

    def __init__(self) -> None:
        self.released = threading.Event()

    def __call__(self, request: Request) -> Reply:
        self.released.wait(30)
        return json_reply({"error": "released"}, 503)


@pytest.fixture
def hung(
    settings: Settings, write_files: WriteFiles, ollama: tuple[FakeServer, Resizable]
) -> Iterator[tuple[FakeServer, Settings]]:
    """The knowledge indexed by the fake Ollama, which then hangs on every request; queries
    wait 0.5 s for it (embeddings.query_timeout_seconds)."""
    server, _ = ollama
    write_files(DOCS)
    settings = with_overrides(
        ollama_settings(settings, server.url), {"embeddings.query_timeout_seconds": 0.5}
    )
    with Briefd(settings) as api:
        assert api.index().vectors_missing == 0
    hanging = Hanging()
    server.on("POST", "/api/embed", hanging)
    try:
        yield server, settings
    finally:
        hanging.released.set()


def test_a_hanging_embedding_service_leaves_keyword_search_after_the_query_timeout(
    hung: tuple[FakeServer, Settings],
) -> None:
    """A service that took a search's query and never answered held the search for the whole
    embeddings.timeout_seconds (60 s, the index runs' wait) before keywords answered: every
    /api/search, MCP tool and hook prompt stalled a minute. A query now waits
    embeddings.query_timeout_seconds, and the next queries do not wait for it again."""
    server, settings = hung
    asked = len(server.requests)
    with Briefd(settings) as api:
        started = time.monotonic()
        found = api.search(SearchRequest("card retry"))
        took = time.monotonic() - started
        assert found.mode == "bm25" and found.hits[0].heading == "Retry policy"
        (said,) = found.warnings
        assert said.startswith(
            "searched by keywords only (bm25): the embedding model failed (Ollama at "
        )
        assert "did not answer a query within 0.5 s (embeddings.query_timeout_seconds" in said
        assert "this process does not ask it again for 30 s" in said
        assert took < 1.5
        started = time.monotonic()
        again = api.search(SearchRequest("how long do refunds take"))
        assert time.monotonic() - started < 0.5
        assert again.mode == "bm25" and again.hits[0].heading == "Refunds"
        (said,) = again.warnings
        assert (
            "did not answer a query within 0.5 s (embeddings.query_timeout_seconds) just now: this process does not ask it again for 30 s more"
            in said
        )
    assert len(server.requests) == asked + 1  # the second search did not ask it


def test_the_recall_hook_answers_by_keywords_soon_while_the_embedding_service_hangs(
    hung: tuple[FakeServer, Settings],
) -> None:
    """The hook's answer in-process (`briefd recall --no-server`) waited 60 s for a service
    that never answered; an agent's prompt hook is ended long before (Claude Code: 10 s)."""
    _, settings = hung
    prompt = "How many times are failed card payments retried?"
    with Briefd(settings) as api:
        started = time.monotonic()
        found = api.recall(RecallRequest(prompt))
        assert time.monotonic() - started < 1.5
        assert found.mode == "bm25" and "Failed card payments are retried" in found.knowledge
        (said,) = found.notes
        assert said.startswith(
            "answered by keywords only (bm25): the embedding model failed (Ollama at "
        )
        assert "did not answer a query within 0.5 s" in said


def test_a_rate_limited_query_is_not_held_for_the_wait_it_asks(
    settings: Settings, write_files: WriteFiles, ollama: tuple[FakeServer, Resizable]
) -> None:
    """A 429 asking to wait 20 s held a search 20 s (any wait up to timeout_seconds was
    taken); a query takes only a wait within its own query_timeout_seconds."""
    server, _ = ollama
    write_files(DOCS)
    settings = with_overrides(
        ollama_settings(settings, server.url), {"embeddings.query_timeout_seconds": 0.5}
    )
    with Briefd(settings) as api:
        assert api.index().vectors_missing == 0
    busy = json.dumps({"error": "rate limited"}).encode()
    server.on("POST", "/api/embed", lambda _: Reply(429, busy, headers=(("Retry-After", "20"),)))
    with Briefd(settings) as api:
        started = time.monotonic()
        found = api.search(SearchRequest("card retry"))
        assert time.monotonic() - started < 1.5
        assert found.mode == "bm25" and found.hits[0].heading == "Retry policy"
        (said,) = found.warnings
        assert "answered HTTP 429: rate limited; the service is rate limiting" in said


def test_the_server_answers_search_and_hook_soon_while_the_embedding_service_hangs(
    hung: tuple[FakeServer, Settings],
) -> None:
    """`briefd serve` as it runs (its embedder counted for /metrics): /api/search and the
    hook's route answer by keywords within the query timeout, not after timeout_seconds."""
    _, settings = hung
    metrics = Metrics()
    embedder = create_embedder(settings)
    assert embedder is not None
    with Briefd(settings, embedder=CountingEmbedder(embedder, metrics)) as api:
        started = time.monotonic()
        with TestClient(create_app(api, service_config(), metrics)) as http:
            http.headers["Authorization"] = f"Bearer {TOKEN}"
            found = http.get("/api/search", params={"q": "card retry"}).json()
            body = {"prompt": "How many times are failed card payments retried?"}
            hook = http.post("/api/hook/recall?format=json", json=body).json()
            took = time.monotonic() - started
    assert found["mode"] == "bm25" and found["hits"][0]["heading"] == "Retry policy"
    assert "did not answer a query within 0.5 s" in found["warnings"][0]
    assert "Failed card payments are retried" in hook["knowledge"]
    assert took < 3.0
