"""What a sync learns from the proposal branches themselves (T1). One listing of the branches
named like proposals (``proposals.branch_prefix`` + 8 hex digits) — on the remote for pushed
proposals (``git ls-remote``, one request), in the repository for local ones — shows a
proposal without a pull request whose branch is gone: deleted unmerged (a reviewer's
"no" where no forge is followed, ``forge.type: none``), it is closed, saying so; merged when
the base branch holds its text (a squash or rebase merge, its branch deleted).
"""

from __future__ import annotations

import contextlib
import logging
import re
from datetime import UTC, datetime

from briefd.errors import BriefdError, ProposalError, ProposalRemoteError
from briefd.proposals.branch import merged_locally, same_text
from briefd.proposals.policy import Delivery
from briefd.settings import Settings
from briefd.sources import git
from briefd.sources.knowledge import GitTarget
from briefd.state import SharedState
from briefd.state.model import Proposal

log = logging.getLogger("briefd.proposals")

GONE = (
    "its branch {branch} is no longer {where}, and {base} does not hold its change (deleted "
    "unmerged), so a sync closed it; propose the change again if it is still wanted"
)


def follow_branches(
    store: SharedState, settings: Settings, going: Delivery, close_gone: bool = True
) -> tuple[str, ...]:
    """Close the proposals whose branch is gone (unless not ``close_gone``: the forge, which
    may know a pull request that merged one, could not be read); the changes as a sync
    reports them ("id: pushed → closed"). Git trouble is logged, never raised: the next sync
    lists again."""
    timeout = settings.proposals.git_timeout
    if not close_gone:
        return ()
    try:
        listed = _listed(going, settings.proposals.branch_prefix, timeout)
        return _gone(store, going, store.proposals(), listed, timeout)
    except BriefdError as exc:
        log.warning("proposal branches not followed: %s", exc)
        return ()


def _listed(going: Delivery, prefix: str, timeout: float) -> dict[str, str]:
    """The proposal branches where proposals go (the remote, or the repository), by name:
    their commits."""
    target, pattern = going.target, f"refs/heads/{prefix}*"
    if going.pushed:
        args = ["ls-remote", _url(target, timeout), pattern]
        out = git.run(args, target.repo, timeout, ProposalRemoteError, target.env)
    else:
        args = ["for-each-ref", "--format=%(objectname)\t%(refname)", pattern]
        out = git.run(args, target.repo, timeout, ProposalError)
    named = re.compile(re.escape(prefix) + "[0-9a-f]{8}")
    listed: dict[str, str] = {}
    for line in out.splitlines():
        commit, _, ref = line.partition("\t")
        branch = ref.removeprefix("refs/heads/")
        if named.fullmatch(branch):
            listed[branch] = commit
    return listed


def _gone(
    store: SharedState,
    going: Delivery,
    known: list[Proposal],
    listed: dict[str, str],
    timeout: float,
) -> tuple[str, ...]:
    """Proposals of this delivery (pushed ones when proposals are pushed, else local ones)
    without a pull request whose branch is not listed: merged when the base branch holds
    their text, else closed. One whose commit this repository lacks (another replica's) is
    left as it is: whether its base holds it cannot be told."""
    target, status = going.target, "pushed" if going.pushed else "local"
    where = f"on the remote '{target.remote}'" if going.pushed else f"in {target.repo}"
    changed: list[str] = []
    for p in known:
        if p.status != status or p.pr_number or not p.commit_hash or p.branch in listed:
            continue
        base = _base_ref(target, p.base_branch or target.base_branch, timeout)
        if base is None or not _has(target, p.commit_hash, timeout):
            continue
        if merged_locally(target, p.commit_hash, p.base_branch or target.base_branch, timeout):
            continue  # merged: the sync's own check says so
        if same_text(target, (p.commit_hash, base), p.doc_path, timeout):
            now, said = "merged", None
        else:
            name = p.base_branch or target.base_branch
            now, said = "closed", GONE.format(branch=p.branch, where=where, base=name)
        store.record_check(p.id, now, said, _now())
        changed.append(f"{p.id}: {status} → {now}")
    return tuple(changed)


def _url(target: GitTarget, timeout: float) -> str:
    """Where proposals are pushed: the remote's push URL."""
    args = ["remote", "get-url", "--push", target.remote]
    return git.run(args, target.repo, timeout, ProposalError)


def _base_ref(target: GitTarget, base: str, timeout: float) -> str | None:
    """The repository's branch ``base`` (its own, else the remote's it fetched), or None."""
    for ref in (f"refs/heads/{base}", f"refs/remotes/{target.remote}/{base}", "HEAD"):
        if ref == "HEAD" and base != "HEAD":
            continue
        with contextlib.suppress(ProposalError):
            args = ["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"]
            return git.run(args, target.repo, timeout, ProposalError)
    return None


def _has(target: GitTarget, commit: str, timeout: float) -> bool:
    try:
        git.run(["cat-file", "-e", f"{commit}^{{commit}}"], target.repo, timeout, ProposalError)
    except ProposalError:
        return False
    return True


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")
