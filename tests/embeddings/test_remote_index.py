"""Index runs and searches against remote embedding services (real wire formats on 127.0.0.1)
as they behave in use: another model answering under the same name gives vectors of another
size (searches fall back to keywords saying why, and the next index run embeds everything
again instead of mixing sizes, which raised tracebacks everywhere and which even `index
--rebuild` could not mend); a service down at query time; a service capping a request's
inputs; a rate limit asking to wait."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator

import numpy as np
import pytest

from briefd.api import Briefd
from briefd.bundles import BundleRequest
from briefd.errors import EmbeddingError
from briefd.recall.engine import RecallRequest
from briefd.retrieval.search import SearchRequest
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
        assert (again.diagnostics.search_mode, again.warnings) == ("hybrid", ())


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
