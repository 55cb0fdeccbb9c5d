"""A server's search waits a bounded time for the local model's query vector (R2, I2, O4).

On a busy machine (an index run embedding beside `briefd serve`, other processes on its cores)
a query's embedding took seconds, and the search waited for it under the server's lock, every
other request behind it; the prompt hook asking the server gives up after 2 s. Over the real
HTTP app and a real index, with a model that takes 3 s per query once the machine is "busy"."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.embeddings.base import EmbeddingKind, Vectors
from briefd.embeddings.fake import FakeEmbedder
from briefd.service import create_app
from briefd.settings import Settings, with_overrides
from tests.conftest import WriteFiles
from tests.service.conftest import service_config
from tests.service.live import TOKEN

QUERY = "how many times are failed card payments retried"
KNOWLEDGE = {
    "domain/retries.md": "# Retry policy\n\nFailed card payments are retried three times, "
    "a day apart, then the subscription is paused.\n",
    "domain/refunds.md": "# Refunds\n\nPartial refunds of a captured payment are allowed "
    "within 30 days.\n",
    "domain/disputes.md": "# Disputes\n\nA cardholder dispute freezes the amount until "
    "the issuer decides.\n",
}
WAITED = (
    "searched by keywords only (bm25): the embedding model failed (the model had not embedded "
    "the query within the 1 s a server's search waits for it: the machine is busy)"
)


class Busy(FakeEmbedder):
    """A real embedder whose queries take 3 s while ``busy`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.busy = threading.Event()

    def embed_batch(self, texts: Sequence[str], kind: EmbeddingKind) -> Vectors:
        if kind == "query" and self.busy.is_set():
            time.sleep(3.0)
        return super().embed_batch(texts, kind)


def finished(api: Briefd, *texts: str) -> None:
    """Wait for the model to finish the queries it had begun (cached once done), so the next
    test's searches do not queue behind them on the process's query worker; 20 s at most, so
    ``texts`` must be what the model was given (a prompt as the hook strips it)."""
    semantic = api.semantic
    assert semantic is not None
    deadline = time.monotonic() + 20
    while any(semantic.cached_vector(t) is None for t in texts) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [t for t in texts if semantic.cached_vector(t) is None] == []


def timed(http: TestClient, query: str) -> tuple[float, dict[str, object]]:
    started = time.monotonic()
    answer = http.get("/api/search", params={"q": query})
    assert answer.status_code == 200, answer.text
    return time.monotonic() - started, answer.json()


def headings(answer: dict[str, object]) -> list[object]:
    hits = answer["hits"]
    assert isinstance(hits, list)
    return [hit["heading"] for hit in hits]


def test_a_search_whose_query_the_model_has_not_embedded_in_time_answers_by_keywords(
    settings: Settings, write_files: WriteFiles
) -> None:
    """It took the model's 3 s (hybrid, no warning); now it answers by keywords after the
    server's 1 s, says why, and the same question asked once the model is done is hybrid."""
    embedder = Busy()
    with Briefd(settings, embedder=embedder) as api:
        api.index(write_files(KNOWLEDGE))
        with TestClient(create_app(api, service_config())) as http:
            http.headers["Authorization"] = f"Bearer {TOKEN}"
            _, quiet = timed(http, "card payment retries")
            assert (quiet["mode"], quiet["warnings"]) == ("hybrid", None)
            embedder.busy.set()
            took, busy = timed(http, QUERY)
            assert 1.0 <= took < 2.5, took  # not the model's 3 s
            assert (busy["mode"], busy["warnings"]) == ("bm25", [WAITED])
            assert "Retry policy" in headings(busy)
            body = {"prompt": "How many times are failed card payments retried?"}
            started = time.monotonic()
            hook = http.post("/api/hook/recall?format=json", json=body).json()
            assert time.monotonic() - started < 2.0  # inside the hook's 2 s
            assert (
                hook["mode"] == "bm25" and "Failed card payments are retried" in hook["knowledge"]
            )
            finished(api, QUERY, body["prompt"])  # the model finishes what it had begun
            _, again = timed(http, QUERY)
            assert (again["mode"], again["warnings"]) == ("hybrid", None)
            assert "Retry policy" in headings(again)


def test_a_long_prompt_the_model_has_not_embedded_in_time_is_answered_by_keywords(
    settings: Settings, write_files: WriteFiles
) -> None:
    """A prompt over 500 characters is embedded before the server's lock (ServiceState
    .embed_first), which waited the model's whole time: 3 s here, past the hook's 2 s. It
    waits the search's 1 s there, and the search under the lock does not wait again."""
    embedder = Busy()
    prompt = "How many times are failed card payments retried? " + "Some context. " * 40
    with Briefd(settings, embedder=embedder) as api:
        api.index(write_files(KNOWLEDGE))
        with TestClient(create_app(api, service_config())) as http:
            http.headers["Authorization"] = f"Bearer {TOKEN}"
            _, quiet = timed(http, "card payment retries")  # the model is warm
            assert quiet["mode"] == "hybrid"
            embedder.busy.set()
            started = time.monotonic()
            hook = http.post("/api/hook/recall?format=json", json={"prompt": prompt}).json()
            took = time.monotonic() - started
            finished(api, prompt.strip())  # the hook's query: the prompt stripped
    assert took < 2.0, took
    assert hook["mode"] == "bm25" and "Failed card payments are retried" in hook["knowledge"]
    assert hook["notes"] == [
        "answered by keywords only (bm25): the embedding model failed (the model had not "
        "embedded the query within the 1 s a server's search waits for it; it goes on, for "
        "the next ask)"
    ]


def test_the_wait_is_the_servers_setting(settings: Settings, write_files: WriteFiles) -> None:
    """serve.query_wait_seconds: a machine where one query takes the model longer raises it,
    and the warning says the wait configured."""
    embedder = Busy()
    shorter = with_overrides(settings, {"serve.query_wait_seconds": 0.3})
    with Briefd(shorter, embedder=embedder) as api:
        api.index(write_files(KNOWLEDGE))
        with TestClient(create_app(api, service_config())) as http:
            http.headers["Authorization"] = f"Bearer {TOKEN}"
            timed(http, "card payment retries")  # the server's warm-up is done, the model warm
            embedder.busy.set()
            took, busy = timed(http, QUERY)
            finished(api, QUERY)
    assert 0.3 <= took < 1.0, took
    assert busy["mode"] == "bm25" and "within the 0.3 s a server's search" in str(busy["warnings"])


def test_a_search_naming_no_server_waits_for_the_model(
    settings: Settings, write_files: WriteFiles
) -> None:
    """In-process (the CLI, an evaluation), the model is waited for as before."""
    embedder = Busy()
    with Briefd(settings, embedder=embedder) as api:
        api.index(write_files(KNOWLEDGE))
        from briefd.retrieval.search import SearchRequest

        embedder.busy.set()
        found = api.search(SearchRequest(QUERY))
    assert (found.mode, found.warnings) == ("hybrid", ())
