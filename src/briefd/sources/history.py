"""When each document last changed, from git history (K3: ``updated_commit``, ``updated_at``).

One ``git log`` walk, newest first, stopped as soon as every document has been seen. A move
that keeps the content (an exact rename) is no change: the walk follows the file to its old
path, so reorganising folders neither makes every document look new nor clears its drift
(T4). Files with uncommitted changes (a user's own checkout) are left out: their file time is
more honest than an older commit.

A change counts from when it arrived on the branch, as code commits do for drift
(:mod:`briefd.sources.code`): the walk follows the first-parent line and sees a merge as the
changes it brought (``-m --first-parent``), so an edit made on a feature branch is dated by
its merge, and one merged in the same pull request as the code it describes is no older than
that code.
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from briefd.errors import SourceError
from briefd.sources import git

STATUS = ("--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=all")


@dataclass(frozen=True, slots=True)
class Change:
    commit: str
    at: str  # ISO 8601, UTC, seconds


History = dict[str, Change]  # document path (relative to the source root) → last change


def document_history(root: Path, timeout: float = 120) -> History | None:
    """Last committed change of every file under ``root``; None when ``root`` is not inside
    a git checkout (or git is missing or fails: history is a nicety, never a reason to fail)."""
    try:
        located = git.toplevel(root, timeout)
        if located is None:
            return None
        top, prefix = located
        dirty = _dirty_paths(top, prefix, timeout)
        history = _walk_log(top, prefix, timeout)
    except (SourceError, OSError, subprocess.SubprocessError):
        return None
    return {path: change for path, change in history.items() if path not in dirty}


def shallow_cut(root: Path, timeout: float = 30) -> frozenset[str]:
    """The commits a shallow clone holding ``root`` has without their parents (empty: a
    complete history, or no git checkout). git shows each as adding every file of its tree,
    so a document last seen there is dated by the cut, its real last change unknown."""
    try:
        located = git.toplevel(root, timeout) if root.is_dir() else None
        if located is None:
            return frozenset()
        top = located[0]
        listed = top / git.run(["rev-parse", "--git-path", "shallow"], top, timeout)
        return frozenset(listed.read_text(encoding="ascii").split())
    except (SourceError, OSError, UnicodeDecodeError, subprocess.SubprocessError):
        return frozenset()  # no shallow file: a complete history


def _walk_log(top: Path, prefix: str, timeout: float) -> History:
    args = ["git", "log", "--first-parent", "-m", "--format=%x01%H %ct", "--name-status", "-z"]
    args += ["-M100%", "--"]
    args.append(prefix or ".")
    walk = _Walk(_tracked(top, prefix, timeout))
    deadline = time.monotonic() + timeout
    with subprocess.Popen(
        args, cwd=top, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=git.quiet_env()
    ) as process:
        assert process.stdout is not None
        buffer = b""
        while len(walk.found) < walk.total and time.monotonic() < deadline:
            block = os.read(process.stdout.fileno(), 65536)
            if not block:
                break
            buffer += block
            *tokens, buffer = buffer.split(b"\0")
            for token in tokens:
                walk.take(token.decode("utf-8", "replace"))
        process.kill()
    return {name[len(prefix) :]: change for name, change in walk.found.items()}


class _Walk:
    """The tokens of ``git log --name-status -z``, newest commit first: a commit header, then
    per file a status and its path (two paths for a rename: old, new). ``names`` maps a path
    as the history spells it to the tracked file it became."""

    def __init__(self, tracked: set[str]) -> None:
        self.total = len(tracked)
        self.names = {path: path for path in tracked}
        self.found: dict[str, Change] = {}
        self.current: Change | None = None
        self.status = ""
        self.paths: list[str] = []

    def take(self, token: str) -> None:
        if token.startswith("\x01"):
            commit, _, stamp = token[1:].partition(" ")
            at = datetime.fromtimestamp(int(stamp), UTC).isoformat(timespec="seconds")
            self.current, self.status = Change(commit, at), ""
        elif not self.status:
            self.status, self.paths = token.lstrip("\n"), []
        else:
            self.paths.append(token)
            if len(self.paths) == 2 or not self.status.startswith(("R", "C")):
                self._file()
                self.status = ""

    def _file(self) -> None:
        if self.status.startswith("R"):  # moved unchanged (-M100%): follow its old path
            old, new = self.paths
            tracked = self.names.pop(new, None)
            if tracked is not None and tracked not in self.found:
                self.names[old] = tracked
            return
        tracked = self.names.get(self.paths[-1])
        if self.current is not None and tracked is not None:
            self.found.setdefault(tracked, self.current)


def _tracked(top: Path, prefix: str, timeout: float) -> set[str]:
    out = git.run_bytes(["ls-files", "-z", "--", prefix or "."], top, timeout)
    return {p for p in out.decode("utf-8", "replace").split("\0") if p}


def _dirty_paths(top: Path, prefix: str, timeout: float) -> set[str]:
    out = git.run_bytes(
        [*STATUS, "--", prefix or "."],
        top,
        timeout,
    )
    paths: set[str] = set()
    entries = out.decode("utf-8", "replace").split("\0")
    skip = False
    for entry in entries:
        if skip or len(entry) < 4:
            skip = False
            continue
        status, path = entry[:2], entry[3:]
        skip = "R" in status or "C" in status  # the next entry is the original path
        if path.startswith(prefix):
            paths.add(path[len(prefix) :])
    return paths
