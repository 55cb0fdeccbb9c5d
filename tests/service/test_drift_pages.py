"""Drift of a big knowledge base in pages (T4, I1, I2): where a team's refs cover much of its
code, thousands of documents drift, each with up to 20 commits. ``knowledge_drift`` (the
SDK's client on a real uvicorn) lists ``limit`` of them from ``offset`` and says how to read
on; ``GET /api/drift`` answers everything by default, as it did, and a page when asked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp import Client

from briefd.api import Briefd
from briefd.service import create_app
from tests.service.conftest import service_config
from tests.service.live import TOKEN, mcp_session, serving
from tests.team.coderepo import Repo, settings_for

DOCS = 27


def governing(n: int) -> str:
    return (
        f'---\ntitle: Module {n:02d}\nrefs: ["svc/m{n:02d}/**"]\n---\n# Module {n:02d}\n\nRules.\n'
    )


@pytest.fixture
def drifting_api(tmp_path: Path) -> Iterator[Briefd]:
    """``DOCS`` documents, each governing a module of a code repository that changed after
    them (the module's commit dated by its number, so the order is known)."""
    knowledge = Repo(tmp_path / "knowledge")
    files = {f"domain/m{n:02d}.md": governing(n) for n in range(DOCS)}
    knowledge.commit(files, "Knowledge", "2026-03-01T09:00:00+00:00")
    code = Repo(tmp_path / "app")
    for n in range(DOCS):
        at = f"2026-03-{2 + n % 27:02d}T10:00:00+00:00"
        code.commit({f"svc/m{n:02d}/main.py": f"N = {n}\n"}, f"Change module {n:02d}", at)
    settings = settings_for(tmp_path, knowledge, {"source": str(code.path), "name": "app"})
    with Briefd(settings, embedder=None) as api:
        api.index()
        yield api


def test_knowledge_drift_lists_a_page_and_says_how_to_read_on(drifting_api: Briefd) -> None:
    async def body(client: Client) -> list[Any]:
        return [
            await client.call_tool("knowledge_drift", args)
            for args in ({}, {"offset": 20}, {"limit": 5, "offset": 100}, {"limit": 101})
        ]

    with serving(create_app(drifting_api, service_config())) as base:
        first, rest, past, over = mcp_session(base + "/mcp", body)
    out = first.structured_content
    listed = [d["doc_path"] for d in out["documents"]]
    assert listed == [f"domain/m{n:02d}.md" for n in range(20)]  # longest drifting first
    assert out["drifting"] == DOCS and out["offset"] == 0 and out["governed"] == DOCS
    text = first.content[0].text
    assert text.startswith(f"{DOCS} of {DOCS} documents with refs drift (app (")
    assert text.endswith(
        f"[20 of {DOCS} drifting documents shown: call knowledge_drift with offset=20, "
        "limit=7 for the next]"
    )
    assert [d["doc_path"] for d in rest.structured_content["documents"]] == [
        f"domain/m{n:02d}.md" for n in range(20, DOCS)
    ]
    assert rest.content[0].text.endswith(
        f"[21-{DOCS} of {DOCS} drifting documents shown: the last of them]"
    )
    assert past.structured_content["documents"] == []
    assert f"No drifting documents from offset=100: {DOCS} drift" in past.content[0].text
    assert over.is_error and "limit: Input should be less than or equal to 100" in (
        over.content[0].text
    )


def test_rest_drift_answers_everything_by_default_and_a_page_when_asked(
    drifting_api: Briefd,
) -> None:
    with TestClient(create_app(drifting_api, service_config())) as http:
        http.headers["Authorization"] = f"Bearer {TOKEN}"
        whole = http.get("/api/drift").json()
        some = http.get("/api/drift", params={"limit": 4, "offset": 24}).json()
        bad = http.get("/api/drift", params={"limit": 0})
    assert len(whole["documents"]) == whole["drifting"] == DOCS
    assert [d["doc_path"] for d in some["documents"]] == [
        f"domain/m{n:02d}.md" for n in range(24, DOCS)
    ]
    assert some["drifting"] == DOCS and some["offset"] == 24
    assert bad.status_code == 422
    assert bad.json()["detail"] == "query.limit: Input should be greater than or equal to 1"


def test_knowledge_drift_lists_some_refs_that_cover_nothing_and_counts_all(
    tmp_path: Path,
) -> None:
    """A code repository of other paths (a wrong one configured, code moved) leaves every
    governed document's refs covering nothing: 2,000 such documents made knowledge_drift's
    structuredContent 188 KB (its text 1.5 KB), every one listed in ``uncovered``."""
    knowledge = Repo(tmp_path / "knowledge")
    files = {f"domain/u{n:03d}.md": governing(n) for n in range(120)}
    knowledge.commit(files, "Knowledge", "2026-03-01T09:00:00+00:00")
    code = Repo(tmp_path / "app")
    code.commit({"other/main.py": "x\n"}, "Other code", "2026-03-02T10:00:00+00:00")
    settings = settings_for(tmp_path, knowledge, {"source": str(code.path), "name": "app"})

    async def body(client: Client) -> Any:
        return await client.call_tool("knowledge_drift", {})

    with Briefd(settings, embedder=None) as api:
        api.index()
        with serving(create_app(api, service_config())) as base:
            result = mcp_session(base + "/mcp", body)
        with TestClient(create_app(api, service_config())) as http:
            http.headers["Authorization"] = f"Bearer {TOKEN}"
            rest = http.get("/api/drift").json()
    out = result.structured_content
    assert [u["doc_path"] for u in out["uncovered"]] == sorted(files)[:100]
    assert out["uncovered_count"] == 120
    assert "120 documents with refs globs that cover no file" in result.content[0].text
    assert result.content[0].text.endswith("  … and 100 more (JSON: uncovered, the first 100)")
    assert len(rest["uncovered"]) == rest["uncovered_count"] == 120
