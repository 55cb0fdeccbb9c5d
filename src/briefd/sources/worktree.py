"""Code paths as ``refs`` name them (K2, B1, R5): from the root of the git work tree that holds
them. Agents and editors name files by absolute path (``/home/dev/shop/src/payments/refund.py``);
read as a path from the root it matched no anchored ``refs`` glob (``src/payments/**``), so the
governing documents silently did not lead."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path, PurePosixPath


def from_work_trees(paths: Sequence[str]) -> tuple[str, ...]:
    """``paths`` with each absolute one made relative to the git work tree holding it on this
    machine (found by its ``.git``; a folder keeps its last slash). A path in no work tree this
    process can see (another machine's, a Windows path on a POSIX server) stays as written."""
    if not any(PurePosixPath(p.strip()).is_absolute() for p in paths):
        return tuple(paths)
    return tuple(_from_work_tree(p) for p in paths)


def _from_work_tree(path: str) -> str:
    raw = path.strip()
    if not PurePosixPath(raw).is_absolute() or "\0" in raw:  # a NUL: no file's (refs says so)
        return path
    normal = Path(os.path.normpath(raw))
    try:
        for candidate in dict.fromkeys((normal, normal.resolve())):
            top = next((f for f in candidate.parents if (f / ".git").exists()), None)
            if top is not None:
                inside = candidate.relative_to(top).as_posix()
                return inside + "/" if raw.endswith("/") else inside
    except OSError:  # a name too long for this file system, a folder it may not read
        pass
    return path


def folder_in_work_tree(folder: Path) -> str:
    """``folder``'s path in the git work tree holding it (found by its ``.git``), with a
    trailing slash: ``docs/`` for knowledge kept in a code repository; '' at the work tree's
    top or outside any."""
    resolved = folder.resolve()
    top = next((f for f in (resolved, *resolved.parents) if (f / ".git").exists()), None)
    if top is None or top == resolved:
        return ""
    return resolved.relative_to(top).as_posix() + "/"
