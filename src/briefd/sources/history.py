"""When each document last changed, from git history (K3: ``updated_commit``, ``updated_at``).

One ``git log`` walk, newest first, stopped as soon as every document has been seen. Files
with uncommitted changes (a user's own checkout) are left out: their file time is more honest
than an older commit.
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
    located = git.toplevel(root, timeout)
    if located is None:
        return None
    top, prefix = located
    try:
        dirty = _dirty_paths(top, prefix, timeout)
        history = _walk_log(top, prefix, timeout)
    except (SourceError, OSError, subprocess.SubprocessError):
        return None
    return {path: change for path, change in history.items() if path not in dirty}


def _walk_log(top: Path, prefix: str, timeout: float) -> History:
    args = ["git", "log", "--format=%x01%H %ct", "--name-only", "-z", "--no-renames", "--"]
    args.append(prefix or ".")
    tracked = _tracked(top, prefix, timeout)
    found: dict[str, Change] = {}
    deadline = time.monotonic() + timeout
    with subprocess.Popen(
        args, cwd=top, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=git.quiet_env()
    ) as process:
        assert process.stdout is not None
        current: Change | None = None
        buffer = b""
        while len(found) < len(tracked) and time.monotonic() < deadline:
            block = os.read(process.stdout.fileno(), 65536)
            if not block:
                break
            buffer += block
            *tokens, buffer = buffer.split(b"\0")
            for token in tokens:
                current = _take(token.decode("utf-8", "replace"), current, tracked, found)
        process.kill()
    return {name[len(prefix) :]: change for name, change in found.items()}


def _take(
    token: str, current: Change | None, tracked: set[str], found: dict[str, Change]
) -> Change | None:
    if token.startswith("\x01"):
        commit, _, stamp = token[1:].partition(" ")
        at = datetime.fromtimestamp(int(stamp), UTC).isoformat(timespec="seconds")
        return Change(commit, at)
    name = token.lstrip("\n")
    if current is not None and name in tracked:
        found.setdefault(name, current)
    return current


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
