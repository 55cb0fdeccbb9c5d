"""T1 against a fake GitHub on 127.0.0.1 speaking the REST shapes briefd uses
(``POST /repos/{owner}/{repo}/pulls``, ``GET /repos/{owner}/{repo}/pulls/{number}``)."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from mcp import Client
from mcp_types import CallToolResult

from briefd.api import Briefd
from briefd.errors import ProposalError
from briefd.proposals import ProposalRequest
from briefd.service import create_app
from briefd.settings import Settings, load_settings, with_overrides
from tests.embeddings.fakehttp import FakeServer, Reply, Request, fake_server, json_reply
from tests.service.conftest import service_config
from tests.service.live import TOKEN, mcp_session, serving
from tests.sync.conftest import git_settings
from tests.sync.gitrepo import RETRY, Remote, git

TOKEN_ENV = "BRIEFD_TEST_GITHUB_TOKEN"
NEW_RETRY = RETRY.replace("three times", "four times").lstrip("\n")
PULLS = "/repos/acme/knowledge/pulls"


class FakeGitHub:
    """Pull requests kept in memory; ``fail_reads`` makes GET answer 500."""

    def __init__(self, server: FakeServer) -> None:
        self.server = server
        self.pulls: dict[int, dict[str, Any]] = {}
        self.fail_reads = False
        self.read_delay = 0.0  # seconds before a GET answers (a forge that hangs)
        self.create_delay = 0.0  # seconds before POST answers, the pull request opened
        self.posted_twice = False  # a proxy retried POST: its answer is the second one's
        self.create_failure = 0  # a status POST answers in place of 201: GitHub's front failed
        self.failed_opened = True  # … after it opened the pull request (else before)
        self.clock = 0  # seconds past 2026-11-29T12:00Z: what updated_at says
        server.on("POST", PULLS, self.create)
        server.on("GET", PULLS, self.list)

    def create(self, request: Request) -> Reply:
        if request.headers.get("authorization") != "Bearer ghp_test":
            return json_reply({"message": "Bad credentials"}, 401)
        body = request.json()
        if self.posted_twice:
            self.open_pull(body)
        if any(
            p["head"]["ref"] == body["head"] and p["state"] == "open" for p in self.pulls.values()
        ):
            return json_reply(self.exists(body["head"]), 422)
        if self.create_failure and not self.failed_opened:
            return json_reply({"message": "Unavailable"}, self.create_failure)
        pull = self.open_pull(body)
        time.sleep(self.create_delay)
        if self.create_failure:
            return json_reply({"message": "Server Error"}, self.create_failure)
        return json_reply(pull, 201)

    @staticmethod
    def exists(head: str) -> dict[str, object]:
        """GitHub's answer to a second pull request from an open one's branch."""
        return {
            "message": "Validation Failed",
            "errors": [
                {
                    "resource": "PullRequest",
                    "code": "custom",
                    "message": f"A pull request already exists for acme:{head}.",
                }
            ],
            "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
            "status": "422",
        }

    def open_pull(self, body: dict[str, str]) -> dict[str, Any]:
        number = len(self.pulls) + 1
        pull: dict[str, object] = {
            "url": f"{self.server.url}{PULLS}/{number}",
            "html_url": f"https://github.com/acme/knowledge/pull/{number}",
            "number": number,
            "state": "open",
            "title": body["title"],
            "body": body["body"],
            "head": {
                "label": f"acme:{body['head']}",
                "ref": body["head"],
                "repo": {"full_name": "acme/knowledge"},
            },
            "base": {"ref": body["base"]},
            "merged": False,
            "merged_at": None,
            "updated_at": self.now(),
        }
        self.pulls[number] = pull
        self.server.on("GET", f"{PULLS}/{number}", lambda _: self.read(number))
        return pull

    def list(self, request: Request) -> Reply:
        """``GET /pulls?head=owner:branch&state=all``: the pull requests from that branch;
        without ``head``, every one, newest first, or with ``sort=updated`` the one updated
        last first (as GitHub lists them, without ``merged``)."""
        query = parse_qs(urlsplit(request.path).query)
        state = query.get("state", ["open"])[0]
        found = [p for p in reversed(self.pulls.values()) if state in ("all", p["state"])]
        if query.get("sort") == ["updated"]:
            found.sort(key=lambda p: str(p["updated_at"]), reverse=True)
        if "head" in query:
            owner, _, branch = query["head"][0].partition(":")
            assert owner == "acme" and state == "all"
            found = [p for p in found if p["head"]["ref"] == branch]
        return json_reply([{k: v for k, v in p.items() if k != "merged"} for p in found])

    def read(self, number: int) -> Reply:
        time.sleep(self.read_delay)
        if self.fail_reads:
            return json_reply({"message": "Server Error"}, 500)
        return json_reply(self.pulls[number])

    def merge(self, number: int) -> None:
        self.pulls[number].update(state="closed", merged=True, merged_at=self.now())
        self.pulls[number]["updated_at"] = self.pulls[number]["merged_at"]

    def set_state(self, number: int, state: str) -> None:
        """Close or reopen a pull request, as a reviewer does on GitHub."""
        self.pulls[number].update(state=state, updated_at=self.now())

    def now(self) -> str:
        self.clock += 1
        return f"2026-11-29T12:{self.clock // 60:02d}:{self.clock % 60:02d}Z"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with fake_server() as server:
        yield FakeGitHub(server)


def forge_settings(tmp_path: Path, remote: Remote, github: FakeGitHub) -> Settings:
    """A clone of ``remote`` whose proposals open pull requests on the fake GitHub."""
    return with_overrides(
        git_settings(tmp_path, remote.url),
        {
            "forge.type": "github",
            "forge.api_url": github.server.url,
            "forge.repo": "acme/knowledge",
            "forge.token_env": TOKEN_ENV,
        },
    )


@pytest.fixture
def forge_api(
    tmp_path: Path, remote: Remote, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Briefd]:
    monkeypatch.setenv(TOKEN_ENV, "ghp_test")
    settings = forge_settings(tmp_path, remote, github)
    with Briefd(settings, embedder=None) as api:
        api.sync()
        yield api


def test_a_pull_request_is_opened_with_the_real_shape(
    forge_api: Briefd, github: FakeGitHub
) -> None:
    made = forge_api.propose_update(
        ProposalRequest("domain/retry.md", "Retry four times\n\nOps asked.", NEW_RETRY, None, "mcp")
    )

    [request] = [r for r in github.server.requests if r.method == "POST"]
    assert request.path == PULLS
    assert request.headers["accept"] == "application/vnd.github+json"
    assert request.headers["x-github-api-version"] == "2022-11-28"
    body = request.json()
    assert body["head"] == made.branch and body["base"] == "main"
    assert body["title"] == "Retry four times"
    assert body["body"].startswith("Retry four times\n\nOps asked.\n\n---\n")
    assert body["body"].endswith("\n---\nProposed through briefd for `domain/retry.md` by `mcp`.")
    assert made.status == "open" and made.pr_number == 1
    assert made.pr_url == "https://github.com/acme/knowledge/pull/1"
    assert forge_api.proposals()[0].pr_url == made.pr_url


def test_a_long_title_is_cut_before_a_character_not_inside_it(
    forge_api: Briefd, github: FakeGitHub
) -> None:
    """The pull request's title is the description's first line cut to 72 characters: it
    ended on 👍 without its skin tone 🏽 (another sign on GitHub)."""
    first = "Onay süreci: " + "a" * 57 + "👍🏽 eklendi"  # 👍 is the 71st character
    forge_api.propose_update(ProposalRequest("domain/retry.md", first, NEW_RETRY, None, "mcp"))
    [request] = [r for r in github.server.requests if r.method == "POST"]
    assert request.json()["title"] == "Onay süreci: " + "a" * 57 + "…"


def test_a_later_sync_flips_the_status_to_merged(forge_api: Briefd, github: FakeGitHub) -> None:
    made = forge_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    still_open = forge_api.sync()
    assert still_open.proposals_checked == 1 and still_open.proposals_changed == ()

    github.merge(1)
    report = forge_api.sync()

    assert report.error is None
    assert report.proposals_changed == (f"{made.id}: open → merged",)
    [stored] = forge_api.proposals()
    assert stored.status == "merged" and stored.status_checked_at is not None
    assert forge_api.sync().proposals_checked == 0  # merged ones are not asked about again


def test_a_closed_pull_request_is_closed(forge_api: Briefd, github: FakeGitHub) -> None:
    forge_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    github.pulls[1]["state"] = "closed"
    forge_api.sync()
    assert forge_api.proposals()[0].status == "closed"


def test_a_forge_500_leaves_the_status_and_never_fails_indexing(
    forge_api: Briefd, github: FakeGitHub, remote: Remote
) -> None:
    forge_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    github.merge(1)
    github.fail_reads = True
    remote.push({"domain/fx.md": "# FX\n\n## Rates\nRates refresh hourly.\n"})

    report = forge_api.sync()

    assert report.error is None and report.index is not None
    assert report.index.added == ("domain/fx.md",)
    assert report.forge_error == (
        "GitHub GET /repos/acme/knowledge/pulls/1 answered 500: Server Error"
    )
    [stored] = forge_api.proposals()
    assert stored.status == "open" and stored.forge_error == report.forge_error
    assert forge_api.sync_status().last_error is None

    listed = subprocess.run(
        [sys.executable, "-m", "briefd", "proposals"],
        env=briefd_env(remote, forge_api),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.splitlines()
    assert listed[2] == f"    status not read at the last sync: {report.forge_error}"

    github.fail_reads = False
    forge_api.sync()
    [stored] = forge_api.proposals()
    assert stored.status == "merged" and stored.forge_error is None


def test_a_forge_that_does_not_answer_costs_a_sync_one_timeout(
    forge_api: Briefd, github: FakeGitHub, remote: Remote
) -> None:
    """Six open pull requests against a forge that hangs took six timeouts per sync (every
    poll, every ``briefd sync``); the first unanswered read leaves the rest for later."""
    for n in range(6):
        forge_api.propose_update(ProposalRequest("domain/retry.md", f"v{n}", f"# R\n\nv{n}\n"))
    github.read_delay = 2.0
    remote.push({"domain/fx.md": "# FX\n\n## Rates\nRates refresh hourly.\n"})
    api = Briefd(with_overrides(forge_api.settings, {"forge.timeout_seconds": 0.5}), None)

    with api:
        started = time.monotonic()
        report = api.sync()
        elapsed = time.monotonic() - started
        stored = {p.pr_number: p for p in api.proposals()}

    reads = [r for r in github.server.requests if r.method == "GET"]
    assert [r.path for r in reads] == [f"{PULLS}/1"]
    assert elapsed < 2.0
    assert report.index is not None and report.index.added == ("domain/fx.md",)
    assert report.proposals_checked == 1
    assert report.forge_error == (
        f"GitHub GET {PULLS}/1 failed: timed out; check forge.api_url; "
        "5 more left for the next sync"
    )
    assert [stored[n].status for n in range(1, 7)] == ["open"] * 6
    assert stored[1].forge_error == f"GitHub GET {PULLS}/1 failed: timed out; check forge.api_url"
    assert stored[2].forge_error is None and stored[2].status_checked_at is None


def test_a_pull_request_opened_as_the_forge_timed_out_is_the_proposals(
    forge_api: Briefd, github: FakeGitHub, remote: Remote
) -> None:
    """GitHub opened it and answered too late: "propose again" would open a second one."""
    github.create_delay = 1.0
    api = Briefd(with_overrides(forge_api.settings, {"forge.timeout_seconds": 0.5}), None)
    with api:
        made = api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
        assert api.proposals() == [made]
    assert (made.status, made.pr_number, made.forge_error) == ("open", 1, None)
    assert made.pr_url == "https://github.com/acme/knowledge/pull/1"
    assert list(github.pulls) == [1]
    assert github.pulls[1]["head"]["ref"] == made.branch


def test_a_pull_request_opened_as_the_forge_answered_5xx_is_the_proposals(
    forge_api: Briefd, github: FakeGitHub, remote: Remote
) -> None:
    """T1: GitHub answered POST /pulls with a 502 after opening the pull request (its front
    gave up on a slow create); the proposal said "NOT opened … fix the forge setting … and
    propose again", and proposed again before a sync it opened a second pull request beside
    the first, left open and never followed. The branch's pull request is looked for, as after
    a timeout; one GitHub did not open says it failed on its side, not a setting."""
    github.create_failure = 502

    made = forge_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))

    assert (made.status, made.pr_number, made.forge_error) == ("open", 1, None)
    assert made.pr_url == "https://github.com/acme/knowledge/pull/1"
    assert forge_api.proposals() == [made]
    github.create_failure, github.failed_opened = 503, False

    again = NEW_RETRY.replace("four", "five")
    refused = forge_api.propose_update(ProposalRequest("domain/retry.md", "five", again))

    assert (refused.status, refused.pr_url) == ("pushed", None)
    assert refused.forge_error == (
        f"GitHub POST {PULLS} answered 503: Unavailable; the branch {refused.branch} is "
        "pushed, so nothing is lost, and GitHub failed on its side (no setting of briefd's "
        "is wrong): the next sync follows a pull request GitHub opened from it all the same; "
        "if none shows, open one from it into main by hand, or propose again once GitHub "
        "answers"
    )


def test_a_pull_request_that_already_exists_is_the_proposals_and_followed(
    forge_api: Briefd, github: FakeGitHub
) -> None:
    """GitHub answered 422 "A pull request already exists for acme:<branch>" (a retried
    create): the proposal stayed without one (pr None, "open one by hand or propose again"),
    and no sync followed it. The branch's pull request is looked up and kept."""
    github.posted_twice = True

    made = forge_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))

    assert (made.status, made.pr_number, made.forge_error) == ("open", 1, None)
    assert made.pr_url == "https://github.com/acme/knowledge/pull/1"
    assert list(github.pulls) == [1] and github.pulls[1]["head"]["ref"] == made.branch
    lookup = f"{PULLS}?head=acme%3A{made.branch.replace('/', '%2F')}&state=all"
    assert [(r.method, r.path) for r in github.server.requests] == [
        ("POST", PULLS),
        ("GET", lookup),
    ]
    assert forge_api.proposals() == [made]
    github.merge(1)
    assert forge_api.sync().proposals_changed == (f"{made.id}: open → merged",)
    assert forge_api.proposals()[0].status == "merged"


