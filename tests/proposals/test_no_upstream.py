"""T1: a serving checkout on a branch without an upstream (``git checkout -b feature``, a commit)
names no branch of the remote proposals start from. Proposals were based on that branch
silently, carrying its commits (the suggested ``git push`` would have published them); pushed,
the answer was a 502 blaming the remote. Refused now as a setting to make (``sync.branch``),
which then gives the base."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest

from briefd.api import Briefd
from briefd.errors import ProposalError
from briefd.proposals import ProposalRequest
from briefd.service import create_app
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving
from tests.sync.conftest import git_settings
from tests.sync.gitrepo import RETRY, Remote, git, stage

NEW_RETRY = RETRY.replace("three times", "four times").lstrip("\n")
CHANGE = {"doc_path": "domain/retry.md", "change_description": "four", "new_content": NEW_RETRY}


def _on_feature(remote: Remote) -> str:
    """The teammate's checkout on a new branch with a commit of its own; that commit."""
    git(remote.work, "checkout", "--quiet", "-b", "feature")
    stage(remote.work, {"domain/draft.md": "# Draft\n\nNot reviewed.\n"})
    git(remote.work, "commit", "--quiet", "-m", "Unreviewed draft")
    return git(remote.work, "rev-parse", "HEAD")


def refusal(work: Path, remote: str = "origin") -> str:
    return (
        f"the knowledge checkout {work} is on the branch 'feature', which has no upstream "
        f"branch, and '{remote}' has no branch of that name, so briefd cannot tell which "
        "branch proposals start from (based on 'feature', each would carry its commits); set "
        f"sync.branch to the branch of '{remote}' proposals start from (e.g. sync.branch: "
        "main), or give 'feature' an upstream (git branch "
        f"--set-upstream-to {remote}/<branch>); nothing was proposed"
    )


def test_a_local_proposal_on_a_branch_without_upstream_is_refused(
    tmp_path: Path, remote: Remote
) -> None:
    _on_feature(remote)
    with Briefd(git_settings(tmp_path, str(remote.work)), embedder=None) as api:
        api.index()
        with pytest.raises(ProposalError) as refused:
            api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
        assert api.proposals() == []

    assert str(refused.value) == refusal(remote.work)
    assert git(remote.work, "branch", "--list", "briefd/*") == ""


def test_a_pushed_proposal_on_a_branch_without_upstream_is_a_setting_not_a_remote_failure(
    tmp_path: Path, remote: Remote
) -> None:
    draft = _on_feature(remote)
    pushing = git_settings(tmp_path, str(remote.work), **{"proposals.push": True})
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with Briefd(pushing, embedder=None) as api:
        api.index()
        with serving(create_app(api, service_config())) as base:
            answer = httpx2.post(base + "/api/proposals", json=CHANGE, headers=auth)

    assert answer.status_code == 400, answer.text
    assert answer.json() == {"error": "proposal", "detail": refusal(remote.work)}
    assert git(remote.bare, "branch", "--list") == "* main"

    based = git_settings(
        tmp_path, str(remote.work), **{"proposals.push": True, "sync.branch": "main"}
    )
    with Briefd(based, embedder=None) as api:
        api.index()
        with serving(create_app(api, service_config())) as base:
            made = httpx2.post(base + "/api/proposals", json=CHANGE, headers=auth)

    assert made.status_code == 201, made.text
    assert made.json()["base_branch"] == "main"
    branch = made.json()["branch"]
    assert git(remote.bare, "rev-list", "--count", f"main..{branch}") == "1"
    assert git(remote.bare, "rev-parse", f"{branch}^") == remote.head()
    assert draft not in git(remote.bare, "rev-list", branch)
