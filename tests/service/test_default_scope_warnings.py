"""A default scope the index lacks is said, never dropped silently (K1): ``default_scopes:
[domain, nope]`` still searches ``domain``, and the answer says that ``nope`` is not there,
what was read instead and what to fix — in the JSON of REST and MCP search and bundle answers,
in the scopes listing, and in the server's start-up log. Over a real index, the real HTTP app
and the SDK's MCP client."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp import Client

from briefd.api import Briefd
from briefd.service import create_app
from briefd.settings import load_settings
from briefd.store.scopes import default_scope_warnings
from briefd.tokens import count_tokens
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving
from tests.service.test_mcp import run

WARNING = (
    "default scope 'nope' is not in this index, so searches without scopes read domain only "
    "(indexed scopes: conventions, domain); set default_scopes in briefd.yaml to scopes the "
    "index has"
)
FILES = {
    "domain/refunds.md": "# Refunds\n\n## Partial refunds\nA partial refund returns part of a "
    "captured payment.\n",
    "conventions/errors.md": "# Errors\n\n## Refund errors\nA refund error names the payment.\n",
}


def knowledge(root: Path) -> Path:
    for path, text in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def mistyped(tmp_path: Path) -> Iterator[Briefd]:
    source = knowledge(tmp_path / "knowledge")
    overrides = {
        "db": str(tmp_path / "index.db"),
        "source": str(source),
        "embeddings.enabled": False,
        "default_scopes": ["domain", "nope"],
    }
    with Briefd(load_settings(config=None, env={}, overrides=overrides), embedder=None) as api:
        report = api.index()
        assert report.warnings == (WARNING,)
        yield api


def test_the_warning_names_the_scope_what_is_read_and_the_fix() -> None:
    known = ["conventions", "domain"]
    assert default_scope_warnings(["domain", "nope"], known) == (WARNING,)
    assert default_scope_warnings(["domain", "nope", "typo"], known) == (
        "default scopes 'nope', 'typo' are not in this index, so searches without scopes read "
        "domain only (indexed scopes: conventions, domain); set default_scopes in briefd.yaml "
        "to scopes the index has",
    )
    assert default_scope_warnings(["nope"], known)[0].startswith(
        "default scope 'nope' is not in this index, so searches without scopes fail"
    )
    assert default_scope_warnings(["domain", "teams/*"], ["domain", "teams/a"]) == ()
    assert default_scope_warnings(["domain", "conventions"], ["domain"]) == ()  # as shipped
    assert default_scope_warnings(["domain", "nope"], []) == ()  # nothing indexed yet


def test_rest_answers_carry_the_warning(mistyped: Briefd) -> None:
    with TestClient(create_app(mistyped, service_config())) as http:
        http.headers["Authorization"] = f"Bearer {TOKEN}"
        search = http.get("/api/search", params={"q": "partial refund"}).json()
        bundle = http.post("/api/bundle", json={"task": "partial refund"}).json()
        package = http.post("/api/bundle", json={"task": "partial refund", "mode": "package"})
        scopes = http.get("/api/scopes").json()
        named = http.get("/api/search", params={"q": "refund", "scopes": "conventions"}).json()
    assert search["warnings"] == [WARNING] and search["scopes"] == ["domain"]
    assert [h["doc_path"] for h in search["hits"]] == ["domain/refunds.md"]  # still served
    assert bundle["warnings"] == [WARNING] and bundle["items"]
    assert package.json()["warnings"] == [WARNING]
    assert scopes["warnings"] == [WARNING] and scopes["default_scopes"] == ["domain", "nope"]
    assert named["warnings"] is None  # scopes named: no default was read


def test_mcp_answers_carry_the_warning(mistyped: Briefd) -> None:
    async def body(client: Client) -> dict[str, Any]:
        return {
            "search": await client.call_tool("search_context", {"query": "partial refund"}),
            "bundle": await client.call_tool("compile_bundle", {"task_description": "refund"}),
            "scopes": await client.call_tool("list_scopes", {}),
        }

    with serving(create_app(mistyped, service_config())) as base:
        out = run(base + "/mcp", "auto", body)
    for name in ("search", "bundle", "scopes"):
        assert not out[name].is_error, out[name].content
        assert out[name].structured_content["warnings"] == [WARNING], name
    assert out["scopes"].content[0].text.endswith(f"Warning: {WARNING}")
    search = out["search"].content[0].text  # the text a model reads: hits, then the warning
    assert re.match(r"\d+ section\(s\) for 'partial refund'", search), search
    assert search.endswith(f"\n\nWarning: {WARNING}")


def test_the_server_logs_the_warning_at_start(
    mistyped: Briefd, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(mistyped, service_config())
    with caplog.at_level(logging.WARNING, logger="briefd.service"), TestClient(app):
        pass
    assert [r.getMessage() for r in caplog.records if r.name == "briefd.service"] == [WARNING]


def test_search_budget_counts_the_warning(mistyped: Briefd) -> None:
    """The warning is part of what a client receives, so it is inside max_tokens too."""
    with TestClient(create_app(mistyped, service_config())) as http:
        http.headers["Authorization"] = f"Bearer {TOKEN}"
        for budget in (200, 300, 500):
            answer = http.get("/api/search", params={"q": "partial refund", "max_tokens": budget})
            body = answer.json()
            assert body["warnings"] == [WARNING] and body["hits"], budget
            compact = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
            assert count_tokens(compact) <= budget, (budget, count_tokens(compact))


def test_the_bundle_text_an_agent_reads_carries_the_warning(mistyped: Briefd) -> None:
    """The MCP text block of a bundle says what its structured content warns about, also when
    sections matched (a model that reads only the text must not miss it)."""

    async def body(client: Client) -> Any:
        return await client.call_tool("compile_bundle", {"task_description": "partial refund"})

    with serving(create_app(mistyped, service_config())) as base:
        result = run(base + "/mcp", "auto", body)
    assert not result.is_error, result.content
    assert result.structured_content["text"]  # sections matched
    assert result.structured_content["warnings"] == [WARNING]
    assert f"Warning: {WARNING}" in result.content[0].text


def test_a_bundle_keeps_room_for_the_warning_it_carries(mistyped: Briefd) -> None:
    """The warning is part of the answer the budget bounds (B7): sections are packed into
    what it leaves, so the structured content stays within max_tokens; a request naming the
    same scopes has no warning and keeps its room."""
    budgets = range(150, 330, 10)

    async def body(client: Client) -> list[tuple[Any, Any]]:
        found = []
        for budget in budgets:
            task = {"task_description": "partial refund error", "max_tokens": budget}
            default = await client.call_tool("compile_bundle", task)
            named = await client.call_tool("compile_bundle", {**task, "scopes": ["domain"]})
            found.append((default, named))
        return found

    with serving(create_app(mistyped, service_config())) as base:
        answers = run(base + "/mcp", "auto", body)
    for budget, (default, named) in zip(budgets, answers, strict=True):
        structured = default.structured_content
        assert structured["warnings"][0] == WARNING
        size = count_tokens(json.dumps(structured, ensure_ascii=False, separators=(",", ":")))
        assert size <= min(budget, structured["tokens"]), (budget, size, structured)
        assert WARNING not in named.structured_content.get("warnings", [])
    assert any(named.structured_content["items"] for _, named in answers)
    for default, named in answers:  # packed with other room: never served for one another
        assert named.structured_content["bundle_id"] != default.structured_content["bundle_id"]


def test_an_empty_bundle_still_says_nothing_matched_beside_the_warning(mistyped: Briefd) -> None:
    """No section matched: the MCP text says so, then warns; a model reading the text alone
    must not take the warning for the answer (I1, K1)."""

    async def body(client: Client) -> Any:
        task = {"task_description": "zeppelin hangar ballast", "max_tokens": 800}
        return await client.call_tool("compile_bundle", task)

    with serving(create_app(mistyped, service_config())) as base:
        result = run(base + "/mcp", "auto", body)
    assert result.structured_content["items"] == []
    assert result.structured_content["warnings"] == [WARNING]
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith(f"No knowledge section matched.\n\nWarning: {WARNING}\n\n(bundle_id ")
