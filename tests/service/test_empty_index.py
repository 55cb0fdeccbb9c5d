"""An index that holds no document yet (a first ``briefd index`` interrupted, a server started
before its first sync), through the SDK's MCP client and the real ``briefd search``: what
comes back says the index is empty, not that the knowledge has nothing on the topic."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client

from briefd.api import Briefd
from briefd.service import create_app
from briefd.store.db import Store
from tests.cli.test_cli import briefd
from tests.service.conftest import service_config, service_settings_for
from tests.service.live import TOKEN, serving
from tests.service.test_mcp import run

EMPTY = (
    "the knowledge base is empty (no document is indexed yet), so there is nothing to search; "
    "index the source: `briefd index`, or on a server POST /api/admin/rebuild (the dashboard's "
    "rebuild)"
)


@pytest.fixture
def empty_db(tmp_path: Path) -> Path:
    db = tmp_path / "index.db"
    Store.open(db, create=True).close()
    return db


@pytest.fixture
def url(tmp_path: Path, empty_db: Path) -> Iterator[str]:
    settings = service_settings_for(tmp_path / "knowledge", empty_db)
    with Briefd(settings, embedder=None) as api, serving(create_app(api, service_config())) as base:
        yield base + "/mcp"


def test_mcp_search_of_an_empty_index_says_nothing_is_indexed(url: str) -> None:
    async def body(client: Client) -> Any:
        plain = await client.call_tool("search_context", {"query": "refund window"})
        every = await client.call_tool("search_context", {"query": "refund", "scopes": ["all"]})
        return client.instructions, plain, every

    instructions, plain, every = run(url, "auto", body)
    assert instructions is not None and "indexed yet.." not in instructions
    assert "The index is empty: nothing has been indexed yet. Default scopes" in instructions
    for result, query in ((plain, "refund window"), (every, "refund")):
        assert not result.is_error and result.structured_content["hits"] == []
        assert result.content[0].text == (
            f"Nothing returned for '{query}': the knowledge base is empty (no document is "
            "indexed yet), so there is nothing to search; index the source: `briefd index`, or "
            "on a server POST /api/admin/rebuild (the dashboard's rebuild)."
        )
        assert result.structured_content["note"] == EMPTY


def test_rest_search_of_an_empty_index_says_nothing_is_indexed_and_what_to_run(url: str) -> None:
    """GET /api/search answered {"hits": [], "scopes": [], "note": null}: nothing told a client
    the index was empty (a first index killed before it stored anything, a source with no
    document yet) rather than without anything on the topic, while the MCP text said so."""
    base = url.removesuffix("/mcp")
    headers = {"Authorization": f"Bearer {TOKEN}"}
    for params in ({"q": "refund window"}, {"q": "refund", "scopes": "all", "max_tokens": "50"}):
        answer = httpx.get(f"{base}/api/search", params=params, headers=headers, timeout=30)
        assert answer.status_code == 200, answer.text
        found = answer.json()
        assert (found["hits"], found["scopes"], found["note"]) == ([], [], EMPTY)


def test_cli_search_of_an_empty_index_says_to_index_it(tmp_path: Path, empty_db: Path) -> None:
    result = briefd("--db", str(empty_db), "search", "refund window", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Nothing found: no document is indexed yet; run `briefd index`.\n"


def test_cli_search_json_of_an_empty_index_carries_rests_note(tmp_path: Path) -> None:
    """``briefd search --json`` of an index built from a folder with no document answered
    ``"hits": []`` and nothing else, while REST's note says the index is empty and what to
    run: the JSON now carries the same note (and null when there are documents to search)."""
    (tmp_path / "emptydir").mkdir()
    briefd("--db", "e/x.db", "index", "--source", "emptydir", cwd=tmp_path)
    result = briefd("--db", "e/x.db", "search", "x", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert (found["hits"], found["scopes"], found["note"]) == ([], [], EMPTY)
    (tmp_path / "emptydir" / "domain").mkdir()
    (tmp_path / "emptydir" / "domain" / "refunds.md").write_text("# Refunds\n\nWithin 30 days.\n")
    assert briefd("--db", "e/x.db", "index", "--source", "emptydir", cwd=tmp_path).returncode == 0
    found = json.loads(briefd("--db", "e/x.db", "search", "refunds", "--json", cwd=tmp_path).stdout)
    assert found["hits"] and found["note"] is None
