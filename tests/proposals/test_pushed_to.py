"""T1 with real git: a pushed proposal is followed on the remote it was pushed to, which its
record names. A sync asked the remote proposals go to now and the checkout's other remotes:
a proposal whose remote was removed was closed "deleted unmerged" (its branch waiting there),
and one whose branch was deleted stayed "pushed" for good while another remote was down."""

from __future__ import annotations

from pathlib import Path

from briefd.api import Briefd
from briefd.proposals import ProposalRequest
from briefd.settings import Settings, with_overrides
from tests.sync.conftest import git_settings
from tests.sync.gitrepo import GLOSSARY, RETRY, Remote, git

NEW_RETRY = RETRY.replace("three times", "four times").lstrip("\n")
NEW_GLOSSARY = GLOSSARY.replace("pays the merchant", "pays the merchant, daily").lstrip("\n")


def _fork(tmp_path: Path, remote: Remote, name: str = "fork") -> Path:
    fork = tmp_path / f"{name}.git"
    git(tmp_path, "clone", "--quiet", "--bare", str(remote.bare), str(fork))
    git(remote.work, "remote", "add", name, str(fork))
    return fork


def _stored(settings: Settings) -> dict[str, tuple[str, str | None]]:
    with Briefd(settings, embedder=None) as api:
        return {p.id: (p.status, p.forge_error) for p in api.proposals()}


def _unprefixed(note: str | None) -> str:
    return (note or "").removeprefix("not followed at the last sync: ")


def test_proposals_whose_remote_was_removed_are_kept_saying_so(
    tmp_path: Path, remote: Remote
) -> None:
    """``git remote remove fork`` (proposals.push set to origin since) closed the proposals
    pushed to the fork as deleted unmerged. They stay pushed, their record and the sync saying
    that remote is gone, once; with the remote back (under another name) they are followed:
    the note is dropped, and a branch deleted there closes its proposal."""
    fork = _fork(tmp_path, remote)
    settings = git_settings(tmp_path, str(remote.work), **{"proposals.push": "fork"})
    with Briefd(settings, embedder=None) as api:
        api.index()
        kept = api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
        dropped = api.propose_update(ProposalRequest("domain/glossary.md", "daily", NEW_GLOSSARY))
    assert kept.pushed_to == dropped.pushed_to == str(fork)
    git(remote.work, "remote", "remove", "fork")
    moved = with_overrides(settings, {"proposals.push": "origin"})

    with Briefd(moved, embedder=None) as api:
        first, again = api.sync(), api.sync()
    stored = _stored(moved)

    note = (
        f"not followed at the last sync: its branch {kept.branch} was pushed to {fork}, which "
        f"is no longer a remote of {remote.work} (removed, or its URL changed), so whether it "
        "was merged or deleted there cannot be told: it is kept as it is; add the remote back "
        f"(git -C {remote.work} remote add NAME {fork}) to have syncs follow it"
    )
    assert stored[kept.id] == ("pushed", note)
    assert stored[dropped.id][0] == "pushed"
    assert sorted(first.proposals_changed) == sorted(
        f"{p.id}: pushed, kept: " + _unprefixed(stored[p.id][1]) for p in (kept, dropped)
    )
    assert again.proposals_changed == ()

    git(remote.work, "remote", "add", "upstream", str(fork))
    git(fork, "branch", "-D", dropped.branch)
    with Briefd(moved, embedder=None) as api:
        back = api.sync()
    stored = _stored(moved)

    assert back.proposals_changed == (f"{dropped.id}: pushed → closed",)
    assert stored[kept.id] == ("pushed", None)
    assert stored[dropped.id][0] == "closed"
    assert f"its branch {dropped.branch} is no longer on the remote 'upstream'," in (
        stored[dropped.id][1] or ""
    )