def test_a_refused_pull_request_keeps_the_pushed_branch(
    forge_api: Briefd, github: FakeGitHub, remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN_ENV, "ghp_revoked")

    made = forge_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))

    assert made.status == "pushed" and made.pr_url is None
    assert made.forge_error == (
        "GitHub POST /repos/acme/knowledge/pulls answered 401: Bad credentials; check the token"
        f"; the branch {made.branch} is pushed, so nothing is lost: open a pull request from it "
        "into main by hand, or fix the forge setting (forge.* in briefd.yaml, or its token) and "
        "propose again"
    )
    assert git(remote.bare, "rev-parse", made.branch) == made.commit_hash
    assert forge_api.proposals() == [made]


def test_a_pull_request_opened_by_hand_for_a_refused_one_is_followed(
    forge_api: Briefd, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """T1: the forge refused a proposal's pull request, and its advice said "open a pull
    request from it into main by hand"; opened (and merged) so, no sync ever looked: the
    proposal stayed "pushed, no pull request" for good. A sync now finds the branch's pull
    request (one list request for every such proposal) and follows it."""
    monkeypatch.setenv(TOKEN_ENV, "ghp_revoked")
    refused = forge_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    never = forge_api.propose_update(ProposalRequest("domain/glossary.md", "why", "# G\n"))
    monkeypatch.setenv(TOKEN_ENV, "ghp_test")
    github.open_pull({"title": "four", "body": "", "head": refused.branch, "base": "main"})
    github.open_pull({"title": "fork", "body": "", "head": never.branch, "base": "main"})
    github.pulls[2]["head"]["repo"] = {"full_name": "someone/knowledge"}  # a fork's branch
    github.merge(1)

    report = forge_api.sync()

    assert report.forge_error is None
    assert report.proposals_changed == (f"{refused.id}: pushed → merged",)
    stored = {p.id: p for p in forge_api.proposals()}
    assert (stored[refused.id].status, stored[refused.id].forge_error) == ("merged", None)
    assert stored[refused.id].pr_url == "https://github.com/acme/knowledge/pull/1"
    assert stored[never.id] == never  # no pull request of its own: as it was
    lists = [r.path for r in github.server.requests if r.method == "GET"]
    assert lists == [f"{PULLS}?state=all&sort=updated&direction=desc&per_page=100"]
    forge_api.sync()  # the other one is looked for again
    assert [r.path for r in github.server.requests if r.method == "GET"] == lists * 2


def test_a_refused_pull_requests_branch_merged_without_one_is_merged(
    forge_api: Briefd, github: FakeGitHub, remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    """T1: the forge refused a proposal's pull request, and a maintainer merged its branch
    with git instead: the proposal stayed "pushed, no pull request" for good, and every sync
    asked GitHub for the 100 pull requests updated last to find one. A sync now sees the base
    branch holds its commit: merged, and GitHub is asked nothing more for it."""
    monkeypatch.setenv(TOKEN_ENV, "ghp_revoked")
    refused = forge_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    monkeypatch.setenv(TOKEN_ENV, "ghp_test")
    git(remote.work, "fetch", "--quiet", "origin", refused.branch)
    git(remote.work, "merge", "--quiet", "--no-ff", "-m", "Merge the proposal", "FETCH_HEAD")
    git(remote.work, "push", "--quiet", "origin", "main")

    report = forge_api.sync()
    again = forge_api.sync()

    assert report.proposals_changed == (f"{refused.id}: pushed → merged",)
    [stored] = forge_api.proposals()
    assert (stored.status, stored.forge_error, stored.pr_url) == ("merged", None, None)
    assert again.proposals_changed == () and again.forge_error is None
    lists = [r.path for r in github.server.requests if r.method == "GET"]
    assert lists == [f"{PULLS}?state=all&sort=updated&direction=desc&per_page=100"]


def test_the_same_text_proposed_again_after_a_refusal_closes_the_refused_one(
    forge_api: Briefd, github: FakeGitHub, remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    """T1: the forge refused a proposal's pull request and said "fix the forge setting … and
    propose again"; done so, the new proposal opened its pull request, but the first stayed
    "pushed" with its old error for good (repeats were looked for among local and open ones
    only) and every sync asked GitHub for its pull request. It is now closed, naming the
    proposal that superseded it; its branch stays on the remote. Other text is left as is."""
    monkeypatch.setenv(TOKEN_ENV, "ghp_revoked")
    refused = forge_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    other = forge_api.propose_update(ProposalRequest("domain/retry.md", "five", NEW_RETRY + "x\n"))
    monkeypatch.setenv(TOKEN_ENV, "ghp_test")

    again = forge_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))

    assert (again.status, again.pr_number) == ("open", 1)
    stored = {p.id: p for p in forge_api.proposals()}
    assert (stored[refused.id].status, stored[refused.id].forge_error) == (
        "closed",
        f"superseded: the same text was proposed again as proposal {again.id} (branch "
        f"{again.branch}, open, pull request https://github.com/acme/knowledge/pull/1); this "
        "branch is left on the remote, delete it when you like",
    )
    assert stored[other.id] == other  # other text: still waiting for its pull request by hand
    assert git(remote.bare, "rev-parse", refused.branch) == refused.commit_hash
    assert [p.id for p in forge_api.state.unfollowed()] == [other.id]


def test_a_closed_pull_request_reopened_is_followed_again(
    forge_api: Briefd, github: FakeGitHub
) -> None:
    """T1: a reviewer closed a proposal's pull request, then reopened (and merged) it on
    GitHub: the proposal stayed "closed" for good, and the same text could be proposed again
    while it was open. The list of pull requests updated last shows it reopened."""
    made = forge_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    github.set_state(1, "closed")
    assert forge_api.sync().proposals_changed == (f"{made.id}: open → closed",)
    github.set_state(1, "open")

    env = briefd_env(forge_api.settings.sync.remote or "", forge_api)
    env.update(BRIEFD_FORGE__TYPE="github", BRIEFD_FORGE__API_URL=github.server.url)
    env.update(BRIEFD_FORGE__REPO="acme/knowledge", BRIEFD_FORGE__TOKEN_ENV="GH_TOKEN_OF_TEST")
    env["GH_TOKEN_OF_TEST"] = "ghp_test"  # a BRIEFD_ variable would be read as a setting
    command = [sys.executable, "-m", "briefd", "sync"]
    synced = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    reopened = forge_api.sync()

    assert synced.stdout.splitlines()[-2:] == [
        "  proposals: status changes",
        f"    {made.id}: closed → open",
    ]
    assert reopened.proposals_changed == ()  # the command's sync followed it
    assert forge_api.proposals()[0].status == "open"
    assert forge_api.proposals()[0].status == "open"
    with pytest.raises(ProposalError, match="already proposes"):
        forge_api.propose_update(ProposalRequest("domain/retry.md", "again", NEW_RETRY))
    github.merge(1)
    assert forge_api.sync().proposals_changed == (f"{made.id}: open → merged",)
    assert forge_api.sync().proposals_checked == 0  # merged: asked about no more


def test_an_agent_is_told_the_pull_request_was_not_opened(
    forge_api: Briefd, github: FakeGitHub, remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The MCP text an agent reads said only "proposed on branch X (pushed)" when the forge
    refused the pull request; the reason sat in structured content alone. MCP text, REST and
    ``briefd proposals`` now say it was not opened, why, and what to do."""
    monkeypatch.setenv(TOKEN_ENV, "ghp_revoked")
    arguments = {"doc_path": "domain/retry.md", "change_description": "four"}

    async def propose(client: Client) -> CallToolResult:
        return await client.call_tool("propose_update", {**arguments, "new_content": NEW_RETRY})

    with serving(create_app(forge_api, service_config())) as base:
        result = mcp_session(base + "/mcp", propose)
        rest = httpx2.post(
            base + "/api/proposals",
            json={**arguments, "new_content": NEW_RETRY.replace("four", "five")},
            headers={"Authorization": f"Bearer {TOKEN}"},
        )

    assert not result.is_error, result.content
    assert result.structured_content is not None
    branch = result.structured_content["branch"]
    assert git(remote.bare, "rev-parse", branch) == result.structured_content["commit_hash"]
    told = (
        f"proposed on branch {branch} (pushed), but the pull request was NOT opened: GitHub POST "
        f"{PULLS} answered 401: Bad credentials; check the token; the branch {branch} is pushed, "
        "so nothing is lost: open a pull request from it into main by hand, or fix the forge "
        "setting (forge.* in briefd.yaml, or its token) and propose again"
    )
    assert [c.text for c in result.content] == [told]  # type: ignore[union-attr]
    assert rest.status_code == 201
    made = rest.json()
    assert (made["status"], made["pr_url"]) == ("pushed", None)
    assert made["forge_error"].startswith(f"GitHub POST {PULLS} answered 401: Bad credentials")
    assert f"the branch {made['branch']} is pushed" in made["forge_error"]
    assert "open a pull request from it into main by hand" in made["forge_error"]

    listed = subprocess.run(
        [sys.executable, "-m", "briefd", "proposals"],
        env=briefd_env(remote, forge_api),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert f"{branch}  no pull request: GitHub POST {PULLS} answered 401" in listed
    assert f"{made['branch']}  no pull request: GitHub POST {PULLS} answered 401" in listed
    assert listed.count("open a pull request from it into main by hand") == 2


def briefd_env(remote: Remote | str, api: Briefd) -> dict[str, str]:
    """The environment of a `briefd` command run on ``api``'s index."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    source = remote if isinstance(remote, str) else remote.url
    env.update(BRIEFD_SOURCE=source, BRIEFD_DB=str(api.settings.db))
    env.update(BRIEFD_EMBEDDINGS__ENABLED="false", COLUMNS="1000")
    return env


def test_a_missing_token_fails_before_anything_is_pushed(
    forge_api: Briefd, remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TOKEN_ENV)
    with pytest.raises(ProposalError, match=rf"\${TOKEN_ENV} is empty"):
        forge_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    assert git(remote.bare, "branch", "--list") == "* main"


def test_repo_defaults_to_a_github_remote_url() -> None:
    from briefd.proposals.forge import forge_repo
    from briefd.settings import ForgeSettings

    settings = ForgeSettings(type="github")
    assert forge_repo(settings, "https://github.com/acme/kb.git") == "acme/kb"
    assert forge_repo(settings, "git@github.com:acme/kb.git") == "acme/kb"
    assert forge_repo(settings, "https://gitlab.com/acme/kb.git") is None
    assert forge_repo(ForgeSettings(repo="o/r"), "https://github.com/acme/kb") == "o/r"


def github_reply(status: int, body: dict[str, object], **headers: str) -> Reply:
    named = tuple((name.replace("_", "-"), value) for name, value in headers.items())
    return Reply(status, json.dumps(body).encode(), headers=named)


def test_a_rate_limited_forge_is_not_called_a_permission_problem(
    forge_api: Briefd, github: FakeGitHub
) -> None:
    """GitHub's primary rate limit is a 403 with ``X-RateLimit-Remaining: 0``, a secondary
    one a 403 or 429 with ``Retry-After``: both said "the token lacks permission"."""
    limited = {
        "message": "API rate limit exceeded for user ID 1.",
        "documentation_url": "https://docs.github.com/rest/rate-limit",
    }
    reset = "1900000000"  # 2030-03-17 17:46:40 UTC
    primary = github_reply(
        403, limited, X_RateLimit_Limit="5000", X_RateLimit_Remaining="0", X_RateLimit_Reset=reset
    )
    github.server.on("POST", PULLS, lambda _: primary)
    refused = forge_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))

    github.server.on("POST", PULLS, github.create)
    made = forge_api.propose_update(ProposalRequest("domain/retry.md", "five", NEW_RETRY))
    secondary = {"message": "You have exceeded a secondary rate limit."}
    github.server.on("GET", f"{PULLS}/1", lambda _: github_reply(403, secondary, Retry_After="60"))
    report = forge_api.sync()

    assert refused.pr_url is None and refused.forge_error is not None
    assert refused.forge_error.startswith(
        f"GitHub POST {PULLS} answered 403: API rate limit exceeded for user ID 1.; "
        "rate-limited, not a permission problem: GitHub takes no more requests from this token "
        "until 2030-03-17 17:46:40 UTC (X-RateLimit-Reset); wait until then; the branch "
    )
    assert made.pr_number == 1
    assert report.forge_error == (
        f"GitHub GET {PULLS}/1 answered 403: You have exceeded a secondary rate limit.; "
        "rate-limited (a secondary limit), not a permission problem: wait 60 s"
    )
    assert "permission;" not in refused.forge_error + report.forge_error


