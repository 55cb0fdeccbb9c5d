"""The MCP Inspector CLI (``@modelcontextprotocol/inspector``, pinned; run on a pinned Node
from the npm registry, both installed by ``make unit``) against a live server."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from briefd.api import Briefd
from briefd.service import create_app
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving
from tests.service.test_dashboard_browser import ARTIFACTS

NODE = os.environ.get("TEST_NODE", "")
INSPECTOR = os.environ.get("TEST_MCP_INSPECTOR", "")

pytestmark = pytest.mark.skipif(
    not (NODE and Path(INSPECTOR).is_file()) and not os.environ.get("CI"),
    reason="MCP Inspector not installed (make unit installs it and sets TEST_MCP_INSPECTOR)",
)


def inspector(url: str, *args: str) -> dict[str, Any]:
    command = [NODE, INSPECTOR, "--cli", url, "--transport", "http"]
    command += ["--header", f"Authorization: Bearer {TOKEN}", *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_inspector_lists_and_calls_tools(service_api: Briefd) -> None:
    with serving(create_app(service_api, service_config())) as base:
        url = base + "/mcp"
        listed = inspector(url, "--method", "tools/list")
        search = inspector(
            url,
            "--method",
            "tools/call",
            "--tool-name",
            "search_context",
            "--tool-arg",
            "query=retry policy for card payments",
            "--tool-arg",
            "top_k=3",
        )
        bundle = inspector(
            url,
            "--method",
            "tools/call",
            "--tool-name",
            "compile_bundle",
            "--tool-arg",
            "task_description=add retries to declined card payments",
            "--tool-arg",
            "max_tokens=600",
        )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "inspector-tools-list.json").write_text(json.dumps(listed, indent=2))
    names = [t["name"] for t in listed["tools"]]
    assert names == [
        "search_context",
        "compile_bundle",
        "document_context",
        "get_document",
        "list_scopes",
        "suggest_links",
        "report_usage",
        "knowledge_gaps",
        "knowledge_drift",
        "knowledge_usage",
    ]  # propose_update: only with proposals.enabled
    assert all("outputSchema" in t for t in listed["tools"])
    assert not search.get("isError")
    assert search["structuredContent"]["hits"][0]["doc_path"] == "domain/retry-policy.md"
    assert not bundle.get("isError")
    assert bundle["structuredContent"]["tokens"] <= 600
    assert "domain/retry-policy.md" in bundle["content"][0]["text"]
