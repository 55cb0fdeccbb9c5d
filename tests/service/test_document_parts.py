"""A long document read part by part (I1, I2): MCP get_document answers within max_tokens
(default 8,000), each part says where the next starts, and the parts put together are the
document. Through the SDK's client on a real uvicorn, and REST through the app."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from mcp import Client
from mcp_types import CallToolResult

from briefd.api import Briefd
from briefd.service import create_app
from briefd.tokens import count_tokens
from tests.conftest import WriteFiles
from tests.service.conftest import service_config, service_settings_for
from tests.service.live import serving
from tests.service.test_mcp import run

PATH = "domain/http2.md"


def _reference_page() -> str:
    """A reference page of ~27,000 tokens: 40 H2 sections with H4 options, links between them,
    and one section far over any part's budget."""
    parts = ["# HTTP/2 reference\n\nThe module's options.\n"]
    for n in range(40):
        options = "\n".join(
            f"* `option{n}_{k}` {{number}} Sets limit {k} of stream {n}; see [next](#stream-{n + 1})."
            for k in range(40)
        )
        parts.append(f"## Stream {n}\n\n#### Options\n\n{options}\n")
    huge = "\n".join(f"Line {k} of the settings table, value {k * 7}." for k in range(1500))
    parts.append(f"## Settings table\n\n{huge}\n")
    return "\n".join(parts)


def _served(tmp_path: Path, write_files: WriteFiles, body: Any) -> Any:
    root = write_files({PATH: _reference_page(), "domain/short.md": "# Short\n\nOne line.\n"})
    with Briefd(service_settings_for(root, tmp_path / "index.db"), embedder=None) as api:
        api.index()
        with serving(create_app(api, service_config())) as base:
            return run(base + "/mcp", "auto", body), root


def test_a_long_document_comes_in_parts_that_make_it_whole(
    tmp_path: Path, write_files: WriteFiles
) -> None:
    """Claude Code refuses a tool answer over 25,000 tokens and moves one over 50,000
    characters to a file: get_document sent this page whole (~27,000 tokens, twice that in
    text and structured content)."""

    async def body(client: Client) -> list[CallToolResult]:
        answers = [await client.call_tool("get_document", {"doc_path": PATH})]
        while answers[-1].structured_content["part"]["next_start_line"] is not None:  # type: ignore[index]
            following = answers[-1].structured_content["part"]["next_start_line"]  # type: ignore[index]
            answers.append(
                await client.call_tool("get_document", {"doc_path": PATH, "start_line": following})
            )
        answers.append(await client.call_tool("get_document", {"doc_path": "domain/short.md"}))
        return answers

    answers, root = _served(tmp_path, write_files, body)
    *parts, short = answers
    assert "part" not in short.structured_content  # type: ignore[operator]
    assert len(parts) >= 4
    bodies, start = [], 1
    for answer in parts:
        out = answer.structured_content
        part = out["part"]  # type: ignore[index]
        assert part["start_line"] == start
        text = answer.content[0].text  # type: ignore[union-attr]
        received = json.dumps(out, ensure_ascii=False, separators=(",", ":"))  # JSON.stringify
        assert count_tokens(received) <= 8_000, count_tokens(received)
        assert f"part: lines {start}-{part['end_line']} of {part['last_line']}" in text
        for section in out["sections"]:  # type: ignore[index]
            assert section["end_line"] >= start and section["start_line"] <= part["end_line"]
        assert all(start <= x["line"] <= part["end_line"] for x in out["links"])  # type: ignore[index]
        if part["next_start_line"] is not None:
            assert text.endswith(
                f'get_document(doc_path="{PATH}", start_line={part["next_start_line"]}, '
                'scopes=["domain"])]'
            )
            start = part["next_start_line"]
        bodies.append(out["body"])  # type: ignore[index]
    assert "\n".join(bodies) == (root / PATH).read_text()
    cut = [a for a in parts if a.structured_content["body"].startswith("Line ")]  # type: ignore[index]
    assert cut, "the settings table, over any budget, was cut between lines"