def test_a_moved_repository_is_named_and_never_followed(
    forge_api: Briefd, github: FakeGitHub
) -> None:
    """A renamed or transferred repository answers 307 (POST) or 301 (GET) with a Location:
    the user read "the answer is not a pull request", with neither. The token is sent nowhere
    else: the redirect says where the repository went and what to set."""
    url = github.server.url
    moved_post = github_reply(
        307,
        {"message": "Temporary Redirect", "url": f"{url}/repos/acme/kb2/pulls"},
        Location=f"{url}/repos/acme/kb2/pulls",
    )
    github.server.on("POST", PULLS, lambda _: moved_post)
    refused = forge_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))

    github.server.on("POST", PULLS, github.create)
    forge_api.propose_update(ProposalRequest("domain/retry.md", "five", NEW_RETRY))
    by_id = github_reply(
        301,
        {"message": "Moved Permanently", "url": f"{url}/repositories/42/pulls/1"},
        Location=f"{url}/repositories/42/pulls/1",
    )
    github.server.on("GET", f"{PULLS}/1", lambda _: by_id)
    renamed = forge_api.sync().forge_error
    with fake_server() as elsewhere:
        away = github_reply(301, {"message": "Moved"}, Location=f"{elsewhere.url}{PULLS}/1")
        github.server.on("GET", f"{PULLS}/1", lambda _: away)
        other_host = forge_api.sync().forge_error
        assert elsewhere.requests == []

    assert refused.forge_error is not None and refused.pr_url is None
    assert refused.forge_error.startswith(
        f"GitHub POST {PULLS} answered 307: the repository acme/knowledge moved to acme/kb2 "
        f"(Location: {url}/repos/acme/kb2/pulls); set forge.repo: acme/kb2 in briefd.yaml, "
        "and point the source's remote URL at the moved repository; the branch "
    )
    assert renamed == (
        f"GitHub GET {PULLS}/1 answered 301: the repository acme/knowledge was renamed or "
        f"transferred (Location: {url}/repositories/42/pulls/1, by its id); set forge.repo in "
        "briefd.yaml to its new owner/name, and point the source's remote URL at the moved "
        "repository"
    )
    assert other_host == (
        f"GitHub GET {PULLS}/1 answered 301: a redirect to {elsewhere.url}{PULLS}/1, not "
        "followed; check forge.api_url and forge.repo"
    )
    assert all(r.path.startswith(PULLS) for r in github.server.requests)
    assert forge_api.proposals()[0].status == "open"


