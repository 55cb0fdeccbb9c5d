"""The MCP instructions of a knowledge base with a scope per project (I1): a client puts them
before every conversation, and they named every scope (17 KB for 400 projects). They name the
default scopes and the first others, say how many more there are and that ``list_scopes``
names them all — which it does, in pages (1,000 project scopes were 47 KB of text and 64 KB
of JSON in one answer). Through the SDK's client on a real uvicorn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import Client

from briefd.api import Briefd
from briefd.service import create_app
from tests.conftest import WriteFiles
from tests.service.conftest import service_config, service_settings_for
from tests.service.live import serving
from tests.service.test_mcp import run

PROJECTS = 60


def projects(write_files: WriteFiles) -> Path:
    files = {
        "domain/glossary.md": "# Glossary\n\nTerms.\n",
        "conventions/style.md": "# Style\n\nRules.\n",
    }
    for n in range(PROJECTS):
        files[f"projects/svc-{n:02}/overview.md"] = f"# Service {n}\n\nWhat it does.\n"
    return write_files(files)


def test_the_instructions_name_some_scopes_and_list_scopes_every_one(
    tmp_path: Path, write_files: WriteFiles
) -> None:
    root = projects(write_files)

    async def body(client: Client) -> Any:
        return client.instructions, await client.call_tool("list_scopes", {})

    with Briefd(service_settings_for(root, tmp_path / "index.db"), embedder=None) as api:
        api.index()
        with serving(create_app(api, service_config())) as base:
            instructions, scopes = run(base + "/mcp", "auto", body)
    said = instructions or ""
    assert (
        f"{PROJECTS + 2} documents in scopes: conventions (1 doc, 1 section), domain (1 doc" in said
    )
    assert "projects/svc-17 (1 doc, 1 section), and 42 more (list_scopes names them all)." in said
    assert "projects/svc-18" not in said
    assert "Default scopes: domain, conventions; pass scopes=['projects/svc-00']" in said
    assert len(said) < 2000, len(said)
    listed = [s["name"] for s in scopes.structured_content["scopes"]]
    assert len(listed) == PROJECTS + 2 and "projects/svc-59" in listed


def test_list_scopes_lists_a_page_and_says_how_to_read_on(
    tmp_path: Path, write_files: WriteFiles
) -> None:
    root = projects(write_files)

    async def body(client: Client) -> list[Any]:
        return [
            await client.call_tool("list_scopes", args)
            for args in ({"limit": 25}, {"limit": 25, "offset": 50}, {"offset": 90}, {"limit": 201})
        ]

    with Briefd(service_settings_for(root, tmp_path / "index.db"), embedder=None) as api:
        api.index()
        with serving(create_app(api, service_config())) as base:
            first, last, past, over = run(base + "/mcp", "auto", body)
    names = ["conventions", "domain", *(f"projects/svc-{n:02}" for n in range(PROJECTS))]
    assert "[25 of 62 scopes shown: call list_scopes with offset=25, limit=37 for the next]" in (
        first.content[0].text
    )
    assert [s["name"] for s in first.structured_content["scopes"]] == names[:25]
    assert (first.structured_content["total"], first.structured_content["offset"]) == (62, 0)
    assert [s["name"] for s in last.structured_content["scopes"]] == names[50:]
    assert "[51-62 of 62 scopes shown: the last of them]" in last.content[0].text
    assert past.structured_content["scopes"] == []
    assert "No scopes from offset=90: there are 62; call list_scopes with offset=0" in (
        past.content[0].text
    )
    assert over.is_error
    assert "limit: Input should be less than or equal to 200" in over.content[0].text
