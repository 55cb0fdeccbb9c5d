"""The index file deleted under a running server (I9): the server makes a new, empty one and a
sync fills it from the source, which takes minutes with embeddings. Meanwhile requests are told
the index is being built, as during a first index, not answered from the half-filled file (no
hits, ``documents: 0``, an agent concluding the knowledge base is empty)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.service import create_app
from tests.embeddings.fakehttp import FakeServer, Reply, Request, fake_server
from tests.embeddings.test_ollama import embed_reply
from tests.service.conftest import service_config, service_settings_for
from tests.service.live import TOKEN
from tests.service.test_stdio_start import DOCS, slow_settings
from tests.sync.test_routes import eventually


@pytest.fixture
def gate() -> threading.Event:
    """Open: the fake Ollama below embeds the knowledge at once; shut: it holds those requests
    (a long embedding run) until it opens again."""
    opened = threading.Event()
    opened.set()
    return opened


@pytest.fixture
def held_ollama(gate: threading.Event) -> Iterator[FakeServer]:
    def held(request: Request) -> Reply:
        if any("kiwi" in text.lower() for text in request.json()["input"]):
            gate.wait(20)
        return embed_reply(request)

    with fake_server() as server:
        server.on("POST", "/api/embed", held)
        yield server


def test_a_deleted_index_file_is_being_built_until_it_is_filled_again(
    tmp_path: Path, write_files: Any, held_ollama: FakeServer, gate: threading.Event
) -> None:
    settings = slow_settings(write_files(DOCS), tmp_path / "index.db", held_ollama)
    with Briefd(settings) as api:
        api.index()
        with TestClient(create_app(api, service_config(flush_seconds=0.2))) as client:
            client.headers["Authorization"] = f"Bearer {TOKEN}"
            assert client.get("/api/health").json()["documents"] == 6
            gate.clear()
            for suffix in ("", "-wal", "-shm"):
                Path(f"{settings.db}{suffix}").unlink(missing_ok=True)
            health = client.get("/api/health").json()
            assert (health["status"], health["documents"]) == ("building", 0)
            assert health["notice"].startswith("the index file was deleted at ")
            assert "briefd is filling a new one from the source" in health["notice"]
            answer = client.get("/api/search", params={"q": "kiwi batch settles"})
            assert answer.status_code == 503, answer.text
            assert answer.json()["detail"] == health["notice"]
            gate.set()
            assert eventually(lambda: client.get("/api/health").json()["status"] == "ok", 30)
            health = client.get("/api/health").json()
            assert health["documents"] == 6
            hits = client.get("/api/search", params={"q": "kiwi batch settles"}).json()["hits"]
            assert hits and hits[0]["doc_path"].startswith("domain/kiwi-")


def test_after_a_refill_health_says_how_it_ended(tmp_path: Path, write_files: Any) -> None:
    """Not "fills it from the source" until the server restarts: that it did (or failed to)."""
    root = write_files(DOCS)
    settings = service_settings_for(root, tmp_path / "index.db")
    with Briefd(settings, embedder=None) as api:
        api.index()
        with TestClient(create_app(api, service_config(flush_seconds=0.2))) as client:
            client.headers["Authorization"] = f"Bearer {TOKEN}"
            for round, expected in ((1, "briefd filled a new one from the source at "), (2, "")):
                if round == 2:  # the source gone too: the refill fails, and says why
                    root.rename(tmp_path / "elsewhere")
                    expected = "filling a new one from the source failed at "
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{settings.db}{suffix}").unlink(missing_ok=True)
                assert (
                    client.get("/api/health")
                    .json()["notice"]
                    .startswith("the index file was deleted at ")
                )
                assert eventually(lambda: client.get("/api/health").json()["status"] != "building")
                notice = client.get("/api/health").json()["notice"]
                assert expected in notice, notice
                assert "fills it from the source" not in notice
            assert str(root) in notice
