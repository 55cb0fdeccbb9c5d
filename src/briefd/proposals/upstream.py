"""The branch a checkout's proposals start from, when no ``sync.branch`` names it (T1): its
upstream branch. A branch without one (``git checkout -b feature``, then commits) names no
branch of the remote: a proposal based on it carried its commits, unreviewed, into the
proposal's branch (and the ``git push`` a local one suggests), and a pushed one was refused as
a remote failure. That is a setting to make, said so here."""

from __future__ import annotations

import contextlib

from briefd.errors import BriefdError, ProposalError
from briefd.sources import git
from briefd.sources.knowledge import GitTarget

NO_UPSTREAM = (
    "the knowledge checkout {repo} is on the branch '{branch}', which has no upstream branch, "
    "and '{remote}' has no branch of that name, so briefd cannot tell which branch proposals "
    "start from (based on '{branch}', each would carry its commits); set sync.branch to the "
    "branch of '{remote}' proposals start from ({example}), or give '{branch}' an upstream "
    "(git branch --set-upstream-to {remote}/<branch>); nothing was proposed"
)


def refuse_no_upstream(target: GitTarget, sync_branch: str | None, timeout: float) -> None:
    """Refuse to base a proposal on the branch a checkout has checked out when it has no
    upstream, no ``sync.branch`` names the base, and the repository has remotes that lack a
    branch of its name. A repository without remotes has its own branches alone: the one
    checked out is the base. A detached HEAD is refused where it is pushed (:mod:`.branch`)."""
    if target.configured or sync_branch or target.base_branch == "HEAD":
        return
    branch = target.base_branch
    with contextlib.suppress(BriefdError):  # as the checkout's source reads its upstream
        _git(["rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}"], target, timeout)
        return
    remotes = _git(["remote"], target, timeout).split()
    if not remotes:
        return
    remote = target.remote if target.remote in remotes else remotes[0]
    if _has(target, f"refs/remotes/{remote}/{branch}", timeout):
        return  # pushed without --set-upstream: the remote's branch of that name
    example = start_example(target, remote, timeout)
    said = NO_UPSTREAM.format(repo=target.repo, branch=branch, remote=remote, example=example)
    raise ProposalError(said)


def start_example(target: GitTarget, remote: str, timeout: float) -> str:
    """A ``sync.branch`` to suggest: the remote's default branch, when the repository knows
    it (``refs/remotes/<remote>/HEAD``), else ``main``."""
    try:
        head = _git(["symbolic-ref", "--short", f"refs/remotes/{remote}/HEAD"], target, timeout)
    except BriefdError:  # the remote's default is not known here
        return "e.g. sync.branch: main"
    return f"sync.branch: {head.removeprefix(f'{remote}/')}, {remote}'s default branch"


def _has(target: GitTarget, ref: str, timeout: float) -> bool:
    try:
        _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], target, timeout)
    except BriefdError:
        return False
    return True


def _git(args: list[str], target: GitTarget, timeout: float) -> str:
    return git.run(args, target.repo, timeout, ProposalError)