def test_a_pull_request_refused_for_a_rate_limit_says_when_to_propose_again(
    forge_api: Briefd, github: FakeGitHub
) -> None:
    """The advice kept with a proposal whose pull request GitHub refused for its rate limit
    said "fix the forge setting (forge.* in briefd.yaml, or its token) and propose again":
    nothing needs fixing, and proposing again before the limit resets is refused again. It
    now says when to propose again."""
    limited = {"message": "API rate limit exceeded for user ID 1."}
    primary = github_reply(403, limited, X_RateLimit_Remaining="0", X_RateLimit_Reset="1900000000")
    github.server.on("POST", PULLS, lambda _: primary)
    hourly = forge_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    secondary = github_reply(429, {"message": "Too many requests"}, Retry_After="90")
    github.server.on("POST", PULLS, lambda _: secondary)
    before = datetime.now(UTC).replace(microsecond=0)
    burst = forge_api.propose_update(ProposalRequest("domain/retry.md", "five", NEW_RETRY))

    assert hourly.forge_error == (
        f"GitHub POST {PULLS} answered 403: API rate limit exceeded for user ID 1.; "
        "rate-limited, not a permission problem: GitHub takes no more requests from this token "
        "until 2030-03-17 17:46:40 UTC (X-RateLimit-Reset); wait until then; the branch "
        f"{hourly.branch} is pushed, so nothing is lost: open a pull request from it into main "
        "by hand, or propose again after 2030-03-17 17:46:40 UTC (sooner, GitHub refuses it "
        "again)"
    )
    assert burst.forge_error is not None
    advice = burst.forge_error.split("; the branch ")[1]
    assert advice.startswith(f"{burst.branch} is pushed, so nothing is lost: open a pull request")
    again = re.fullmatch(
        r".* or propose again after (.+) UTC \(sooner, GitHub refuses it again\)", advice
    )
    assert again is not None, advice
    at = datetime.strptime(again.group(1), "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    assert before + timedelta(seconds=90) <= at <= datetime.now(UTC) + timedelta(seconds=90)
    assert "forge setting" not in hourly.forge_error + burst.forge_error


def test_a_rate_limited_status_read_ends_the_refresh(
    forge_api: Briefd, github: FakeGitHub, remote: Remote, caplog: pytest.LogCaptureFixture
) -> None:
    """After GitHub refused a pull request's status read for its rate limit, the refresh read
    every other one all the same: each request refused again and counted against the token.
    The first rate-limited answer ends the run; the statuses stay as last read."""
    for n in range(4):
        forge_api.propose_update(ProposalRequest("domain/retry.md", f"v{n}", f"# R\n\nv{n}\n"))
    limited = github_reply(
        403,
        {"message": "API rate limit exceeded for user ID 1."},
        X_RateLimit_Remaining="0",
        X_RateLimit_Reset="1900000000",
    )
    for n in range(1, 5):
        github.server.on("GET", f"{PULLS}/{n}", lambda _: limited)
    remote.push({"domain/fx.md": "# FX\n\n## Rates\nRates refresh hourly.\n"})

    with caplog.at_level(logging.WARNING, logger="briefd"):
        report = forge_api.sync()
        forge_api.sync()

    reads = [r.path for r in github.server.requests if r.method == "GET"]
    assert reads == [f"{PULLS}/1", f"{PULLS}/1"]
    refused = (
        f"GitHub GET {PULLS}/1 answered 403: API rate limit exceeded for user ID 1.; "
        "rate-limited, not a permission problem: GitHub takes no more requests from this token "
        "until 2030-03-17 17:46:40 UTC (X-RateLimit-Reset); wait until then"
    )
    assert report.index is not None and report.index.added == ("domain/fx.md",)
    assert report.proposals_checked == 1
    assert report.forge_error == f"{refused}; 3 more left for the next sync"
    stored = {p.pr_number: p for p in forge_api.proposals()}
    assert [stored[n].status for n in range(1, 5)] == ["open"] * 4
    assert stored[1].forge_error == refused
    assert stored[2].forge_error is None and stored[2].status_checked_at is None
    warnings = [r.getMessage() for r in caplog.records if "rate" in r.getMessage()]
    assert (
        warnings
        == [
            "GitHub rate-limits the token: 4 of 4 pull request statuses unread, left for the next "
            "sync (GitHub takes the token's requests again after 2030-03-17 17:46:40 UTC)"
        ]
        * 2
    )


def test_a_repository_the_token_cannot_see_says_what_to_check(
    forge_api: Briefd, github: FakeGitHub
) -> None:
    """T1: GitHub answers 404 to a token that may not read a private repository (and for a
    mistyped forge.repo); the proposal said only "answered 404: Not Found", while a 401 or a
    403 said what to check. A sync's status read says the same."""
    opened = forge_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    not_found = {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}
    for method, path in (("POST", PULLS), ("GET", f"{PULLS}/{opened.pr_number}")):
        github.server.on(method, path, lambda _: json_reply(not_found, 404))

    made = forge_api.propose_update(ProposalRequest("domain/glossary.md", "why", "# G\n"))
    report = forge_api.sync()

    assert made.status == "pushed" and made.pr_url is None and made.forge_error is not None
    advice = (
        "answered 404: Not Found; check forge.repo (owner/name), and that the token may read "
        "that repository (a fine-grained token lists the repositories it reaches)"
    )
    assert made.forge_error.startswith(f"GitHub POST {PULLS} {advice}; the branch {made.branch}")
    assert report.error is None and report.forge_error == (
        f"GitHub GET {PULLS}/1 {advice}; GitHub answers so for forge.repo's repository with this "
        "token, and would answer every other request about it alike, so this sync asked it "
        "nothing more: 1 of 1 open pull requests unread, each keeping its last status"
    )
    assert forge_api.proposals()[1].status == "open"


def test_a_forge_repo_the_branch_was_not_pushed_to_is_named(
    tmp_path: Path, remote: Remote, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """T1: with forge.repo naming another repository than the one proposals are pushed to
    (a mirror, a fork's upstream), GitHub answers 422 with a field error that has no message;
    the proposal showed it as a Python dict, "({'resource': 'PullRequest', 'field': 'head',
    'code': 'invalid'})", and said nothing of forge.repo."""
    invalid = {
        "message": "Validation Failed",
        "errors": [{"resource": "PullRequest", "field": "head", "code": "invalid"}],
        "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
    }
    github.server.on("POST", PULLS, lambda _: json_reply(invalid, 422))
    monkeypatch.setenv(TOKEN_ENV, "ghp_test")
    settings = forge_settings(tmp_path, remote, github)
    with Briefd(settings, embedder=None) as api:
        api.sync()
        made = api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))

    assert made.status == "pushed" and made.forge_error is not None
    assert made.forge_error.startswith(
        f"GitHub POST {PULLS} answered 422: Validation Failed (head invalid: the proposal "
        "branch is not in forge.repo's repository: forge.repo must name the repository "
        "proposals are pushed to (source's, or proposals.push's remote)); the branch "
    )


