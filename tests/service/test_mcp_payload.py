"""What the model reads from the MCP tools (B6, issue 14): several clients (Claude Code, VS
Code) hand ``JSON.stringify(structuredContent)`` to the model whenever it is present, so a
bundle's structured content must stay near its budget and carry each section once. Through
the SDK's own client, which validates every result against the tool's output schema."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from mcp import Client

from briefd.api import Briefd
from briefd.service import create_app
from briefd.tokens import count_tokens
from tests.conftest import EXAMPLE, EXAMPLE_TR, REPO
from tests.service.conftest import service_config, service_settings_for
from tests.service.live import serving
from tests.service.test_mcp import run

BUDGETS = (300, 500, 800, 1200, 1500, 2500, 4000, 6000, 8000)
CORPORA = {"en": (EXAMPLE, "queries.yaml"), "tr": (EXAMPLE_TR, "queries-tr.yaml")}


def stringify(value: object) -> str:
    """``JSON.stringify``: no spaces, non-ASCII characters as they are, keys in order."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@pytest.fixture(scope="module", params=sorted(CORPORA))
def corpus(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, list[str]]]:
    source_dir, queries = CORPORA[request.param]
    base = tmp_path_factory.mktemp(f"payload-{request.param}")
    shutil.copytree(source_dir, base / "knowledge")
    data = yaml.safe_load((REPO / "eval" / "golden" / queries).read_text(encoding="utf-8"))
    settings = service_settings_for(base / "knowledge", base / "index.db")
    with Briefd(settings, embedder=None) as api:
        api.index()
        with serving(create_app(api, service_config())) as url:
            yield url + "/mcp", [q["query"] for q in data["queries"]]


def test_compile_bundle_structured_content_stays_near_the_budget(
    corpus: tuple[str, list[str]],
) -> None:
    url, tasks = corpus
    calls = [  # every task twice: default scopes, and every scope at another budget
        (task, BUDGETS[(i + shift) % len(BUDGETS)], ["all"] if shift else None)
        for i, task in enumerate(tasks)
        for shift in (0, 4)
    ]

    async def body(client: Client) -> list[tuple[str, int, Any, str]]:
        found = []
        for task, budget, scopes in calls:
            arguments = {"task_description": task, "max_tokens": budget, "scopes": scopes}
            result = await client.call_tool("compile_bundle", arguments)
            assert not result.is_error, result.content
            text = result.content[0].text  # type: ignore[union-attr]
            found.append((task, budget, result.structured_content, text))
        return found

    assert {budget for _, budget, _ in calls} == set(BUDGETS)
    for task, budget, structured, text in run(url, "auto", body):
        size = count_tokens(stringify(structured))
        assert size <= budget * 1.10 + 150, (task, budget, size)
        assert structured["schema_version"] == 2 and structured["mode"] == "markdown"
        assert text.startswith(structured["text"].rstrip()) or not structured["text"]
        assert "diagnostics" in structured and set(structured["diagnostics"]) == {"estimator"}
        for item in structured["items"]:  # each section once: its content is in the text
            assert set(item) <= {"chunk_id", "tier", "reasons", "truncated"}
            assert f"chunk {item['chunk_id']}" in structured["text"]


def test_modes_verbose_and_document_context_over_mcp(service_api: Briefd) -> None:
    task = "how do partial refunds work"

    async def body(client: Client) -> dict[str, Any]:
        out = {}
        for name, tool, arguments in (
            ("package", "compile_bundle", {"task_description": task, "mode": "package"}),
            ("manifest", "compile_bundle", {"task_description": task, "mode": "manifest"}),
            ("verbose", "compile_bundle", {"task_description": task, "verbose": True}),
            (
                "context",
                "document_context",
                {"doc_path": "domain/currency-and-rounding.md", "max_tokens": 4000},
            ),
            ("missing", "document_context", {"doc_path": "domain/nope.md"}),
        ):
            out[name] = await client.call_tool(tool, arguments)
        return out

    with serving(create_app(service_api, service_config())) as base:
        out = run(base + "/mcp", "auto", body)
    package = out["package"].structured_content
    assert "text" not in package and package["items"][0]["content"]
    assert out["package"].content[0].text == stringify(package)
    assert all(i["fingerprint"].startswith("sha256:") for i in package["items"])
    manifest = out["manifest"].structured_content
    assert all("content" not in i for i in manifest["items"])
    assert [i["fingerprint"] for i in manifest["items"]] == [
        i["fingerprint"] for i in package["items"]
    ]
    verbose = out["verbose"].structured_content["diagnostics"]
    assert {"exclusions", "ranking_version", "index_fingerprint", "gate"} <= set(verbose)
    context = out["context"].structured_content
    assert context["target"] == "domain/currency-and-rounding.md"
    assert [i["tier"] for i in context["items"]][:1] == ["mandatory"]
    assert "structural" in {i["tier"] for i in context["items"]}
    assert out["missing"].is_error
    assert "no document 'domain/nope.md'" in out["missing"].content[0].text  # type: ignore[union-attr]
