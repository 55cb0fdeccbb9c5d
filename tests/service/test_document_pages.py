"""``GET /api/docs`` in pages (I2): a team with thousands of documents got every one in one
answer (half a megabyte for 3,000). ``limit`` asks for a page and ``next_cursor`` for the
next, over a real index served by the real app; the default answer lists everything, as it
did, with the total beside it."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.service import create_app
from tests.service.conftest import service_config, service_settings_for
from tests.service.live import TOKEN


@pytest.fixture
def served(tmp_path: Path, example_copy: tuple[Path, Path]) -> Iterator[tuple[TestClient, Briefd]]:
    """The example knowledge in a folder of its own (documents go away under the pages)."""
    source = tmp_path / "knowledge"
    shutil.copytree(example_copy[0], source)
    with Briefd(service_settings_for(source, tmp_path / "index.db"), embedder=None) as api:
        api.index()
        with TestClient(create_app(api, service_config())) as http:
            http.headers["Authorization"] = f"Bearer {TOKEN}"
            yield http, api


def pages(http: TestClient, **params: Any) -> list[dict[str, Any]]:
    answers, cursor = [], None
    while True:
        asked = {**params, **({"cursor": cursor} if cursor else {})}
        answer = http.get("/api/docs", params=asked)
        assert answer.status_code == 200, answer.text
        answers.append(answer.json())
        cursor = answers[-1]["next_cursor"]
        if cursor is None:
            return answers


def test_documents_come_in_pages_that_add_up_to_the_whole_listing(
    served: tuple[TestClient, Briefd],
) -> None:
    http, _ = served
    whole = http.get("/api/docs").json()
    assert len(whole["documents"]) == whole["total"] == 45 and whole["next_cursor"] is None
    read = pages(http, limit=7)
    assert [len(p["documents"]) for p in read] == [7] * 6 + [3]
    assert {p["total"] for p in read} == {45}
    assert [d for p in read for d in p["documents"]] == whole["documents"]
    exact = pages(http, limit=15)  # the last page full: no cursor to an empty one
    assert [len(p["documents"]) for p in exact] == [15, 15, 15]
    ledger = pages(http, limit=2, scopes="projects/ledger")
    listed = [d["path"] for p in ledger for d in p["documents"]]
    assert len(listed) == ledger[0]["total"] > 2 and all(
        p.startswith("projects/ledger/") for p in listed
    )


def test_a_page_starts_after_the_last_one_read_while_documents_go(
    served: tuple[TestClient, Briefd],
) -> None:
    """An offset would skip a document here: two of the first page are deleted and the index
    updated before the second page is asked for."""
    http, api = served
    first = http.get("/api/docs", params={"limit": 5}).json()
    for doc in first["documents"][:2]:
        (Path(api.settings.source) / doc["path"]).unlink()
    api.index()
    second = http.get("/api/docs", params={"limit": 5, "cursor": first["next_cursor"]}).json()
    whole = [d["path"] for d in http.get("/api/docs").json()["documents"]]
    assert second["total"] == 43
    assert [d["path"] for d in second["documents"]] == whole[3:8]  # right after the 5th


def test_a_bad_limit_or_cursor_is_a_422_saying_what_to_send(
    served: tuple[TestClient, Briefd],
) -> None:
    http, _ = served
    for params, said in [
        ({"limit": 0}, "query.limit: Input should be greater than or equal to 1"),
        ({"limit": 1001}, "query.limit: Input should be less than or equal to 1000"),
        (
            {"limit": 5, "cursor": "not-a-cursor"},
            "query.cursor: not a cursor GET /api/docs gave: pass a page's next_cursor as it "
            "came, or leave cursor out for the first page",
        ),
    ]:
        answer = http.get("/api/docs", params=params)
        assert answer.status_code == 422, params
        assert answer.json() == {"error": "invalid_request", "detail": said}
