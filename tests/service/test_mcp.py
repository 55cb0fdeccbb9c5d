"""MCP through the SDK's own client against the app on a real uvicorn, in both protocol eras:
the 2025 initialize handshake (``mode="legacy"``) and the current stateless revision."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import jsonschema
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

from briefd.api import Briefd
from briefd.service import create_app
from briefd.settings import load_settings
from briefd.tokens import count_tokens
from tests.conftest import EXAMPLE
from tests.service.conftest import service_config, service_settings_for
from tests.service.live import TOKEN, serving
from tests.sync.conftest import git_api, remote
from tests.sync.gitrepo import RETRY, Remote, git

__all__ = ["git_api", "remote"]  # fixtures with a real bare git remote

PASTED = (EXAMPLE / "domain" / "refunds.md").read_text()  # a page pasted as the query
MODES = ["legacy", "auto"]  # auto: server/discover, then the current stateless revision
READ_ONLY = {
    "search_context",
    "compile_bundle",
    "document_context",
    "get_document",
    "list_scopes",
    "suggest_links",
}
READ_ONLY |= {"knowledge_gaps", "knowledge_drift", "knowledge_usage"}
ALL_TOOLS = READ_ONLY | {"report_usage"}  # propose_update: only when proposals are on

Session = Callable[[Client], Awaitable[Any]]


@pytest.fixture
def url(service_api: Briefd) -> Iterator[str]:
    with serving(create_app(service_api, service_config())) as base:
        yield base + "/mcp"


def run(url: str, mode: str, body: Session, token: str = TOKEN) -> Any:
    async def main() -> Any:
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport, mode=mode) as client:
                return await body(client)

    return anyio.run(main)


def check(result: CallToolResult, schema: dict[str, Any] | None) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.content[0].type == "text" and result.content[0].text  # type: ignore[union-attr]
    assert schema is not None and result.structured_content is not None
    jsonschema.validate(result.structured_content, schema)
    return result.structured_content


@pytest.mark.parametrize("mode", MODES)
def test_tools_are_listed_with_hints_and_schemas(url: str, mode: str) -> None:
    async def body(client: Client) -> Any:
        return client.protocol_version, client.instructions, (await client.list_tools()).tools

    version, instructions, tools = run(url, mode, body)
    assert version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
    assert instructions is not None and "45 documents" in instructions
    assert "domain (18 docs" in instructions
    assert {t.name for t in tools} == ALL_TOOLS
    for tool in tools:
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is (tool.name in READ_ONLY), tool.name
        assert tool.output_schema is not None, tool.name
        assert tool.description and len(tool.description.encode()) < 2048, tool.name
    search = next(t for t in tools if t.name == "search_context")
    assert set(search.input_schema["properties"]) == {
        "query",
        "max_tokens",
        "scopes",
        "top_k",
        "paths",
        "tags",
    }
    assert search.input_schema["required"] == ["query"]


def test_the_search_and_usage_descriptions_say_what_the_tools_do(url: str) -> None:
    """What the model reads before calling: an empty search is not always "nothing on the
    topic", max_tokens bounds the whole answer (fields too), top_k counts ranked hits only,
    and a document_context bundle_id is reported like a compile_bundle one."""

    async def body(client: Client) -> Any:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        tiny = await client.call_tool(
            "search_context", {"query": "partial refunds", "max_tokens": 1}
        )
        two = await client.call_tool(
            "search_context", {"query": "refund a captured payment", "top_k": 2, "max_tokens": 8000}
        )
        held = await client.call_tool("document_context", {"doc_path": "domain/refunds.md"})
        bundle = held.structured_content or {}
        chunk = bundle["items"][0]["chunk_id"]
        usage = await client.call_tool(
            "report_usage", {"bundle_id": bundle["bundle_id"], "useful_chunk_ids": [chunk]}
        )
        return tools, tiny, two, usage

    tools, tiny, two, usage = run(url, "auto", body)
    search = tools["search_context"]
    assert tiny.structured_content["hits"] == [] and "too small" in tiny.structured_content["note"]
    assert "means the knowledge base has nothing" not in (search.description or "")
    assert "or max_tokens fits no section" in (search.description or "")
    fields = search.input_schema["properties"]
    assert fields["max_tokens"]["description"].startswith("Token budget of the whole answer")
    hits = two.structured_content["hits"]
    assert len([h for h in hits if h["related_to"] is None]) == 2 < len(hits)
    assert fields["top_k"]["description"] == (
        "At most this many ranked hits; sections they link to may come with them. "
        "Default: the server's search.top_k (8 unless set)."
    )
    assert not usage.is_error
    report = tools["report_usage"]
    assert "compile_bundle or document_context" in (report.description or "")
    said = report.input_schema["properties"]["bundle_id"]["description"]
    assert said == "The bundle_id compile_bundle or document_context returned."


def test_a_teams_own_layout_is_what_the_model_is_told(tmp_path: Path, write_files: Any) -> None:
    """With `scopes:` rules of the team's own (docs/, teams/*), the instructions and the tool
    schemas name no domain, conventions or projects/<name> scope the index does not have; the
    instructions show a scope to add by a name this index has."""
    root = write_files(
        {
            "docs/refunds.md": "# Refund rules\n\nRefunds are accepted for 180 days.\n",
            "teams/payments/team.md": "# Payments team\n\nWe own the gateway.\n",
        }
    )
    config = tmp_path / "briefd.yaml"
    config.write_text('scopes:\n  - {folder: docs, default: true}\n  - {folder: "teams/*"}\n')
    overrides = {"db": str(tmp_path / "index.db"), "source": str(root)}
    settings = load_settings(config, {}, {**overrides, "embeddings.enabled": False})

    async def body(client: Client) -> Any:
        return client.instructions, (await client.list_tools()).tools

    with Briefd(settings, embedder=None) as api:
        api.index()
        with serving(create_app(api, service_config())) as base:
            instructions, tools = run(base + "/mcp", "auto", body)
    assert "Default scopes: docs; pass scopes=['teams/payments'] or ['all'] for more" in (
        instructions or ""
    )
    said = json.dumps([(t.description, t.input_schema) for t in tools])
    for name in ("'projects/<name>'", "domain and conventions", "(domain, conventions"):
        assert name not in said and name not in (instructions or ""), name


def test_get_document_says_what_supersedes_it_and_which_links_are_relations(
    tmp_path: Path, write_files: Any
) -> None:
    """An agent that opened the old ADR read it as current: the head of get_document listed
    the new one only among "linked from", and a link's JSON did not say it was a front-matter
    relation (supersedes, depends_on), so nothing told the model the text was replaced."""
    root = write_files(
        {
            "domain/adr-1.md": "# ADR 1\n\nRetry five times.\n",
            "domain/adr-2.md": "---\nsupersedes: adr-1.md\n---\n# ADR 2\n\nRetry three times.\n",
            "domain/guide.md": "# Guide\n\nSee [[adr-1]].\n",
        }
    )
    settings = service_settings_for(root, tmp_path / "index.db")

    async def body(client: Client) -> list[CallToolResult]:
        return [
            await client.call_tool("get_document", {"doc_path": path})
            for path in ("domain/adr-1.md", "domain/adr-2.md")
        ]

    with Briefd(settings, embedder=None) as api:
        api.index()
        with serving(create_app(api, service_config())) as base:
            old, new = run(base + "/mcp", "legacy", body)
    text = old.content[0].text  # type: ignore[union-attr]
    assert text.splitlines()[2] == (
        "superseded by: domain/adr-2.md (this text was replaced: prefer it)"
    ), text
    backlinks = {b["source_path"]: b.get("relation") for b in old.structured_content["backlinks"]}  # type: ignore[index]
    assert backlinks == {"domain/adr-2.md": "supersedes", "domain/guide.md": None}
    links = new.structured_content["links"]  # type: ignore[index]
    assert [(x["relation"], x["target_path"]) for x in links] == [("supersedes", "domain/adr-1.md")]
    assert "superseded by" not in new.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", MODES)
def test_every_tool_answers_with_structured_content(url: str, mode: str) -> None:
    async def body(client: Client) -> dict[str, Any]:
        schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}
        out: dict[str, Any] = {}
        calls: list[tuple[str, dict[str, Any]]] = [
            ("search_context", {"query": "retry policy for declined cards", "max_tokens": 600}),
            (
                "compile_bundle",
                {"task_description": "add retries to card payments", "max_tokens": 700},
            ),
            ("get_document", {"doc_path": "domain/retry-policy.md"}),
            ("list_scopes", {}),
            ("suggest_links", {"doc_path": "conventions/feature-flags.md", "limit": 5}),
        ]
        for name, arguments in calls:
            result = await client.call_tool(name, arguments)
            out[name] = (check(result, schemas[name]), result.content[0].text)  # type: ignore[union-attr]
        bundle = out["compile_bundle"][0]
        usage = await client.call_tool(
            "report_usage",
            {
                "bundle_id": bundle["bundle_id"],
                "useful_chunk_ids": [bundle["items"][0]["chunk_id"]],
            },
        )
        out["report_usage"] = (check(usage, schemas["report_usage"]), usage.content[0].text)  # type: ignore[union-attr]
        return out

    out = run(url, mode, body)
    search, text = out["search_context"]
    assert search["hits"][0]["doc_path"] == "domain/retry-policy.md"
    assert search["tokens"] <= 600
    assert "source: domain/retry-policy.md:" in text
    bundle, text = out["compile_bundle"]
    assert bundle["tokens"] <= 700 and bundle["text"] in text
    assert f"bundle_id {bundle['bundle_id']}" in text
    document, text = out["get_document"]
    assert document["path"] == "domain/retry-policy.md" and text.startswith("# Retry policy")
    scopes, _ = out["list_scopes"]
    assert [s["name"] for s in scopes["scopes"]][:2] == ["conventions", "domain"]
    suggestions, _ = out["suggest_links"]
    assert suggestions["suggestions"][0]["doc_path"] == "conventions/feature-flags.md"
    usage, text = out["report_usage"]
    assert usage["stored"] == 1 and usage["unknown_chunk_ids"] == []
    assert text == f"stored 1 usage record(s) for bundle {bundle['bundle_id']}"


@pytest.mark.parametrize("mode", MODES)
def test_errors_are_is_error_results_that_say_what_to_do(url: str, mode: str) -> None:
    async def body(client: Client) -> list[CallToolResult]:
        return [
            await client.call_tool("search_context", {"query": "retry", "scopes": ["projects/x"]}),
            await client.call_tool("get_document", {"doc_path": "../../etc/passwd"}),
            await client.call_tool("get_document", {"doc_path": "domain/retry-polcy.md"}),
            await client.call_tool("compile_bundle", {"task_description": " "}),
            await client.call_tool("search_context", {"query": ""}),
            await client.call_tool("compile_bundle", {"task_description": "x", "max_tokens": "a"}),
            await client.call_tool("search_context", {"top_k": 0}),
            await client.call_tool("compile_bundle", {"task_description": "x", "max_token": 9}),
        ]

    results = run(url, mode, body)
    assert all(r.is_error for r in results)
    texts = [r.content[0].text for r in results]  # type: ignore[union-attr]
    assert texts[0] == (
        "scope 'projects/x' does not exist; known scopes: conventions, domain, "
        "projects/checkout, projects/ledger (or 'all')"
    )
    assert texts[1].startswith("no document '../../etc/passwd' in the knowledge repository")
    assert "did you mean domain/retry-policy.md?" in texts[2]
    assert texts[3] == (  # as REST says it (and counted as an error)
        "the task description is empty; describe the task (or pass an issue, or paths)"
    )
    assert "query" in texts[4]
    assert texts[5] == (  # one line per field, no pydantic report (input echo, links)
        "compile_bundle: max_tokens: Input should be a valid integer, unable to parse string as "
        "an integer"
    )
    assert texts[6] == (
        "search_context: query: Field required; top_k: Input should be greater than or equal to 1"
    )
    assert texts[7] == (  # the SDK would ignore it: the default budget, without a word
        "compile_bundle: max_token: not an argument of this tool (it takes task_description, "
        "max_tokens, scopes, paths, issue, base, mode, hard_limit, tags, verbose)"
    )


@pytest.mark.parametrize("mode", MODES)
def test_tools_keep_to_the_default_scopes_and_the_budget(url: str, mode: str) -> None:
    async def body(client: Client) -> dict[str, CallToolResult]:
        ledger = "projects/ledger/overview.md"
        return {
            "hidden": await client.call_tool("get_document", {"doc_path": ledger}),
            "shown": await client.call_tool(
                "get_document", {"doc_path": ledger, "scopes": ["projects/ledger"]}
            ),
            "suggest": await client.call_tool("suggest_links", {"limit": 100}),
            "search": await client.call_tool(
                "search_context", {"query": "refund", "max_tokens": 200}
            ),
            "tiny": await client.call_tool(
                "search_context", {"query": "partial refunds validation", "max_tokens": 5}
            ),
            "pasted": await client.call_tool(
                "search_context", {"query": PASTED, "max_tokens": 500}
            ),
            "usage": await client.call_tool(
                "report_usage", {"bundle_id": "nonexistent", "useful_chunk_ids": ["zzz"]}
            ),
        }

    out = run(url, mode, body)
    assert out["hidden"].is_error
    assert out["hidden"].content[0].text == (  # type: ignore[union-attr]
        "no document 'projects/ledger/overview.md' in scopes domain, conventions; scope "
        "'projects/ledger' is not requested: add it to scopes (--scopes on the CLI) or use 'all' "
        "to read it"
    )
    assert not out["shown"].is_error
    assert out["shown"].structured_content["path"] == "projects/ledger/overview.md"  # type: ignore[index]
    suggestions = out["suggest"].structured_content["suggestions"]  # type: ignore[index]
    assert len(suggestions) == out["suggest"].structured_content["total"]  # type: ignore[index]
    assert suggestions and not any(
        "projects/" in s["doc_path"] or s["target"].startswith("projects/") for s in suggestions
    )
    search = out["search"].structured_content
    assert search is not None and search["tokens"] <= 200
    text = out["search"].content[0].text  # type: ignore[union-attr]
    compact = json.dumps(search, ensure_ascii=False, separators=(",", ":"))
    assert count_tokens(compact) <= 200 and count_tokens(text) <= 200  # what the model reads
    hits = search["hits"]
    assert [h["doc_path"] for h in hits] == ["domain/refunds.md"] and not hits[0]["related_to"]
    assert "linked from" not in out["search"].content[0].text  # type: ignore[union-attr]
    assert search["note"].startswith("the top section (")
    tiny = out["tiny"].structured_content
    assert tiny is not None and tiny["hits"] == []
    assert out["tiny"].content[0].text == (  # type: ignore[union-attr]
        f"Nothing returned for 'partial refunds validation': {tiny['note']}."
    )
    assert tiny["note"].startswith("max_tokens=5 is too small for any section")
    pasted = out["pasted"].structured_content
    assert pasted is not None and pasted["hits"] and len(pasted["query"]) < 250
    text = out["pasted"].content[0].text  # type: ignore[union-attr]
    compact = json.dumps(pasted, ensure_ascii=False, separators=(",", ":"))
    assert count_tokens(compact) <= 500 and count_tokens(text) <= 500
    assert out["usage"].is_error
    assert (
        out["usage"]
        .content[0]
        .text.startswith(  # type: ignore[union-attr]
            "no bundle 'nonexistent' was issued by this index"
        )
    )


def test_propose_update_is_not_offered_while_proposals_are_off(url: str) -> None:
    """Proposals are off by default: the tool is not listed, and a call writes nothing."""

    async def body(client: Client) -> tuple[set[str], CallToolResult]:
        names = {t.name for t in (await client.list_tools()).tools}
        result = await client.call_tool(
            "propose_update",
            {
                "doc_path": "domain/retry-policy.md",
                "change_description": "clarify soft declines",
                "new_content": "# Retry policy\n\nNew text.\n",
            },
        )
        return names, result

    names, result = run(url, "legacy", body)
    assert "propose_update" not in names
    assert result.is_error
    assert "`proposals.enabled: true`" in result.content[0].text  # type: ignore[union-attr]


def test_a_wrong_token_cannot_connect(url: str) -> None:
    async def body(client: Client) -> Any:
        return await client.list_tools()

    with pytest.raises(ExceptionGroup) as caught:
        run(url, "legacy", body, token="wrong")
    assert caught.group_contains(MCPError, match="missing or wrong bearer token", depth=2)


@pytest.mark.parametrize("mode", MODES)
def test_a_refused_request_says_why_to_the_mcp_client(url: str, mode: str) -> None:
    """What the guard and the limits refuse on /mcp reaches the SDK's client as the error's
    own words (a missing token; an argument over serve.max_body_bytes), not as "Server
    returned an error response"."""

    async def anonymous() -> Any:
        async with (
            httpx2.AsyncClient(timeout=30) as http,  # no Authorization header
            Client(streamable_http_client(url, http_client=http), mode=mode) as client,
        ):
            return await client.list_tools()

    with pytest.raises(ExceptionGroup) as caught:
        anyio.run(anonymous)
    assert caught.group_contains(
        MCPError, match=r"missing or wrong bearer token; send 'Authorization: Bearer", depth=2
    )

    async def huge(client: Client) -> Any:
        with pytest.raises(MCPError) as refused:
            await client.call_tool("search_context", {"query": "x" * (5 * 1024 * 1024)})
        return str(refused.value), await client.call_tool("list_scopes", {})

    said, after = run(url, mode, huge)
    assert said == (
        "the request body is over 4194304 bytes (serve.max_body_bytes); send less, or raise "
        "the limit on the server"
    )
    assert not after.is_error  # the session goes on