def test_rest_reads_whole_unless_asked_and_says_a_line_outside(
    tmp_path: Path, write_files: WriteFiles
) -> None:
    root = write_files({PATH: _reference_page(), "domain/uses.md": "# Uses\n\n[h2](http2.md)\n"})
    with Briefd(service_settings_for(root, tmp_path / "index.db"), embedder=None) as api:
        api.index()
        with TestClient(create_app(api, service_config(token=None))) as http:
            whole = http.get(f"/api/docs/{PATH}").json()
            first = http.get(f"/api/docs/{PATH}", params={"max_tokens": 2000}).json()
            outside = http.get(f"/api/docs/{PATH}", params={"start_line": 99_999})
            rest = http.get(f"/api/docs/{PATH}", params={"start_line": 5}).json()
    assert "part" not in whole and whole["body"] == (root / PATH).read_text()
    assert first["part"]["start_line"] == 1 and first["part"]["next_start_line"] > 1
    assert count_tokens(first["body"]) <= 2000
    assert whole["body"].startswith(first["body"] + "\n")
    assert first["part"]["sections"] == len(whole["sections"]) > len(first["sections"])
    assert rest["part"]["backlinks"] == len(whole["backlinks"]) == len(rest["backlinks"]) == 1
    assert outside.status_code == 400
    assert "start_line 99999 is outside domain/http2.md" in outside.text


def test_a_document_linked_hundreds_of_times_still_reads_in_parts_within_the_budget(
    tmp_path: Path, write_files: WriteFiles
) -> None:
    """Node's errors.md, linked ~300 times: every part carried all its backlinks (15,500
    tokens) whatever max_tokens said, and the text left was one line per part (3,674 calls to
    read it). The first part lists backlinks in a quarter of the budget (the relation first,
    then one per linking document), later parts none, and every answer stays within it."""
    codes = "\n".join(
        f"## ERR_{n}\n\nError {n} is raised when limit {n} is hit.\n" for n in range(150)
    )
    files = {"domain/errors.md": f"# Errors\n\nEvery error code.\n\n{codes}"}
    for n in range(60):  # 60 documents linking 5 codes each
        links = " ".join(f"[ERR_{n + k}](errors.md#err_{n + k})" for k in range(5))
        files[f"domain/api{n:02}.md"] = f"# API {n}\n\nMay raise {links}.\n"
    files["domain/errors2.md"] = "---\nsupersedes: errors.md\n---\n# Errors v2\n\nNewer codes.\n"
    root = write_files(files)

    async def body(client: Client) -> list[CallToolResult]:
        asked = {"doc_path": "domain/errors.md", "max_tokens": 1000}
        answers = [await client.call_tool("get_document", asked)]
        following = answers[0].structured_content["part"]["next_start_line"]  # type: ignore[index]
        answers.append(await client.call_tool("get_document", {**asked, "start_line": following}))
        return answers

    with Briefd(service_settings_for(root, tmp_path / "index.db"), embedder=None) as api:
        api.index()
        everything = api.document("domain/errors.md")
        with serving(create_app(api, service_config())) as base:
            first, second = run(base + "/mcp", "auto", body)
    assert len(everything.backlinks) == 301
    for answer in (first, second):
        out = answer.structured_content
        received = json.dumps(out, ensure_ascii=False, separators=(",", ":"))
        assert count_tokens(received) <= 1000, count_tokens(received)
        assert out["part"]["backlinks"] == 301  # type: ignore[index]
        assert out["part"]["end_line"] - out["part"]["start_line"] >= 10  # type: ignore[index]
    listed = first.structured_content["backlinks"]  # type: ignore[index]
    assert 5 <= len(listed) < 301 and second.structured_content["backlinks"] == []  # type: ignore[index]
    relation = [x for x in listed if x["source_path"] == "domain/errors2.md"]
    assert [x.get("relation") for x in relation] == ["supersedes"]  # never cut before the rest
    assert len({x["source_path"] for x in listed}) == len(listed)  # one per linking document
    text = first.content[0].text  # type: ignore[union-attr]
    assert "superseded by: domain/errors2.md" in text
    assert f"(+{301 - len(listed)} more links to it: see part.backlinks)" in text
    assert "linked from: 301 links to it, listed in the first part" in second.content[0].text  # type: ignore[union-attr]
