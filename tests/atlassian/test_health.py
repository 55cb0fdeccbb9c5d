"""Knowledge health (T3, T6) of bundles headed by a tracker issue (B1): the issue is the
caller's, not an answer of the knowledge, so the query log, the gaps report and the usage
report count only the sections the knowledge gave."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.atlassian.fake import FakeSite
from tests.atlassian.test_service import live_api, rest

__all__ = ["live_api", "rest"]  # the fixtures: the example index with the fake Cloud site


def test_a_tracker_issue_heading_a_bundle_is_no_section_the_knowledge_served(
    rest: TestClient, cloud: FakeSite
) -> None:
    """A bundle headed by SHOP-42 (fetched live) and one headed by pasted issue text no
    document answers: neither issue is a section "no longer in the index" in usage, nor what
    a gap "got", and the bundle nothing of the knowledge answered came back empty."""
    live = rest.post("/api/bundle", json={"issue": "SHOP-42", "max_tokens": 1500})
    assert live.status_code == 200 and live.json()["text"].startswith("> tracker issue · SHOP-42")
    pasted = {"issue": "Zxqv blorf wibble", "mode": "package"}
    for _ in range(2):
        alone = rest.post("/api/bundle", json=pasted)
        assert [i["chunk_id"][:6] for i in alone.json()["items"]] == ["issue:"]
    rest.app.state.briefd.flush()  # type: ignore[attr-defined]

    usage = rest.get("/api/usage").json()
    assert usage["gone_sections"] == 0
    assert usage["days"][-1]["requests"] == 3 and usage["days"][-1]["empty"] == 2
    assert all(not s["chunk_id"].startswith("issue:") for s in usage["sections"])
    assert "domain/refunds.md" in {d["doc_path"] for d in usage["documents"]}  # SHOP-42's

    gaps = {g["query"]: g for g in rest.get("/api/gaps").json()["gaps"]}
    weak = gaps["Zxqv blorf wibble"]
    assert (weak["asked"], weak["empty"], weak["weakness"]) == (2, 2, 1.0)
    assert weak["sections"] == [] and weak["best_score"] is None
    assert "SHOP-42" not in gaps  # its knowledge answered it


def test_a_bundle_reported_useful_for_its_issue_alone_stays_a_gap(
    rest: TestClient, cloud: FakeSite
) -> None:
    """An agent reporting the tracker issue heading its bundle as useful says the issue
    helped, not that the knowledge answered: the group stays a gap."""
    items = rest.post("/api/bundle", json={"issue": "Zxqv blorf", "mode": "package"}).json()
    [issue] = [i["chunk_id"] for i in items["items"]]
    assert issue.startswith("issue:")
    reported = {"bundle_id": items["bundle_id"], "useful_chunk_ids": [issue]}
    assert rest.post("/api/usage", json=reported).status_code == 200
    rest.app.state.briefd.flush()  # type: ignore[attr-defined]
    gaps = rest.get("/api/gaps").json()
    assert gaps["answered_useful"] == 0
    assert [(g["query"], g["weakness"]) for g in gaps["gaps"]] == [("Zxqv blorf", 1.0)]
