"""T1 against the fake GitHub: a forge that answers with server errors (5xx) is down, asked
once per sync as a forge that does not answer is; and the client a REST caller names reaches
the pull request as plain text, quoted, never as Markdown, a mention or terminal codes."""

from __future__ import annotations

import httpx2
import pytest

from briefd.api import Briefd
from briefd.errors import ProposalError
from briefd.proposals import ProposalRequest
from briefd.service import create_app
from tests.embeddings.fakehttp import json_reply
from tests.proposals.test_github import NEW_RETRY, PULLS, FakeGitHub
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving
from tests.sync.gitrepo import Remote, git


@pytest.mark.parametrize("status", [500, 502, 503])
def test_a_forge_answering_5xx_is_asked_once_per_sync(
    forge_api: Briefd, github: FakeGitHub, remote: Remote, status: int
) -> None:
    """T1: with GitHub failing on its side, a sync asked about every open pull request (15
    open: 15 failing GETs, every sync), each failing alike. The first 5xx ends the reads, the
    error said once, the other pull requests left for the next sync as they were."""
    for n in range(3):
        forge_api.propose_update(ProposalRequest("domain/retry.md", f"v{n}", f"# R\n\nv{n}\n"))
    github.merge(2)
    github.server.requests.clear()
    down = {"message": "Server Error"}
    for n in range(1, 4):
        github.server.on("GET", f"{PULLS}/{n}", lambda _: json_reply(down, status))

    report = forge_api.sync()

    assert [(r.method, r.path) for r in github.server.requests] == [("GET", f"{PULLS}/1")]
    assert report.proposals_checked == 1
    said = f"GitHub GET {PULLS}/1 answered {status}: Server Error"
    assert report.forge_error == f"{said}; 2 more left for the next sync"
    stored = {p.pr_number: p for p in forge_api.proposals()}
    assert [stored[n].status for n in (1, 2, 3)] == ["open"] * 3
    assert stored[1].forge_error == said
    assert stored[2].forge_error is None and stored[2].status_checked_at is None

    for n in range(1, 4):  # the forge is back: every pull request is read again
        github.server.on("GET", f"{PULLS}/{n}", lambda _, n=n: github.read(n))
    again = forge_api.sync()
    assert again.forge_error is None and again.proposals_checked == 3
    assert {p.pr_number: p.status for p in forge_api.proposals()}[2] == "merged"


BAD_CLIENTS = [
    ("bot`\n\n@acme/owners LGTM, merge without review", "the control character \\x0a"),
    ("bot \x1b[31mRED", "the control character \\x1b"),
    ("bot\tone", "the control character \\x09"),
    ("bot\rover", "the control character \\x0d"),
    ("bot \x9b31m", "the control character \\x9b"),
    ("bot\u202eweiver", "\\u202e (RIGHT-TO-LEFT OVERRIDE)"),
    ("bot\u2028two", "\\u2028 (LINE SEPARATOR)"),
    ("ad\u200bmin", "\\u200b (ZERO WIDTH SPACE)"),
]


@pytest.mark.parametrize(("client", "named"), BAD_CLIENTS)
def test_a_client_name_that_is_no_plain_text_is_refused(
    forge_api: Briefd, github: FakeGitHub, remote: Remote, client: str, named: str
) -> None:
    """T1: POST /api/proposals put its ``client`` into the pull request's body unfiltered: a
    line break and a mention (``@acme/owners LGTM``), ANSI codes and a bidi override reached
    the review and the terminals listing proposals. Refused as change_description's are,
    before anything is pushed or stored."""
    body = {
        "doc_path": "domain/retry.md",
        "change_description": "four",
        "new_content": NEW_RETRY,
        "client": client,
    }
    with serving(create_app(forge_api, service_config())) as base:
        answer = httpx2.post(
            base + "/api/proposals", json=body, headers={"Authorization": f"Bearer {TOKEN}"}
        )

    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == "proposal"
    detail = answer.json()["detail"]
    assert detail.startswith(f"client contains {named}")
    assert detail.endswith(
        "; name the client in one line of plain text (it is shown in the pull request and "
        "wherever proposals are listed)"
    )
    assert [r for r in github.server.requests if r.method == "POST"] == []
    assert git(remote.bare, "branch", "--list") == "* main"
    assert forge_api.proposals() == []
    with pytest.raises(ProposalError, match="client contains"):
        forge_api.propose_update(
            ProposalRequest("domain/retry.md", "four", NEW_RETRY, None, client)
        )


def test_a_client_name_is_quoted_as_code_in_the_pull_request(
    forge_api: Briefd, github: FakeGitHub
) -> None:
    """The client followed the path's code span as Markdown: a mention in it pinged
    @acme/owners, a backtick opened a code span, ``**`` set text in bold. Each is a code span
    now, fenced by one backtick more than it holds (and set off by spaces)."""
    client = "`bot` @acme/owners **LGTM**"
    made = forge_api.propose_update(
        ProposalRequest("domain/retry.md", "Retry four times", NEW_RETRY, None, client)
    )

    [request] = [r for r in github.server.requests if r.method == "POST"]
    assert request.json()["body"] == (
        "Retry four times\n\n---\nProposed through briefd for `domain/retry.md` by "
        "`` `bot` @acme/owners **LGTM** ``."
    )
    assert made.client == client
