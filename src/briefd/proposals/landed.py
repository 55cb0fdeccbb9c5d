"""Whether a proposal's change landed on its base branch (T1): its commit merged there (a merge
commit, a fast-forward), or that commit rewritten and merged (amended by a reviewer, rebased,
cherry-picked, even with its subject reworded). Read with git in the repository proposals are
built in."""

from __future__ import annotations

import contextlib

from briefd.errors import ProposalError
from briefd.sources import git
from briefd.sources.knowledge import GitTarget


def merged_locally(
    target: GitTarget, commit: str, base: str, timeout: float, since: str = "", doc_path: str = ""
) -> bool:
    """Whether the repository's branch ``base`` (its own, else the remote's it has fetched;
    HEAD for a detached checkout's) holds ``commit``: a local or pushed proposal merged there.
    Given the commit the proposal was made on (``since``) and its document, also a rewrite of
    ``commit`` there (:func:`_rewritten`). False when git cannot tell (a commit or branch this
    repository lacks)."""
    refs = (
        ("HEAD",)
        if base == "HEAD"
        else (f"refs/heads/{base}", f"refs/remotes/{target.remote}/{base}")
    )
    for ref in refs:
        with contextlib.suppress(ProposalError):
            _run(["merge-base", "--is-ancestor", commit, ref], target, timeout)
            return True
    if not since or not doc_path:
        return False
    return _rewritten(target, commit, refs, since, target.prefix + doc_path, timeout)


_IDENTITY = "--format=%an%x00%ae%x00%at%x00%s"  # who wrote a commit, when, and its subject


def _rewritten(
    target: GitTarget, commit: str, refs: tuple[str, ...], since: str, path: str, timeout: float
) -> bool:
    """Whether one of ``refs`` holds, after ``since``, a commit changing ``path`` with
    ``commit``'s author, author date and subject: ``commit`` amended by its reviewer (an edit
    of the text), rebased onto a base that moved on, or cherry-picked, then merged. Its hash
    differs; git keeps those."""
    literal = {"GIT_LITERAL_PATHSPECS": "1"}
    try:
        identity = _run(["show", "-s", _IDENTITY, commit], target, timeout)
    except ProposalError:  # a commit this repository lacks
        return False
    changed = False  # the document changed there since: what else would be looked at
    for ref in refs:
        with contextlib.suppress(ProposalError):
            args = ["log", _IDENTITY, ref, f"^{since}", "--", path]
            commits = _run(args, target, timeout, env=literal).splitlines()
            if identity in commits:
                return True
            changed = changed or bool(commits)
    return changed and _same_change(target, commit, refs, since, path, timeout)


_PATCH = ["-p", "--format=commit %H", "--no-color", "--no-ext-diff", "--no-textconv"]


def _same_change(
    target: GitTarget, commit: str, refs: tuple[str, ...], since: str, path: str, timeout: float
) -> bool:
    """Whether one of ``refs`` holds, after ``since``, a commit making to ``path`` the very
    change ``commit`` makes (git's patch id: the diff, not its line numbers nor the message):
    ``commit`` rebased or cherry-picked with its subject reworded or its author reset, which
    the identity match misses, so its branch deleted after it, it was closed "deleted
    unmerged" once the document changed again."""
    try:
        mine = _patch_ids(target, ["show", *_PATCH, commit, "--", path], timeout)
    except ProposalError:
        return False
    for ref in refs if mine else ():
        with contextlib.suppress(ProposalError):
            args = ["log", *_PATCH, ref, f"^{since}", "--", path]
            if mine & _patch_ids(target, args, timeout):
                return True
    return False


def _patch_ids(target: GitTarget, args: list[str], timeout: float) -> set[str]:
    """The patch ids (``git patch-id --stable``) of the commits ``git args`` shows."""
    literal = {"GIT_LITERAL_PATHSPECS": "1"}
    diff = git.run_bytes(args, target.repo, timeout, ProposalError, literal)
    if not diff.strip():
        return set()
    ids = git.run(["patch-id", "--stable"], target.repo, timeout, ProposalError, stdin=diff)
    return {line.split()[0] for line in ids.splitlines() if line.strip()}


def _run(
    args: list[str], target: GitTarget, timeout: float, env: dict[str, str] | None = None
) -> str:
    return git.run(args, target.repo, timeout, ProposalError, env)
