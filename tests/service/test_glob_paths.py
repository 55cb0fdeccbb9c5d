"""A request's ``paths`` may be globs (B8): ``services/*/internal/refunds/`` names the refunds
package of every service, and the documents whose ``refs`` govern one of them lead, over REST
as over every transport (one matcher, ``briefd.sources.refs``)."""

from __future__ import annotations

from fastapi.testclient import TestClient

REFUNDS = "refs services/payment-gateway/internal/refunds/** covers services/*/internal/refunds/"


def _governed(client: TestClient, paths: list[str]) -> dict[str, list[str]]:
    body = client.post(
        "/api/bundle",
        json={"task": "refund", "paths": paths, "mode": "package", "max_tokens": 8000},
    ).json()
    return {s["location"]["path"]: s["reasons"] for s in body["items"] if s["tier"] == "governed"}


def test_a_wildcard_in_a_middle_segment_finds_the_governing_documents(
    client: TestClient,
) -> None:
    governed = _governed(client, ["services/*/internal/refunds/"])
    assert REFUNDS in governed["domain/refunds.md"]
    assert "conventions/go-services.md" in governed  # refs services/payment-gateway/**
    searched = client.get(
        "/api/search", params={"q": "refund", "paths": "services/*/internal/refunds/"}
    ).json()["hits"]
    assert searched[0]["doc_path"] in governed
    anywhere = _governed(client, ["services/**/refunds/"])  # also below any folder refs name
    assert REFUNDS.replace("*/internal", "**") in anywhere["domain/refunds.md"]
    assert _governed(client, ["services/gateway-?/internal/refunds/"]) == {}


def test_a_wildcard_matches_no_more_than_the_refs_can_name(client: TestClient) -> None:
    """``*.py`` in ``refs`` names files, not the folders of ``services/*/``; a path with no
    wildcard is matched as written (``[id]`` is a folder's name, not a class)."""
    assert _governed(client, ["nowhere/*/internal/refunds/"]) == {}
    literal = _governed(client, ["services/payment-gateway/internal/refunds/[id].go"])
    plain = _governed(client, ["services/payment-gateway/internal/refunds/x.go"])
    assert literal.keys() == plain.keys() and "domain/refunds.md" in literal
