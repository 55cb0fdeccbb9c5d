"""`briefd serve` with a long first index ahead of it (I2, I5, K3, O5): it listened only once
the whole index was built (about a minute per 300 sections), so the dashboard, the health
check and every agent hung on a connection nobody answered. The update gets a bounded wait,
then goes on beside the server; meanwhile health says ``building`` (alive, not yet healthy for
a container), requests say the index is being built, and the index serves once committed."""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from briefd.api import Briefd
from briefd.cli.serve import prepared_beside
from briefd.service import create_app
from briefd.settings import with_overrides
from tests.embeddings.fakehttp import FakeServer, closed_port_url
from tests.service.conftest import service_config
from tests.service.live import serving
from tests.service.test_stdio_start import DOCS, slow_ollama, slow_settings

__all__ = ["slow_ollama"]  # the fixture, used by name
ROOT = Path(__file__).resolve().parents[2]


def _healthcheck() -> Any:
    spec = importlib.util.spec_from_file_location("healthcheck", ROOT / "docker/healthcheck.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_first_index_longer_than_the_wait_is_served_beside_it(
    tmp_path: Path, write_files: Any, slow_ollama: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = slow_settings(write_files(DOCS), tmp_path / "fresh.db", slow_ollama)
    started = time.monotonic()
    api, metrics, building, _ = prepared_beside(settings, False, 0.2, "serving")
    assert time.monotonic() - started < 1.5 and building()
    app = create_app(
        api, service_config(allowed_hosts=("127.0.0.1",), token=None), metrics, building
    )
    check = _healthcheck()
    try:
        with serving(app) as base:
            health = httpx.get(f"{base}/api/health", timeout=5)
            assert health.status_code == 200 and health.json()["status"] == "building"
            assert "being built for the first time" in health.json()["notice"]
            search = httpx.get(f"{base}/api/search", params={"q": "kiwi batch"}, timeout=5)
            assert search.status_code == 503
            assert "being built for the first time" in search.json()["detail"]
            scraped = httpx.get(f"{base}/metrics", timeout=5).text
            assert "briefd_index_documents 0.0" in scraped
            monkeypatch.setattr(check, "SERVER_CMDLINE", tmp_path / "none")
            monkeypatch.setenv("BRIEFD_SERVE__PORT", base.rsplit(":", 1)[1])
            assert check.main() == 1  # alive, but a container is not healthy before its index
            deadline = time.monotonic() + 60
            while building() and time.monotonic() < deadline:
                time.sleep(0.1)
            health = httpx.get(f"{base}/api/health", timeout=5)
            assert health.json()["status"] == "ok" and health.json()["documents"] == len(DOCS)
            hits = httpx.get(f"{base}/api/search", params={"q": "kiwi batch"}, timeout=5)
            assert hits.json()["hits"][0]["doc_path"].startswith("domain/kiwi-")
            assert check.main() == 0
    finally:
        api.close()


def test_a_bundle_asked_for_while_the_first_index_runs_is_said_to_be_building(
    tmp_path: Path, write_files: Any, slow_ollama: FakeServer
) -> None:
    """compile_bundle and document_context (REST and MCP share ServiceState.compile_bundle)
    said "the index is empty; build it with `briefd index` first" while the server was
    building it: a user told to run a second index beside the one running."""
    settings = slow_settings(write_files(DOCS), tmp_path / "fresh.db", slow_ollama)
    api, metrics, building, _ = prepared_beside(settings, False, 0.2, "serving")
    assert building()
    app = create_app(
        api, service_config(allowed_hosts=("127.0.0.1",), token=None), metrics, building
    )
    try:
        with serving(app) as base:
            bundle = httpx.post(f"{base}/api/bundle", json={"task": "kiwi batch"}, timeout=5)
            context = httpx.post(
                f"{base}/api/context", json={"doc_path": "domain/kiwi-0.md"}, timeout=5
            )
            for answer in (bundle, context):
                assert answer.status_code == 503, answer.text
                assert "being built for the first time" in answer.json()["detail"]
                assert "briefd index" not in answer.json()["detail"]
            deadline = time.monotonic() + 60
            while building() and time.monotonic() < deadline:
                time.sleep(0.1)
            built = httpx.post(f"{base}/api/bundle", json={"task": "kiwi batch"}, timeout=5)
            assert "domain/kiwi-" in built.json()["text"]
    finally:
        api.close()


def test_a_server_starts_and_searches_by_keywords_while_the_embedding_service_is_down(
    tmp_path: Path, write_files: Any, slow_ollama: FakeServer
) -> None:
    """`briefd serve` and `briefd mcp` stopped at start with 'error: Ollama at … cannot be
    reached' while the embedding service was away (restarted together with the Ollama host: a
    container in a restart loop), before serving an index whose searches fall back to
    keywords. The server now starts and says why its searches are by keywords."""
    settings = slow_settings(write_files(DOCS), tmp_path / "kept.db", slow_ollama)
    with Briefd(settings) as built:
        assert built.index().vectors_missing == 0
    away = with_overrides(settings, {"embeddings.base_url": closed_port_url()})
    api, metrics, building, _ = prepared_beside(away, False, 5.0, "serving")
    app = create_app(
        api, service_config(allowed_hosts=("127.0.0.1",), token=None), metrics, building
    )
    try:
        with serving(app) as base:
            found = httpx.get(f"{base}/api/search", params={"q": "kiwi batch"}, timeout=5).json()
            assert found["mode"] == "bm25" and found["hits"][0]["doc_path"].startswith(
                "domain/kiwi-"
            )
            (said,) = found["warnings"]
            assert "the embedding model failed (Ollama at" in said and "cannot be reached" in said
    finally:
        api.close()
