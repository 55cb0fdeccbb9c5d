"""What each MCP tool costs the model (issue 14): tokens of the text content and of
``JSON.stringify(structuredContent)`` (compact JSON, as a JavaScript client produces it; Claude
Code and VS Code hand that string to the model whenever it is present).

    .venv/bin/python bench/mcp_payload.py [--hybrid] [--json]

The app runs on a real uvicorn on 127.0.0.1 over the example knowledge (BM25 only unless
``--hybrid``), and every call goes through the official SDK client. ``compile_bundle`` is
measured for every golden-en query at 500, 1,500 and 4,000 tokens (mean and max), the other
tools once each. Counts are cl100k_base, the bundles' own estimator.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import yaml
from common import REPO, settings_for
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

from briefd.api import Briefd
from briefd.tokens import count_tokens
from recall import warm_server

BUDGETS = (500, 1500, 4000)
QUERIES = REPO / "eval" / "golden" / "queries.yaml"
OTHER_CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("search_context", {"query": "retry policy for declined cards", "max_tokens": 1500}),
    ("get_document", {"doc_path": "domain/retry-policy.md"}),
    ("list_scopes", {}),
    ("suggest_links", {"doc_path": "conventions/feature-flags.md", "limit": 5}),
)


def stringify(structured: object) -> str:
    """``JSON.stringify``: no spaces, non-ASCII kept, keys in their order."""
    return json.dumps(structured, ensure_ascii=False, separators=(",", ":"))


def sizes(result: CallToolResult) -> tuple[int, int]:
    text = "".join(block.text for block in result.content if block.type == "text")
    return count_tokens(text), count_tokens(stringify(result.structured_content))


async def measure(url: str, tasks: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"compile_bundle": {}}
    async with Client(streamable_http_client(url)) as client:
        for budget in BUDGETS:
            pairs = []
            for task in tasks:
                arguments = {"task_description": task, "max_tokens": budget}
                result = await client.call_tool("compile_bundle", arguments)
                assert not result.is_error, result.content
                pairs.append(sizes(result))
            out["compile_bundle"][budget] = {
                "text_mean": round(statistics.mean(p[0] for p in pairs)),
                "text_max": max(p[0] for p in pairs),
                "structured_mean": round(statistics.mean(p[1] for p in pairs)),
                "structured_max": max(p[1] for p in pairs),
            }
        for name, arguments in OTHER_CALLS:
            result = await client.call_tool(name, arguments)
            assert not result.is_error, result.content
            text, structured = sizes(result)
            out[name] = {"text": text, "structured": structured}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hybrid", action="store_true", help="index with the default model")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    tasks = [q["query"] for q in yaml.safe_load(QUERIES.read_text(encoding="utf-8"))["queries"]]
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "knowledge"
        shutil.copytree(REPO / "testdata" / "knowledge", source)
        settings = settings_for(Path(tmp) / "index.db", source, embeddings=args.hybrid)
        with Briefd(settings) as api:
            api.index()
            with warm_server(api) as base:
                out = anyio.run(measure, base + "/mcp", tasks)
    if args.json:
        json.dump(out, sys.stdout, indent=2)
        return
    print(f"compile_bundle over {len(tasks)} golden-en tasks (cl100k tokens, mean / max)")
    print("budget | content text | JSON.stringify(structuredContent)")
    for budget, row in out.pop("compile_bundle").items():
        print(
            f"{budget:>6} | {row['text_mean']:>5} / {row['text_max']:<5} |"
            f" {row['structured_mean']:>5} / {row['structured_max']}"
        )
    print("tool | content text | structuredContent")
    for name, row in out.items():
        print(f"{name} | {row['text']} | {row['structured']}")


if __name__ == "__main__":
    main()
