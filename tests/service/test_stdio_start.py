"""`briefd mcp` with a long index update ahead of it (I9): a client gives up on a server that
does not answer its handshake in time, and a first index takes about a minute per 300
sections. The update gets a bounded wait, then goes on beside the protocol; meanwhile a tool
says the index is being built instead of that there is none (or that nothing matched)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client

from briefd.cli.serve import prepared_beside
from briefd.errors import IndexNotFoundError
from briefd.retrieval.search import SearchRequest
from briefd.service import create_app
from briefd.service.config import ServiceConfig
from briefd.service.state import ServiceState
from briefd.settings import Settings, with_overrides
from tests.embeddings.fakehttp import FakeServer, Reply, Request, fake_server
from tests.embeddings.test_ollama import embed_reply
from tests.service.conftest import service_config, service_settings_for
from tests.service.live import serving
from tests.service.test_mcp import run

DOCS = {
    f"domain/kiwi-{n}.md": f"# Kiwi batch {n}\n\nKiwi batch {n} settles at noon.\n"
    for n in range(6)
}


@pytest.fixture
def slow_ollama() -> Iterator[FakeServer]:
    """Ollama's /api/embed, taking 0.3 s a request that carries the knowledge's text (the
    calibration probes, each a request of its own at batch_size 1, are answered at once)."""

    def slow(request: Request) -> Reply:
        if any("kiwi" in text.lower() for text in request.json()["input"]):
            time.sleep(0.3)
        return embed_reply(request)

    with fake_server() as server:
        server.on("POST", "/api/embed", slow)
        yield server


def slow_settings(root: Any, db: Any, server: FakeServer) -> Settings:
    return with_overrides(
        service_settings_for(root, db),
        {
            "embeddings.enabled": True,
            "embeddings.adapter": "ollama",
            "embeddings.model": "nomic-embed-text",
            "embeddings.base_url": server.url,
            "embeddings.batch_size": 1,
        },
    )


def test_a_first_index_still_running_is_said_to_be_building(
    tmp_path: Any, write_files: Any, slow_ollama: FakeServer
) -> None:
    settings = slow_settings(write_files(DOCS), tmp_path / "fresh.db", slow_ollama)
    started = time.monotonic()
    api, metrics, building, _ = prepared_beside(settings, False, 0.2, "answering MCP")
    try:
        assert time.monotonic() - started < 1.5 and building()
        state = ServiceState(api, ServiceConfig.from_settings(settings.serve), metrics)
        state.first_build = building
        search = SearchRequest("kiwi batch settles at noon", scopes=("all",))
        with pytest.raises(IndexNotFoundError, match="being built for the first time"):
            state.call("mcp", "search_context", lambda: api.search(search))
        deadline = time.monotonic() + 60
        while building() and time.monotonic() < deadline:
            time.sleep(0.1)
        hits = state.call("mcp", "search_context", lambda: api.search(search)).hits
        assert hits and hits[0].doc_path.startswith("domain/kiwi-")
    finally:
        api.close()


def test_an_update_done_within_the_wait_is_served_at_once(
    tmp_path: Any, write_files: Any, slow_ollama: FakeServer
) -> None:
    settings = slow_settings(
        write_files(dict(list(DOCS.items())[:1])), tmp_path / "a.db", slow_ollama
    )
    api, _, building, _ = prepared_beside(
        settings, False, settings.serve.index_wait_seconds, "answering MCP"
    )
    try:
        assert not building()
        assert api.search(SearchRequest("kiwi batch settles", scopes=("all",))).hits
    finally:
        api.close()


def test_a_client_that_connects_during_a_first_index_is_told_it_is_coming(
    tmp_path: Any, write_files: Any, slow_ollama: FakeServer
) -> None:
    """The instructions are read once, when a client connects (a spawned `briefd mcp` is
    connected to while its first index runs): they say the knowledge is on its way, not that
    the index is empty, which the model would believe for the whole session."""
    settings = slow_settings(write_files(DOCS), tmp_path / "fresh.db", slow_ollama)
    api, metrics, building, _ = prepared_beside(settings, False, 0.2, "answering MCP")

    async def body(client: Client) -> Any:
        return client.instructions, await client.call_tool("search_context", {"query": "kiwi"})

    try:
        assert building()
        with serving(create_app(api, service_config(), metrics, building)) as base:
            said, search = run(base + "/mcp", "legacy", body)
            assert building(), "the first index ended before the client was answered"
    finally:
        api.close()
    assert said is not None and "The index is being built for the first time" in said
    assert "empty" not in said
    assert search.is_error and "being built" in search.content[0].text
