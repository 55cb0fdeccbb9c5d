"""An index that holds no document yet (a first ``briefd index`` interrupted, a server started
before its first sync), through the SDK's MCP client and the real ``briefd search``: what
comes back says the index is empty, not that the knowledge has nothing on the topic."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from briefd.api import Briefd
from briefd.service import create_app
from briefd.store.db import Store
from tests.cli.test_cli import briefd
from tests.service.conftest import service_config, service_settings_for
from tests.service.live import serving
from tests.service.test_mcp import run


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
            "indexed yet), so there is nothing to search."
        )


def test_cli_search_of_an_empty_index_says_to_index_it(tmp_path: Path, empty_db: Path) -> None:
    result = briefd("--db", str(empty_db), "search", "refund window", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Nothing found: no document is indexed yet; run `briefd index`.\n"
