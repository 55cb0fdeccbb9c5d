"""T1: what an agent and a user are told of where a proposal's branch is when no pull request
says it: a local branch (proposals stay in the checkout) is named as the checkout's, never as
if the team's repository had it; a pushed one no forge follows (forge.type: none) says that
no pull request is opened and what to do, and ``briefd proposals`` reads it plainly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx2
from mcp import Client
from mcp_types import CallToolResult

from briefd.api import Briefd
from briefd.proposals import ProposalRequest
from briefd.proposals.service import where_kept
from briefd.service import create_app
from tests.service.conftest import service_config
from tests.service.live import TOKEN, mcp_session, serving
from tests.sync.conftest import git_settings
from tests.sync.gitrepo import RETRY, Remote, git

NEW_RETRY = RETRY.replace("three times", "four times").lstrip("\n")
ARGUMENTS = {"doc_path": "domain/retry.md", "change_description": "four"}


def proposed_over_mcp(api: Briefd) -> CallToolResult:
    async def propose(client: Client) -> CallToolResult:
        return await client.call_tool("propose_update", {**ARGUMENTS, "new_content": NEW_RETRY})

    with serving(create_app(api, service_config())) as base:
        return mcp_session(base + "/mcp", propose)


def listed(api: Briefd, source: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    env.update(BRIEFD_SOURCE=source, BRIEFD_DB=str(api.settings.db), COLUMNS="1000")
    env.update(BRIEFD_EMBEDDINGS__ENABLED="false", BRIEFD_PROPOSALS__ENABLED="true")
    command = [sys.executable, "-m", "briefd", "proposals"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_local_proposal_is_named_as_the_checkouts_branch_not_the_teams(
    tmp_path: Path, remote: Remote
) -> None:
    """The MCP answer said "proposed on branch … of the knowledge repository (local: not
    pushed…)": an agent told the user the change was in the team's repository for review,
    where nobody but the checkout ever sees it."""
    with Briefd(git_settings(tmp_path, str(remote.work)), embedder=None) as api:
        api.index()
        result = proposed_over_mcp(api)

    assert not result.is_error, result.content
    assert result.structured_content is not None
    branch = result.structured_content["branch"]
    assert result.structured_content["status"] == "local"
    assert [c.text for c in result.content] == [  # type: ignore[union-attr]
        f"proposed on branch {branch}, a local branch of the repository {remote.work}, not "
        "pushed anywhere (proposals.push keeps this source's proposals there), so nobody sees "
        f"it until it is merged there or pushed for review (git -C {remote.work} push origin "
        f"{branch})"
    ]
    assert git(remote.work, "branch", "--list", branch) != ""
    assert git(remote.bare, "branch", "--list", branch) == ""


def test_a_pushed_proposal_no_forge_follows_says_what_comes_next(
    tmp_path: Path, remote: Remote
) -> None:
    """forge.type: none: the MCP answer was "proposed on branch … (pushed)", and `briefd
    proposals` showed "–" for it, then "no pull request: its branch … (deleted unmerged), so a
    sync closed it" once a reviewer deleted it, which read like a failed pull request. The
    answer says none is opened and what to do; the listing says what the sync found."""
    with Briefd(git_settings(tmp_path, remote.url), embedder=None) as api:
        api.sync()
        result = proposed_over_mcp(api)
        assert result.structured_content is not None
        branch = result.structured_content["branch"]
        waiting = listed(api, remote.url)
        git(remote.bare, "branch", "-D", branch)
        api.sync()
        closed = listed(api, remote.url)

    assert not result.is_error, result.content
    assert [c.text for c in result.content] == [  # type: ignore[union-attr]
        f"proposed on branch {branch}, pushed to the source's remote; no pull request is "
        "opened (forge.type: none), so open one from it into main for review, or merge it "
        "there; syncs follow the branch: merged once main holds its change, closed when the "
        "branch is deleted unmerged"
    ]
    assert (
        f"pushed  domain/retry.md  {branch}  no pull request (forge.type: none): open one from "
        "the branch, or merge it  "
    ) in waiting
    assert (
        f"closed  domain/retry.md  {branch}  its branch {branch} is no longer on the remote "
        "'origin', and main does not hold its change (deleted unmerged), so a sync closed it"
    ) in closed
    assert "no pull request: " not in closed


def test_a_checkout_without_the_remote_is_not_told_to_push_to_it(tmp_path: Path) -> None:
    """A checkout made with `git init` has no remote: the push it was told to run named
    'origin', which it does not have."""
    work = tmp_path / "kb"
    work.mkdir()
    git(work, "init", "--quiet", "--initial-branch=main")
    (work / "domain").mkdir()
    (work / "domain" / "retry.md").write_text(RETRY.lstrip("\n"))
    git(work, "add", ".")
    git(work, "commit", "--quiet", "-m", "knowledge")
    settings = git_settings(tmp_path, str(work))
    with Briefd(settings, embedder=None) as api:
        api.index()
        made = api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))

    assert made.status == "local"
    said = where_kept(settings, made) or ""
    assert said.endswith(f"(git -C {work} push <remote> {made.branch})")


def test_the_rest_answer_says_where_the_branch_is_as_mcp_does(
    tmp_path: Path, remote: Remote
) -> None:
    """POST /api/proposals answered 201 with only ``status`` ("local", "pushed") for a branch
    no pull request names: a REST client could not tell its user that a local one is seen by
    nobody but the checkout, nor what comes next for one no forge opens a pull request for.
    Its ``where`` now says it in the MCP answer's words, and the OpenAPI schema documents it."""
    auth = {"Authorization": f"Bearer {TOKEN}"}
    change = {**ARGUMENTS, "new_content": NEW_RETRY}
    answers = []
    for source in (str(remote.work), remote.url):  # a checkout's default: local; a URL: pushed
        with Briefd(git_settings(tmp_path / str(len(answers)), source), embedder=None) as api:
            api.sync()
            with serving(create_app(api, service_config())) as base:
                made = httpx2.post(base + "/api/proposals", json=change, headers=auth, timeout=60)
                listed = httpx2.get(base + "/api/proposals", headers=auth).json()
                schema = httpx2.get(base + "/openapi.json", headers=auth).json()
            assert made.status_code == 201, made.text
            answers.append(made.json())
            assert "where" not in listed["proposals"][0]  # the listing's status says the rest

    local, pushed = answers
    assert (local["status"], pushed["status"]) == ("local", "pushed")
    assert local["where"] == (
        f"a local branch of the repository {remote.work}, not pushed anywhere (proposals.push "
        "keeps this source's proposals there), so nobody sees it until it is merged there or "
        f"pushed for review (git -C {remote.work} push origin {local['branch']})"
    )
    assert pushed["where"].startswith(
        "pushed to the source's remote; no pull request is opened (forge.type: none), so open "
        "one from it into main for review"
    )
    where = schema["components"]["schemas"]["ProposalOut"]["properties"]["where"]
    assert "a local branch of the checkout, not pushed anywhere" in where["description"]