def test_the_same_text_proposed_again_while_its_pull_request_is_open_is_refused(
    forge_api: Briefd, github: FakeGitHub, remote: Remote
) -> None:
    """T1: an agent that proposed a change twice (it retried, or forgot it had) got a second
    branch and a second pull request of the same text for reviewers to sort out. While the
    first is open the second is refused, naming it; once it is closed the text may be
    proposed again."""
    first = forge_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))

    with pytest.raises(ProposalError) as refused:
        forge_api.propose_update(ProposalRequest("domain/retry.md", "again", NEW_RETRY))

    assert str(refused.value) == (
        f"new_content for domain/retry.md is what proposal {first.id} (branch {first.branch}, "
        "open, pull request https://github.com/acme/knowledge/pull/1) already proposes; "
        "nothing was proposed: that one waits for review (merge or close it, or propose "
        "other text)"
    )
    assert [r.method for r in github.server.requests].count("POST") == 1
    assert git(remote.bare, "branch", "--list", "briefd/*").split() == [first.branch]
    other = forge_api.propose_update(ProposalRequest("domain/retry.md", "five", NEW_RETRY + "x\n"))
    assert other.status == "open"

    github.pulls[1]["state"] = "closed"
    forge_api.sync()
    again = forge_api.propose_update(ProposalRequest("domain/retry.md", "again", NEW_RETRY))
    assert again.status == "open" and again.pr_number == 3


