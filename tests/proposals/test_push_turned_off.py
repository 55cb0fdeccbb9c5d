"""T1: proposals pushed before ``proposals.push`` was turned off stay followed on the remote
they went to: a sync after their branch was deleted there unmerged closes them, where it left
them "pushed" for ever, and one still there waits as it did."""

from __future__ import annotations

from pathlib import Path

from briefd.api import Briefd
from briefd.proposals import ProposalRequest
from tests.sync.conftest import git_settings
from tests.sync.gitrepo import RETRY, Remote, git

NEW_RETRY = RETRY.replace("three times", "four times").lstrip("\n")


def test_a_branch_deleted_on_the_remote_closes_its_proposal_after_push_is_turned_off(
    tmp_path: Path, remote: Remote
) -> None:
    pushing = git_settings(tmp_path, str(remote.work), **{"proposals.push": True})
    with Briefd(pushing, embedder=None) as api:
        api.index()
        deleted = api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
        kept = api.propose_update(
            ProposalRequest("domain/retry.md", "five", NEW_RETRY.replace("four", "five"))
        )
    assert (deleted.status, kept.status) == ("pushed", "pushed")
    git(remote.bare, "branch", "-D", deleted.branch)  # a reviewer deleted it unmerged

    with Briefd(git_settings(tmp_path, str(remote.work)), embedder=None) as api:  # push: off
        api.sync()
        statuses = {p.id: (p.status, p.forge_error) for p in api.proposals()}

    assert statuses[kept.id] == ("pushed", None)
    assert statuses[deleted.id][0] == "closed"
    assert f"its branch {deleted.branch} is no longer on the remote 'origin', " in (
        statuses[deleted.id][1] or ""
    )


def test_a_local_branch_deleted_closes_its_proposal_after_push_is_turned_on(
    tmp_path: Path, remote: Remote
) -> None:
    """T1: a local proposal (made while proposals.push was off) whose branch was deleted stayed
    "local" for good once proposals.push was turned on: a sync then listed the remote's
    branches alone. It is closed by either sync; one whose branch is still there waits."""
    with Briefd(git_settings(tmp_path, str(remote.work)), embedder=None) as api:  # push: off
        api.index()
        deleted = api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
        kept = api.propose_update(
            ProposalRequest("domain/retry.md", "five", NEW_RETRY.replace("four", "five"))
        )
    assert (deleted.status, kept.status) == ("local", "local")
    git(remote.work, "branch", "-D", deleted.branch)  # the user's no

    pushing = git_settings(tmp_path, str(remote.work), **{"proposals.push": True})
    with Briefd(pushing, embedder=None) as api:
        report = api.sync()
        again = api.sync()
        stored = {p.id: (p.status, p.forge_error) for p in api.proposals()}

    assert report.proposals_changed == (f"{deleted.id}: local → closed",)
    assert again.proposals_changed == ()
    assert stored[kept.id] == ("local", None)
    assert stored[deleted.id] == (
        "closed",
        f"its branch {deleted.branch} is no longer in {remote.work}, and main does not hold "
        "its change (deleted unmerged), so a sync closed it; propose the change again if it "
        "is still wanted",
    )