def test_mcp_calls_are_counted(url: str) -> None:
    async def body(client: Client) -> Any:
        await client.call_tool("search_context", {"query": "chargeback"})
        await client.call_tool("search_context", {"query": "x", "scopes": ["nope"]})
        await client.call_tool("list_scopes", {})

    run(url, "legacy", body)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    metrics = httpx2.get(url.removesuffix("/mcp") + "/metrics", headers=auth).text
    for line in (
        'briefd_requests_total{name="search_context",outcome="ok",surface="mcp"} 1.0',
        'briefd_requests_total{name="search_context",outcome="error",surface="mcp"} 1.0',
        'briefd_requests_total{name="list_scopes",outcome="ok",surface="mcp"} 1.0',
        'briefd_request_duration_seconds_count{name="search_context",surface="mcp"} 2.0',
    ):
        assert line in metrics


def test_calls_rejected_for_their_arguments_are_counted_as_invalid(url: str) -> None:
    async def body(client: Client) -> list[CallToolResult]:
        return [
            await client.call_tool("search_context", {"query": "refund", "top_k": 0}),
            await client.call_tool("search_context", {"query": "refund", "top_kk": 3}),
            await client.call_tool("compile_bundle", {"task_description": "x", "max_tokens": "a"}),
            await client.call_tool("search_context", {"query": "chargeback"}),
        ]

    results = run(url, "legacy", body)
    assert [r.is_error for r in results] == [True, True, True, False]
    auth = {"Authorization": f"Bearer {TOKEN}"}
    metrics = httpx2.get(url.removesuffix("/mcp") + "/metrics", headers=auth).text
    for line in (
        'briefd_requests_total{name="search_context",outcome="invalid",surface="mcp"} 2.0',
        'briefd_requests_total{name="search_context",outcome="ok",surface="mcp"} 1.0',
        'briefd_requests_total{name="compile_bundle",outcome="invalid",surface="mcp"} 1.0',
        'briefd_request_duration_seconds_count{name="search_context",surface="mcp"} 1.0',
    ):
        assert line in metrics
    assert "top_kk" not in metrics and 'outcome="error"' not in metrics


