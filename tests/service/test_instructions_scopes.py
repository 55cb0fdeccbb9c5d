"""The MCP instructions of a knowledge base with a scope per project (I1): a client puts them
before every conversation, and they named every scope (17 KB for 400 projects). They name the
default scopes and the first others, say how many more there are and that ``list_scopes``
names every one — which it does. Through the SDK's client on a real uvicorn."""

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


def test_the_instructions_name_some_scopes_and_list_scopes_every_one(
    tmp_path: Path, write_files: WriteFiles
) -> None:
    files = {
        "domain/glossary.md": "# Glossary\n\nTerms.\n",
        "conventions/style.md": "# Style\n\nRules.\n",
    }
    for n in range(PROJECTS):
        files[f"projects/svc-{n:02}/overview.md"] = f"# Service {n}\n\nWhat it does.\n"
    root = write_files(files)

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
    assert "projects/svc-17 (1 doc, 1 section), and 42 more (list_scopes names every one)." in said
    assert "projects/svc-18" not in said
    assert "Default scopes: domain, conventions; pass scopes=['projects/svc-00']" in said
    assert len(said) < 2000, len(said)
    listed = [s["name"] for s in scopes.structured_content["scopes"]]
    assert len(listed) == PROJECTS + 2 and "projects/svc-59" in listed
