"""Where a pushed proposal's branch is looked for (T1): on the remote it was pushed to, which
its record names (``Proposal.pushed_to``, the remote's URL). A sync asked the remote proposals
go to now and any other remote of the repository, so a proposal whose remote was removed
(``git remote remove``) was closed "deleted unmerged", its branch waiting there, and one whose
branch was deleted stayed "pushed" for good while any other remote did not answer.

Now the remote it was pushed to alone tells: its branch listed there, it waits; not listed,
it is gone (merged or deleted, as :mod:`.follow` tells); the remote removed, or not
answering, it is kept as it is, and its record says so (``forge_error``, starting with
:data:`~briefd.state.model.UNFOLLOWED_AS`) until a sync finds the branch again."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from briefd.errors import BriefdError, ProposalError, ProposalRemoteError
from briefd.sources import git
from briefd.sources.knowledge import GitTarget
from briefd.state.model import UNFOLLOWED_AS, Proposal

log = logging.getLogger("briefd.proposals")

REMOTE_GONE = UNFOLLOWED_AS + (
    " its branch {branch} was pushed to {url}, which is no longer a remote of {repo} "
    "({why}), so whether it was merged or deleted there cannot be told: it is kept as it "
    "is; {fix}"
)
GONE_FROM_CHECKOUT = "removed, or its URL changed"
ADD_IT_BACK = "add the remote back (git -C {repo} remote add NAME {url}) to have syncs follow it"
GONE_FROM_CLONE = "source names another repository now"
LOOK_THERE = "look for it there, and delete the branch or merge it by hand"
UNANSWERED = UNFOLLOWED_AS + (
    " its branch {branch} was pushed to the remote '{name}' ({url}), which did not answer "
    "({reason}), so whether the branch is still there cannot be told: it is kept as it is, "
    "and the next sync asks again"
)


@dataclass(frozen=True, slots=True)
class Found:
    """Of the pushed proposals looked for: those whose branch is gone from the remote they
    were pushed to (with where, as :data:`.follow.GONE` says it), and the notes to record on
    those that could not be looked for (by id)."""

    gone: list[tuple[Proposal, str]]
    notes: dict[str, str]
    there: list[Proposal]


def look_for(
    target: GitTarget,
    pushed: list[Proposal],
    listed: Callable[[str], set[str]],
    timeout: float,
) -> Found:
    """Look for the branches of ``pushed`` (each with ``pushed_to``) on the remote each was
    pushed to; ``listed(name)``: the proposal branches that remote has (raises
    :class:`BriefdError` when it does not answer), asked once per remote."""
    remotes = _remotes(target, timeout)
    by_url: dict[str, list[Proposal]] = {}
    for proposal in pushed:
        assert proposal.pushed_to is not None
        by_url.setdefault(proposal.pushed_to, []).append(proposal)
    found = Found([], {}, [])
    for url, proposals in by_url.items():
        name = remotes.get(url)
        if name is None:
            for p in proposals:
                found.notes[p.id] = _gone_note(target, p, url)
            continue
        try:
            branches = listed(name)
        except BriefdError as exc:
            log.warning("proposal branches on the remote '%s' not listed: %s", name, exc)
            reason = str(exc).partition("; ")[0]  # git's words, not a hint about `source`
            for p in proposals:
                said = UNANSWERED.format(branch=p.branch, name=name, url=url, reason=reason)
                found.notes[p.id] = said
            continue
        for p in proposals:
            if p.branch in branches:
                found.there.append(p)
            else:
                found.gone.append((p, f"on the remote '{name}'"))
    return found


def remote_lister(
    target: GitTarget, patterns: list[str], timeout: float
) -> Callable[[str], set[str]]:
    """``listed`` for :func:`look_for`: the branches matching ``patterns`` (``refs/heads/…``)
    on the remote of that name (one ``git ls-remote`` each)."""

    def listed(name: str) -> set[str]:
        args = ["remote", "get-url", "--push", name]
        url = git.run(args, target.repo, timeout, ProposalError)
        out = git.run(
            ["ls-remote", url, *patterns], target.repo, timeout, ProposalRemoteError, target.env
        )
        return {line.partition("\t")[2].removeprefix("refs/heads/") for line in out.splitlines()}

    return listed


def pushed_to(url: str | None) -> str | None:
    """What a proposal's record keeps of the URL of the remote its branch is pushed to."""
    return git.bare_url(url) if url else None


def _remotes(target: GitTarget, timeout: float) -> dict[str, str]:
    """The remotes of the repository by URL (fetch and push URLs, without ``user:token@``), as
    ``git remote get-url`` gives them (``insteadOf`` applied, as when the proposal was made)."""
    remotes: dict[str, str] = {}
    for name in git.run(["remote"], target.repo, timeout, ProposalError).split():
        for push in ([], ["--push"]):
            try:
                url = git.run(
                    ["remote", "get-url", *push, name], target.repo, timeout, ProposalError
                )
            except ProposalError:
                continue
            remotes.setdefault(git.bare_url(url), name)
    return remotes


def _gone_note(target: GitTarget, proposal: Proposal, url: str) -> str:
    repo = target.repo
    why, fix = (
        (GONE_FROM_CLONE, LOOK_THERE)
        if target.configured
        else (GONE_FROM_CHECKOUT, ADD_IT_BACK.format(repo=repo, url=url))
    )
    return REMOTE_GONE.format(branch=proposal.branch, url=url, repo=repo, why=why, fix=fix)