def test_propose_update_over_mcp_pushes_a_branch(git_api: Briefd, remote: Remote) -> None:
    """With a git source, the tool is wired to the proposals capability (real bare remote)."""
    git_api.sync()
    new = RETRY.replace("three times", "four times").lstrip("\n")

    async def body(client: Client) -> CallToolResult:
        return await client.call_tool(
            "propose_update",
            {
                "doc_path": "domain/retry.md",
                "change_description": "Retry soft declines four times",
                "new_content": new,
            },
        )

    with serving(create_app(git_api, service_config())) as base:
        result = run(base + "/mcp", "legacy", body)
    assert not result.is_error, result.content
    proposal = result.structured_content
    assert proposal is not None
    assert proposal["branch"] == f"briefd/proposal-{proposal['id']}"
    assert proposal["doc_path"] == "domain/retry.md"
    assert result.content[0].text.startswith(f"proposed on branch {proposal['branch']}")  # type: ignore[union-attr]
    remote_branches = git(remote.bare, "branch", "--list", "briefd/*")
    assert proposal["branch"] in remote_branches


def test_a_proposal_to_a_superseded_document_names_the_one_that_replaced_it(
    git_api: Briefd, remote: Remote
) -> None:
    """An agent that found the old ADR proposed its change there, and was told nothing: the
    answer now names the document superseding it (MCP text and JSON, REST alike)."""
    remote.push({"domain/retry-v2.md": "---\nsupersedes: retry.md\n---\n# Retry v2\n\nTwice.\n"})
    git_api.sync()
    change = {
        "doc_path": "domain/retry.md",
        "change_description": "Retry four times",
        "new_content": RETRY.replace("three times", "four times").lstrip("\n"),
    }

    async def body(client: Client) -> CallToolResult:
        return await client.call_tool("propose_update", change)

    with serving(create_app(git_api, service_config())) as base:
        result = run(base + "/mcp", "legacy", body)
        answer = httpx2.post(
            base + "/api/proposals",
            json={  # other text: the same would be a repeat of the one waiting for review
                **change,
                "change_description": "Retry five times",
                "new_content": RETRY.replace("three times", "five times").lstrip("\n"),
            },
            headers={"Authorization": f"Bearer {TOKEN}"},
            timeout=60,
        )
    assert not result.is_error, result.content
    assert result.structured_content["superseded_by"] == ["domain/retry-v2.md"]  # type: ignore[index]
    assert result.content[0].text.endswith(  # type: ignore[union-attr]
        "\nnote: domain/retry.md is superseded by domain/retry-v2.md: the current text is "
        "there; if the rule itself changed, propose the change there too"
    )
    assert answer.status_code == 201, answer.text
    assert answer.json()["superseded_by"] == ["domain/retry-v2.md"]