def test_a_token_pasted_with_a_line_break_opens_the_pull_request(
    forge_api: Briefd, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A token read from a file or a Kubernetes secret often ends in a line break: GitHub's
    pull request was not opened, and the refusal quoted the header, token and all, to the
    agent, the proposals list and the dashboard ("Illegal header value b'Bearer ghp_…'")."""
    monkeypatch.setenv(TOKEN_ENV, "ghp_test\r\n")
    made = forge_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    assert (made.status, made.pr_number, made.forge_error) == ("open", 1, None)


@pytest.mark.parametrize(
    ("token", "named"),
    [("ghp_te st", "a space"), ("ghp_te\nst", "a line break"), ("ghp_teést", "U+00E9")],
)
def test_a_token_no_header_can_carry_is_refused_without_being_shown(
    forge_api: Briefd, remote: Remote, monkeypatch: pytest.MonkeyPatch, token: str, named: str
) -> None:
    monkeypatch.setenv(TOKEN_ENV, token)
    with pytest.raises(ProposalError) as refused:
        forge_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    assert str(refused.value) == (
        f"${TOKEN_ENV} holds a character (character 7: {named}) that an HTTP header cannot "
        "carry: a paste that took a line break or a space with it? Set it again, exactly as issued"
    )
    assert git(remote.bare, "branch", "--list") == "* main"
    assert forge_api.proposals() == []


FORGE_ELSEWHERE = "http://forge.example.invalid/api/v3"


def cloned_project(tmp_path: Path, remote: Remote, api_url: str) -> Settings:
    """The settings a cloned repository's own briefd.yaml gives (found, not named)."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "briefd.yaml").write_text(
        f"source: {remote.url}\ndb: data/index.db\nembeddings: {{enabled: false}}\n"
        f"proposals: {{enabled: true}}\nforge:\n  type: github\n  api_url: {api_url}\n"
        f"  repo: acme/knowledge\n  token_env: {TOKEN_ENV}\n"
    )
    return load_settings(env={"HOME": str(tmp_path / "home")}, project=project)


