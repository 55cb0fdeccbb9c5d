"""Proposals over REST and MCP against a real bare git remote, no forge (T1, I1, I2): what a
client is told when the remote refuses the push, and that the OpenAPI document says so."""

from __future__ import annotations

from typing import Any

import httpx2
from mcp import Client
from mcp_types import CallToolResult

from briefd.api import Briefd
from briefd.service import create_app
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving
from tests.service.test_mcp import run
from tests.sync.conftest import git_api, remote
from tests.sync.gitrepo import RETRY, Remote

__all__ = ["git_api", "remote"]  # fixtures with a real bare git remote

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def refuse_pushes(remote: Remote) -> None:
    hook = remote.bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'branch protection: no pushes' >&2\nexit 1\n")
    hook.chmod(0o755)


def propose_four_retries(api: Briefd) -> tuple[Any, CallToolResult, Any, Any]:
    """One change to domain/retry.md proposed over REST and over MCP on a real server: the
    REST answer, the tool's result, the OpenAPI schema and the proposals listed after."""
    change = {
        "doc_path": "domain/retry.md",
        "change_description": "Four",
        "new_content": RETRY.replace("three times", "four times").lstrip("\n"),
    }

    async def body(client: Client) -> CallToolResult:
        return await client.call_tool("propose_update", change)

    with serving(create_app(api, service_config())) as base:
        answer = httpx2.post(base + "/api/proposals", json=change, headers=AUTH, timeout=60)
        tool = run(base + "/mcp", "legacy", body)
        schema = httpx2.get(base + "/openapi.json", headers=AUTH).json()
        listed = httpx2.get(base + "/api/proposals", headers=AUTH).json()
    return answer, tool, schema, listed


def test_a_push_the_remote_refuses_is_a_documented_502(git_api: Briefd, remote: Remote) -> None:
    git_api.sync()
    refuse_pushes(remote)
    answer, tool, schema, listed = propose_four_retries(git_api)
    assert answer.status_code == 502
    assert answer.json()["error"] == "proposal_remote"
    assert "pre-receive hook declined" in answer.json()["detail"]
    assert tool.is_error and "pre-receive hook declined" in tool.content[0].text  # type: ignore[union-attr]
    assert listed == {"proposals": [], "counts": {}, "total": 0, "next_cursor": None}  # none stored
    responses = schema["paths"]["/api/proposals"]["post"]["responses"]
    assert "502" in responses
    assert responses["502"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ErrorBody"
    }


def test_a_document_changed_since_the_sync_is_a_documented_409(
    git_api: Briefd, remote: Remote
) -> None:
    git_api.sync()
    remote.push({"domain/retry.md": RETRY.replace("three", "two")}, "Two retries")
    answer, tool, schema, _ = propose_four_retries(git_api)
    said = "domain/retry.md changed on main since the commit this server serves"
    assert answer.status_code == 409 and answer.json()["error"] == "proposal_conflict"
    assert said in answer.json()["detail"] and "Two retries" in answer.json()["detail"]
    assert tool.is_error and said in tool.content[0].text  # type: ignore[union-attr]
    assert "409" in schema["paths"]["/api/proposals"]["post"]["responses"]


def test_a_proposal_whose_record_waits_for_the_index_is_listed(
    git_api: Briefd, remote: Remote
) -> None:
    """T1, O2: a proposal pushed while the index could not take its record (another process's
    long write, a full disk) was answered 201, but GET /api/proposals (and the repeat checks)
    did not show it until some bundle happened to flush the waiting writes: the client that
    was told it is stored could not find it; /api/stats left it out of its proposal counts.
    It is listed and counted while it waits, and written once the index takes writes again."""
    git_api.sync()
    change = {
        "doc_path": "domain/retry.md",
        "change_description": "Four",
        "new_content": RETRY.replace("three times", "four times").lstrip("\n"),
    }
    with serving(create_app(git_api, service_config())) as base:
        git_api.store.conn.execute("PRAGMA query_only = ON")  # every write refused: a full disk
        made = httpx2.post(base + "/api/proposals", json=change, headers=AUTH, timeout=60)
        assert made.status_code == 201, made.text
        stats = httpx2.get(base + "/api/stats", headers=AUTH).json()
        listed = httpx2.get(base + "/api/proposals", headers=AUTH).json()
        git_api.store.conn.execute("PRAGMA query_only = OFF")  # space freed
        after = httpx2.get(base + "/api/proposals?status=pushed", headers=AUTH).json()

    assert [p["id"] for p in listed["proposals"]] == [made.json()["id"]]
    assert listed["counts"] == {"pushed": 1} and listed["total"] == 1
    # /api/stats (the dashboard's proposals card) counted it only once written
    assert stats["proposals"] == {"open": 0, "merged": 0, "closed": 0, "pushed": 1}
    assert after["proposals"] == listed["proposals"]
    assert git_api.store.unsaved() == []  # written: the listing flushed it
