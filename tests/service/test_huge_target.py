"""``POST /api/context`` on a huge target (B1, B8): the cost follows the hard limit, not the
size of the document."""

from __future__ import annotations

from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.bundles.pack import OVER_HARD_LIMIT, PAST_THE_CUT
from briefd.service import create_app
from tests.conftest import WriteFiles
from tests.service.conftest import service_config
from tests.service.live import TOKEN

SECTIONS = 3000


def _reference() -> str:
    items = (
        f"## Field {i}\n\nField {i} holds the refund amount of line {i} in minor units.\n"
        for i in range(SECTIONS)
    )
    return "# Reference\n\nEvery field of the settlement file.\n\n" + "\n".join(items)


def test_a_context_counts_the_sections_of_a_huge_target_only_as_far_as_the_cut(
    api: Briefd, write_files: WriteFiles
) -> None:
    """A generated reference of 40,000 sections took 19 s to answer a context of 2,000
    tokens: every section was counted (twice) before the few that fit were taken, and each
    one left out named its exact size. The sections after the one cut at the hard limit are
    left out uncounted now; the answer itself is what it was."""
    write_files({"domain/reference.md": _reference()})
    api.index()
    with TestClient(create_app(api, service_config())) as http:
        http.headers["Authorization"] = f"Bearer {TOKEN}"
        ask = {"doc_path": "domain/reference.md", "hard_limit": 1000, "verbose": True}
        context = http.post("/api/context", json=ask).json()
    shown = context["items"]
    assert {i["tier"] for i in shown} == {"mandatory"} and 5 < len(shown) < 40
    assert (
        context["tokens"] <= 1000 and "Field 0 holds the refund amount of line 0" in context["text"]
    )
    left_out = [
        e for e in context["diagnostics"]["exclusions"] if e["reason"].startswith(OVER_HARD_LIMIT)
    ]
    assert len(shown) + len(left_out) == SECTIONS + 1
    assert f"({len(shown)} of {SECTIONS + 1} sections" in context["warnings"][0]
    counted = [e for e in left_out if e["tokens"]]  # the one cut there, maybe one or two more
    assert 1 <= len(counted) <= 3 and counted == left_out[: len(counted)]
    assert all(e["reason"] == f"{OVER_HARD_LIMIT}needs {e['tokens']} tokens" for e in counted)
    rest = {(e["reason"], e["tokens"]) for e in left_out[len(counted) :]}
    assert rest == {(f"{OVER_HARD_LIMIT}{PAST_THE_CUT}", 0)}