def test_a_proposal_has_one_shape_on_mcp_and_rest(git_api: Briefd, remote: Remote) -> None:
    """I1/I2: the tool's structured content is the proposal exactly as REST lists it, with
    ``where`` its branch is (no forge opens its pull request), as REST's 201 answer has it."""
    git_api.sync()
    new = RETRY.replace("three times", "five times").lstrip("\n")

    async def body(client: Client) -> tuple[CallToolResult, dict[str, Any] | None]:
        schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}
        result = await client.call_tool(
            "propose_update",
            {"doc_path": "domain/retry.md", "change_description": "Five", "new_content": new},
        )
        return result, schemas["propose_update"]

    with serving(create_app(git_api, service_config())) as base:
        result, schema = run(base + "/mcp", "legacy", body)
        headers = {"Authorization": f"Bearer {TOKEN}"}
        listed = httpx2.get(base + "/api/proposals", headers=headers).json()["proposals"]
    proposal = check(result, schema)
    assert proposal.pop("where").startswith("pushed to the source's remote; no pull request")
    assert [proposal] == listed
    assert proposal["client"] == "mcp" and proposal["base_branch"] == "main"
    assert set(proposal) >= {"pr_number", "forge_error", "status_checked_at", "base_commit"}


def test_instructions_follow_the_index(tmp_path: Path, example_copy: tuple[Path, Path]) -> None:
    """A sync or rebuild in another connection changes the counts new clients are told."""
    source = tmp_path / "knowledge"
    shutil.copytree(example_copy[0], source)
    settings = service_settings_for(source, tmp_path / "index.db")

    async def body(client: Client) -> str | None:
        return client.instructions

    with Briefd(settings, embedder=None) as api:
        api.index()
        with serving(create_app(api, service_config())) as base:
            assert "45 documents" in (run(base + "/mcp", "legacy", body) or "")
            (source / "domain" / "sanctions.md").write_text(
                "# Sanctions screening\n\nEvery merchant is screened daily.\n", encoding="utf-8"
            )
            with Briefd(settings, embedder=None) as writer:  # like a sync: its own connection
                writer.index()
            deadline = time.monotonic() + 10
            while "46 documents" not in (run(base + "/mcp", "legacy", body) or ""):
                assert time.monotonic() < deadline, "instructions were not refreshed"
                time.sleep(0.1)
