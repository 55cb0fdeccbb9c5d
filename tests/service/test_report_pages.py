"""The gaps and usage reports of a long query log in pages (T3, T6, I1): a team's history
grows them without bound (6,000 logged queries made knowledge_gaps(limit=500) a 52 KB text
and 195 KB of structuredContent, all handed to the model). ``knowledge_gaps`` and
``knowledge_usage`` (the SDK's client on a real uvicorn) list ``limit`` rows (at most 100)
from ``offset`` and end with the call for the next page, repeating the window it reads;
``GET /api/gaps`` and ``GET /api/usage`` keep their limits and take ``offset`` too. The log
is seeded with real rows in a real index."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp import Client

from briefd.api import Briefd
from briefd.service import create_app
from tests.conftest import WriteFiles
from tests.service.conftest import service_config
from tests.service.live import TOKEN, mcp_session, serving
from tests.team.test_gaps import entry

GAPS = 130  # distinct questions nothing answered, q000 the most recent
DOCS = 45
SERVED = 25  # d00 … d24 were served once each, d25 … d44 never


@pytest.fixture
def logged_api(api: Briefd, write_files: WriteFiles) -> Briefd:
    files = {f"domain/d{n:02d}.md": f"# Rule {n:02d}\n\nRule {n:02d} text.\n" for n in range(DOCS)}
    api.index(write_files(files))
    unanswered = [entry(f"unanswered question q{n:03d}", 0, None, hours_ago=n) for n in range(GAPS)]
    served = [
        replace(entry(f"rule {n:02d}", 1, 2.0), sections=(api.document(path).chunks[0].id,))
        for n, path in enumerate(sorted(files)[:SERVED])
    ]
    api.log_queries(unanswered + served)
    return api


def calls(api: Briefd, tool: str, *arguments: dict[str, Any]) -> list[Any]:
    async def body(client: Client) -> list[Any]:
        return [await client.call_tool(tool, args) for args in arguments]

    with serving(create_app(api, service_config())) as base:
        return mcp_session(base + "/mcp", body)


def asked(out: Any) -> list[str]:
    return [g["query"].split()[-1] for g in out.structured_content["gaps"]]


def test_knowledge_gaps_lists_a_page_and_says_how_to_read_on(logged_api: Briefd) -> None:
    first, middle, last, past, over = calls(
        logged_api,
        "knowledge_gaps",
        {},
        {"since": "7d", "min_count": 1, "offset": 20, "limit": 50},
        {"since": "7d", "offset": 120, "limit": 100},
        {"offset": 500},
        {"limit": 101},
    )
    assert asked(first) == [f"q{n:03d}" for n in range(20)]  # most recent first
    text = first.content[0].text
    assert text.splitlines()[0].endswith(" most asked x weakest first (the first 20 of 130):")
    assert text.endswith(
        "[20 of 130 gaps shown: call knowledge_gaps with offset=20, limit=100 for the next]"
    )
    assert first.structured_content["gaps_count"] == GAPS
    assert first.structured_content["offset"] == 0
    assert asked(middle) == [f"q{n:03d}" for n in range(20, 70)]
    assert middle.structured_content["offset"] == 20
    lines = middle.content[0].text.splitlines()
    assert lines[0].endswith("(21-70 of 130):") and lines[1].startswith("21. ")
    assert lines[-1] == (
        '[21-70 of 130 gaps shown: call knowledge_gaps with since="7d", offset=70, limit=60 '
        "for the next]"
    )
    assert asked(last) == [f"q{n:03d}" for n in range(120, GAPS)]
    assert last.content[0].text.endswith("[121-130 of 130 gaps shown: the last of them]")
    assert past.structured_content["gaps"] == []
    assert past.content[0].text.startswith(
        "No gaps from offset=500: there are 130; call knowledge_gaps with offset=0"
    )
    assert over.is_error
    assert "limit: Input should be less than or equal to 100" in over.content[0].text


def test_knowledge_usage_lists_a_page_of_each_list_and_says_how_to_read_on(
    logged_api: Briefd,
) -> None:
    first, later, last, past, over = calls(
        logged_api,
        "knowledge_usage",
        {"limit": 10},
        {"since": "7d", "offset": 10, "limit": 10},
        {"offset": 20, "limit": 10},
        {"offset": 25},
        {"limit": 101},
    )
    out = first.structured_content
    assert [d["doc_path"] for d in out["documents"]] == [f"domain/d{n:02d}.md" for n in range(10)]
    assert out["never_served"] == [f"domain/d{n:02d}.md" for n in range(25, 35)]
    text = first.content[0].text
    assert "Never served (20): domain/d25.md, " in text and "domain/d34.md\n" in text
    assert text.endswith(
        "[10 of 25 served documents, 10 of 25 sections (JSON: sections), 10 of 20 never-served "
        "documents shown from offset=0: call knowledge_usage with offset=10, limit=15 for the "
        "next]"
    )
    assert len(out["sections"]) == 10 and out["offset"] == 0
    counts = (out["documents_count"], out["sections_count"], out["never_served_count"])
    assert counts == (SERVED, SERVED, DOCS - SERVED)
    assert [d["doc_path"] for d in later.structured_content["documents"]] == [
        f"domain/d{n:02d}.md" for n in range(10, 20)
    ]
    assert later.structured_content["never_served"] == [
        f"domain/d{n:02d}.md" for n in range(35, 45)
    ]
    assert later.content[0].text.endswith(
        'call knowledge_usage with since="7d", offset=20, limit=5 for the next]'
    )
    assert [d["doc_path"] for d in last.structured_content["documents"]] == [
        f"domain/d{n:02d}.md" for n in range(20, SERVED)
    ]
    assert last.structured_content["never_served"] == []
    assert last.content[0].text.endswith(
        "[5 of 25 served documents, 5 of 25 sections (JSON: sections), 0 of 20 never-served "
        "documents shown from offset=20: the last of them]"
    )
    assert past.content[0].text.endswith(
        "No usage rows from offset=25: the longest list has 25; call knowledge_usage with "
        "offset=0 (or a smaller offset) to read them."
    )
    assert over.is_error
    assert "limit: Input should be less than or equal to 100" in over.content[0].text


def test_rest_gaps_and_usage_take_an_offset(logged_api: Briefd) -> None:
    with TestClient(create_app(logged_api, service_config())) as http:
        http.headers["Authorization"] = f"Bearer {TOKEN}"
        everything = http.get("/api/gaps", params={"limit": 500}).json()
        gaps = http.get("/api/gaps", params={"limit": 3, "offset": 125}).json()
        usage = http.get("/api/usage", params={"limit": 4, "offset": 22}).json()
        bad = http.get("/api/usage", params={"offset": -1})
    assert len(everything["gaps"]) == everything["gaps_count"] == GAPS
    assert [g["query"] for g in gaps["gaps"]] == [
        f"unanswered question q{n:03d}" for n in range(125, 128)
    ]
    assert gaps["gaps_count"] == GAPS and gaps["offset"] == 125
    assert [d["doc_path"] for d in usage["documents"]] == [
        "domain/d22.md",
        "domain/d23.md",
        "domain/d24.md",
    ]
    assert usage["documents_count"] == SERVED and usage["offset"] == 22
    assert bad.status_code == 422
    assert bad.json()["detail"] == "query.offset: Input should be greater than or equal to 0"


def test_knowledge_gaps_cuts_a_long_phrasing_and_rest_keeps_it_whole(
    api: Briefd, write_files: WriteFiles
) -> None:
    """A bundle's task is logged whole: gaps asked with pasted tasks of ~4,000 characters made
    the tool's first 20 gaps 80 KB of text and 86 KB of JSON."""
    api.index(write_files({"domain/a.md": "# Settlement\n\nRules.\n"}))
    task = " ".join(f"word{n:04d}" for n in range(500))  # 4,499 characters
    api.log_queries([entry(task, 0, None, kind="bundle"), entry("short one", 0, None, hours_ago=2)])
    (result,) = calls(api, "knowledge_gaps", {})
    head = task[:300] + "…"
    assert [g["query"] for g in result.structured_content["gaps"]] == [head, "short one"]
    assert f"1. {head!r}: asked 1x" in result.content[0].text
    assert len(result.content[0].text) < 600
    with TestClient(create_app(api, service_config())) as http:
        http.headers["Authorization"] = f"Bearer {TOKEN}"
        assert http.get("/api/gaps").json()["gaps"][0]["query"] == task
