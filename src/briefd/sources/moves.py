"""Which documents an index run finds deleted moved where (K3): the path a deleted document
now has, so broken links name where it went and dismissed link suggestions follow it.

A move that keeps the content is found by its hash. One edited in the same commit (``git mv``
then an edit, as a rename often goes with a new title) has another hash; in a git checkout,
git's own rename detection (``git diff -M``, content at least half the same) names it, from
the commit the index last served to the work tree."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path

from briefd.errors import BriefdError
from briefd.sources import git, tracked

GIT_DIFF_TIMEOUT_S = 60


def renamed(
    known: Mapping[str, str], current: Mapping[str, str], deleted: Sequence[str]
) -> dict[str, str]:
    """Deleted paths whose file is now at a new path (its content unchanged, and no other
    deleted or new file with that content): old path → new path."""
    gone: dict[str, list[str]] = {}
    for path in deleted:
        gone.setdefault(known[path], []).append(path)
    new: dict[str, list[str]] = {}
    for path, digest in current.items():
        if path not in known and digest in gone:
            new.setdefault(digest, []).append(path)
    return {gone[d][0]: paths[0] for d, paths in new.items() if len(paths) == 1 == len(gone[d])}


def moved(
    root: Path,
    since: str | None,
    known: Mapping[str, str],
    current: Mapping[str, str],
    deleted: Sequence[str],
) -> dict[str, str]:
    """:func:`renamed`, and the deleted documents git sees renamed with an edit since the
    commit ``since`` (None: none known) to a document new to the index."""
    found = renamed(known, current, deleted)
    gone = set(deleted) - set(found)
    new = {p for p in current if p not in known} - set(found.values())
    if not (gone and new and since):
        return found
    for old, path in _git_renames(root, since, sorted(new)).items():
        if old in gone and path in new:
            found[old] = path
            new.discard(path)
    return found


def _git_renames(root: Path, since: str, new: Collection[str]) -> dict[str, str]:
    """The files under ``root`` (relative to it) git sees renamed from commit ``since`` to the
    work tree, ``new`` (files new to the index) counted in even when git does not track them
    yet: old → new. Nothing when git cannot tell (no checkout, a shallow clone without that
    commit)."""
    if not tracked.in_work_tree(root) or not all(c in "0123456789abcdef" for c in since):
        return {}
    args = ["diff", "-M", "--name-status", "-z", "--relative", "--no-ext-diff", since, "--", "."]
    try:
        with _added_in_a_copy(root, new) as env:
            listed = git.run_bytes(args, root, GIT_DIFF_TIMEOUT_S, env=env)
    except BriefdError:
        return {}
    fields = [os.fsdecode(f) for f in listed.split(b"\0")]
    found: dict[str, str] = {}
    at = 0
    while at < len(fields) and fields[at]:
        status = fields[at]
        if status.startswith("R") and at + 2 < len(fields):
            found[fields[at + 1]] = fields[at + 2]
            at += 3
        else:
            at += 3 if status.startswith("C") else 2
    return found


@contextlib.contextmanager
def _added_in_a_copy(root: Path, new: Collection[str]) -> Iterator[dict[str, str]]:
    """The environment that has git read a copy of the checkout's index in which the files
    ``new`` (relative to ``root``) are marked to be added (``git add -N -f``: untracked and
    ignored ones too), so a diff of the work tree sees them; the copy is deleted after."""
    index = git.run(["rev-parse", "--git-path", "index"], root, GIT_DIFF_TIMEOUT_S)
    with tempfile.TemporaryDirectory(prefix="briefd-moves-") as folder:
        env = {"GIT_INDEX_FILE": str(Path(folder) / "index"), "GIT_LITERAL_PATHSPECS": "1"}
        try:
            shutil.copyfile(root / index, env["GIT_INDEX_FILE"])
        except OSError:  # no index yet, or unreadable: the diff as git sees the checkout
            yield {}
            return
        paths = b"".join(os.fsencode(p) + b"\0" for p in new)
        add = ["add", "-N", "-f", "--pathspec-from-file=-", "--pathspec-file-nul"]
        git.run_bytes(add, root, GIT_DIFF_TIMEOUT_S, env=env, stdin=paths)
        yield env