def test_a_project_file_cannot_send_the_token_to_a_forge_only_it_names(
    tmp_path: Path, remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The token went to any forge.api_url a cloned repository's briefd.yaml wrote; now the
    proposal is refused before anything is pushed or sent (a proxy on 127.0.0.1 stands for
    the network: it receives nothing)."""
    monkeypatch.setenv(TOKEN_ENV, "ghp_not_a_real_token")
    with fake_server() as proxy:
        for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        with Briefd(cloned_project(tmp_path, remote, FORGE_ELSEWHERE), embedder=None) as api:
            api.sync()
            with pytest.raises(ProposalError) as refused:
                api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
        assert proxy.requests == []
    file = tmp_path / "project" / "briefd.yaml"
    assert str(refused.value) == (
        f"${TOKEN_ENV} is not sent to {FORGE_ELSEWHERE}: forge.api_url in {file} names it, and "
        "a project's settings file may not send a secret to a host only it names; to trust it, "
        f"set BRIEFD_FORGE__API_URL={FORGE_ELSEWHERE} in your environment, or name that "
        f"settings file yourself (`briefd --config {file} …`, or $BRIEFD_CONFIG)"
    )
    assert git(remote.bare, "branch", "--list") == "* main"


def test_a_forge_on_this_machine_in_a_project_file_opens_the_pull_request(
    tmp_path: Path, remote: Remote, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN_ENV, "ghp_test")
    with Briefd(cloned_project(tmp_path, remote, github.server.url), embedder=None) as api:
        api.sync()
        made = api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    assert made.status == "open" and made.pr_number == 1
    assert {r.headers["authorization"] for r in github.server.requests} == {"Bearer ghp_test"}


def test_a_revoked_token_ends_the_refresh_at_the_first_401_and_says_what_to_do(
    forge_api: Briefd, github: FakeGitHub, remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    """T1: with the forge token revoked, a sync still asked GitHub about every open pull
    request (and then for the list of those updated last): N requests, N times "Bad
    credentials", the sync's forge error the last of them. The first 401 ends the refresh,
    which says once what to do; the statuses stay as last read."""
    for n in range(3):
        forge_api.propose_update(ProposalRequest("domain/retry.md", f"v{n}", f"# R\n\nv{n}\n"))
    github.server.requests.clear()
    bad = github_reply(401, {"message": "Bad credentials", "status": "401"})
    for n in range(1, 4):
        github.server.on("GET", f"{PULLS}/{n}", lambda _: bad)
    github.server.on("GET", PULLS, lambda _: bad)
    monkeypatch.setenv(TOKEN_ENV, "ghp_revoked")
    remote.push({"domain/fx.md": "# FX\n\n## Rates\nRates refresh hourly.\n"})

    report = forge_api.sync()

    assert [(r.method, r.path) for r in github.server.requests] == [("GET", f"{PULLS}/1")]
    assert report.index is not None and report.index.added == ("domain/fx.md",)
    assert report.proposals_checked == 1
    assert report.forge_error == (
        f"GitHub GET {PULLS}/1 answered 401: Bad credentials; check the token; GitHub refuses "
        "the token itself (expired, revoked, or not the one meant), and would refuse every other "
        "request alike, so this sync asked it nothing more: 3 of 3 open pull requests unread, "
        f"each keeping its last status; put a valid token in ${TOKEN_ENV} (forge.token_env) "
        "where briefd runs (a running server reads it when it starts)"
    )
    assert [p.status for p in forge_api.proposals()] == ["open"] * 3


@pytest.mark.parametrize(
    ("status", "said"),
    [
        (403, "Resource not accessible by personal access token; the token lacks permission"),
        (404, "Not Found; check forge.repo (owner/name), and that the token may read that "),
    ],
)
def test_a_token_without_access_to_the_repository_ends_the_refresh_at_the_first_refusal(
    forge_api: Briefd, github: FakeGitHub, status: int, said: str
) -> None:
    """T1: with a token that may not read the repository (a fine-grained token without pull
    requests, or not listing the repository: 403, 404), a sync asked GitHub about every open
    pull request, each refused alike, then for the list of those updated last, on every sync
    (a 401 already stopped at the first). The first such refusal ends the refresh, saying so."""
    for n in range(3):
        forge_api.propose_update(ProposalRequest("domain/retry.md", f"v{n}", f"# R\n\nv{n}\n"))
    github.server.requests.clear()
    message = said.partition(";")[0]
    refused = github_reply(status, {"message": message, "status": str(status)})
    for n in range(1, 4):
        github.server.on("GET", f"{PULLS}/{n}", lambda _: refused)
    github.server.on("GET", PULLS, lambda _: refused)

    report = forge_api.sync()

    assert [(r.method, r.path) for r in github.server.requests] == [("GET", f"{PULLS}/1")]
    assert report.proposals_checked == 1
    assert report.forge_error is not None
    assert report.forge_error.startswith(f"GitHub GET {PULLS}/1 answered {status}: {said}")
    assert report.forge_error.endswith(
        "; GitHub answers so for forge.repo's repository with this token, and would answer "
        "every other request about it alike, so this sync asked it nothing more: 3 of 3 open "
        "pull requests unread, each keeping its last status"
    )
    assert [p.status for p in forge_api.proposals()] == ["open"] * 3
