"""``GET /api/proposals`` in pages (T1, I2): every proposal a team's agents ever made came in
one answer. ``limit`` asks for a page, newest first, and ``next_cursor`` for the next, which
starts after the last one read even when new proposals arrive in between (an offset would
list one twice); the default answer lists everything, as it did, with the total beside it."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.state.model import Proposal


def stored(api: Briefd, n: int, at: str, status: str = "pushed") -> Proposal:
    proposal = Proposal(
        id=f"{n:04x}",
        branch=f"briefd/proposal-{n:04x}",
        doc_path=f"domain/doc-{n}.md",
        description=f"Change {n}",
        commit_hash="c0ffee",
        pr_url=None,
        status=status,
        client="mcp",
        created_at=at,
    )
    api.state.save_proposal(proposal)
    return proposal


def read_all(client: TestClient, **params: Any) -> list[dict[str, Any]]:
    answers, cursor = [], None
    while True:
        answer = client.get(
            "/api/proposals", params={**params, "cursor": cursor} if cursor else params
        )
        assert answer.status_code == 200, answer.text
        answers.append(answer.json())
        cursor = answers[-1]["next_cursor"]
        if cursor is None:
            return answers


def test_proposals_come_in_pages_newest_first(client: TestClient, service_api: Briefd) -> None:
    for n in range(23):  # three share each second: the id orders them
        stored(
            service_api, n, f"2026-03-{1 + n // 3:02d}T10:00:00+00:00", ("pushed", "open")[n % 2]
        )
    whole = client.get("/api/proposals").json()
    assert len(whole["proposals"]) == whole["total"] == 23 and whole["next_cursor"] is None
    assert whole["counts"] == {"pushed": 12, "open": 11}
    read = read_all(client, limit=5)
    assert [len(p["proposals"]) for p in read] == [5, 5, 5, 5, 3]
    assert [p for page in read for p in page["proposals"]] == whole["proposals"]
    assert {p["total"] for p in read} == {23} and all(p["counts"] == whole["counts"] for p in read)
    opened = read_all(client, limit=4, status="open")
    ids = [p["id"] for page in opened for p in page["proposals"]]
    assert ids == [p["id"] for p in whole["proposals"] if p["status"] == "open"]
    assert {p["total"] for p in opened} == {11}


def test_a_proposal_made_between_pages_does_not_repeat_one(
    client: TestClient, service_api: Briefd
) -> None:
    for n in range(6):
        stored(service_api, n, f"2026-03-0{1 + n}T10:00:00+00:00")
    first = client.get("/api/proposals", params={"limit": 3}).json()
    stored(service_api, 99, "2026-04-01T10:00:00+00:00")  # newest: first in the listing now
    second = client.get("/api/proposals", params={"limit": 3, "cursor": first["next_cursor"]})
    assert [p["id"] for p in first["proposals"]] == ["0005", "0004", "0003"]
    assert [p["id"] for p in second.json()["proposals"]] == ["0002", "0001", "0000"]
    assert second.json()["total"] == 7 and second.json()["next_cursor"] is None


def test_a_bad_limit_or_cursor_is_a_422_saying_what_to_send(client: TestClient) -> None:
    for params, said in [
        ({"limit": 0}, "query.limit: Input should be greater than or equal to 1"),
        (
            {"cursor": "WyJvbmx5Il0"},  # a JSON array of one string
            "query.cursor: not a cursor GET /api/proposals gave: pass a page's next_cursor as "
            "it came, or leave cursor out for the first page",
        ),
    ]:
        answer = client.get("/api/proposals", params=params)
        assert answer.status_code == 422, params
        assert answer.json() == {"error": "invalid_request", "detail": said}