def test_a_branch_deleted_on_its_remote_closes_its_proposal_while_another_remote_is_down(
    tmp_path: Path, remote: Remote
) -> None:
    """A checkout with a second remote that does not answer (a mirror taken down): a proposal
    whose branch a reviewer deleted on origin, where it was pushed, stayed "pushed" for good,
    the dead mirror "maybe" having it. Its own remote tells: closed."""
    git(remote.work, "remote", "add", "mirror", str(tmp_path / "gone" / "mirror.git"))
    settings = git_settings(tmp_path, str(remote.work), **{"proposals.push": True})
    with Briefd(settings, embedder=None) as api:
        api.index()
        dropped = api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
        kept = api.propose_update(ProposalRequest("domain/glossary.md", "daily", NEW_GLOSSARY))
        git(remote.bare, "branch", "-D", dropped.branch)
        report = api.sync()
    stored = _stored(settings)

    assert report.proposals_changed == (f"{dropped.id}: pushed → closed",)
    assert stored[dropped.id][0] == "closed"
    assert stored[kept.id] == ("pushed", None)


def test_a_proposal_whose_remote_does_not_answer_is_kept_saying_so(
    tmp_path: Path, remote: Remote
) -> None:
    """The remote a proposal was pushed to not answering keeps it as it is, and its record
    says which remote did not answer; once it answers again the note is dropped."""
    fork = _fork(tmp_path, remote)
    settings = git_settings(tmp_path, str(remote.work), **{"proposals.push": "fork"})
    with Briefd(settings, embedder=None) as api:
        api.index()
        made = api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    moved = with_overrides(settings, {"proposals.push": "origin"})
    fork.rename(tmp_path / "fork.off")  # the fork's host is down

    with Briefd(moved, embedder=None) as api:
        down = api.sync()
    (status, said), *_ = _stored(moved).values()
    (tmp_path / "fork.off").rename(fork)
    with Briefd(moved, embedder=None) as api:
        up = api.sync()

    assert status == "pushed"
    assert (said or "").startswith(
        f"not followed at the last sync: its branch {made.branch} was pushed to the remote "
        f"'fork' ({fork}), which did not answer ("
    )
    assert (said or "").endswith(
        "so whether the branch is still there cannot be told: it is kept as it is, and the "
        "next sync asks again"
    )
    assert down.proposals_changed == (f"{made.id}: pushed, kept: " + _unprefixed(said),)
    assert up.proposals_changed == ()
    assert _stored(moved)[made.id] == ("pushed", None)


def test_a_remote_whose_url_git_rewrites_is_the_one_proposals_were_pushed_to(
    tmp_path: Path, remote: Remote
) -> None:
    """A remote named by a short URL the user's git config rewrites (``insteadOf``, as teams
    set for their host) is the remote its proposals were pushed to, not one removed."""
    git(remote.work, "config", f"url.{remote.bare.parent}/.insteadOf", "team:")
    git(remote.work, "remote", "set-url", "origin", "team:remote.git")
    settings = git_settings(tmp_path, str(remote.work), **{"proposals.push": True})
    with Briefd(settings, embedder=None) as api:
        api.index()
        made = api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
        waiting = api.sync()
        git(remote.bare, "branch", "-D", made.branch)
        deleted = api.sync()

    assert made.pushed_to == str(remote.bare)
    assert waiting.proposals_changed == ()
    assert deleted.proposals_changed == (f"{made.id}: pushed → closed",)


def test_a_sync_says_when_the_remote_proposals_push_names_is_gone(
    tmp_path: Path, remote: Remote
) -> None:
    """proposals.push naming a remote the checkout no longer has (``git remote remove``)
    left every sync silent: the proposals pushed there were neither followed nor said to be
    unfollowed. They are kept, and the sync's report says why (its forge_error warning)."""
    settings = git_settings(tmp_path, str(remote.work), **{"proposals.push": True})
    with Briefd(settings, embedder=None) as api:
        api.index()
        made = api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
        git(remote.work, "remote", "remove", "origin")
        report = api.sync()

    assert report.proposals_changed == ()
    assert report.forge_error == (
        "1 pushed proposal(s) not followed: proposals.push sends proposals to the remote "
        f"'origin', which the knowledge checkout {remote.work} does not have; add it with `git "
        "remote add origin URL`, or name another remote in proposals.push; they are kept as "
        "they are until a sync can reach the remote they were pushed to"
    )
    assert _stored(settings)[made.id] == ("pushed", None)
