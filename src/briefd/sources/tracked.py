"""What git says of the files of a knowledge folder inside a work tree (K3): the files of the
commit checked out, those a sparse checkout leaves out, and those a merge left with
unresolved conflicts. Each is one git call,
made only inside a work tree; when git cannot tell, nothing is listed (the scan goes on)."""

from __future__ import annotations

import os
from pathlib import Path

from briefd.errors import BriefdError
from briefd.sources import git

GIT_LIST_TIMEOUT_S = 60


def in_work_tree(root: Path) -> bool:
    """``root`` or a folder above it holds a ``.git`` (a plain folder costs no git call)."""
    try:
        here = root.resolve()
    except (OSError, RuntimeError):
        return False
    return any(os.path.lexists(d / ".git") for d in (here, *here.parents))


def committed(root: Path) -> list[str]:
    """The files under ``root`` (relative to it) in the commit its work tree has checked out;
    none outside a work tree, before a first commit, or when git cannot tell."""
    return _listed(root, ["ls-tree", "-r", "-z", "--name-only", "HEAD"])


def not_checked_out(root: Path) -> frozenset[str]:
    """The files under ``root`` (relative to it) git leaves out of the work tree: outside a
    sparse checkout's folders (their skip-worktree bit set)."""
    listed = _listed(root, ["ls-files", "-z", "-t"])
    return frozenset(entry[2:] for entry in listed if entry.startswith("S "))


def unmerged(root: Path) -> frozenset[str]:
    """The files under ``root`` (relative to it) with unresolved merge conflicts (a ``git
    pull``, ``merge``, ``rebase`` or ``stash pop`` stopped on them): their text holds git's
    ``<<<<<<<`` / ``=======`` / ``>>>>>>>`` lines."""
    return frozenset(
        _listed(root, ["diff", "--name-only", "-z", "--diff-filter=U", "--relative", "--", "."])
    )


def _listed(root: Path, args: list[str]) -> list[str]:
    if not in_work_tree(root):
        return []
    try:
        listed = git.run_bytes(args, root, GIT_LIST_TIMEOUT_S)
    except BriefdError:
        return []
    return [os.fsdecode(p) for p in listed.split(b"\0") if p]
