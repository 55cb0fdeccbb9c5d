"""Document paths from the network (I3): a path that could leave the knowledge repository is
answered exactly like a missing document (404), never read."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from briefd.errors import NotFoundError
from briefd.text import shown

MAX_PATH = 1000


def _refuse(path: str) -> NotFoundError:
    return NotFoundError(
        f"no document '{shown(path)}' in the knowledge repository; paths are relative to the "
        "repository root, e.g. domain/glossary.md (GET /api/docs and `briefd docs` list them)"
    )


def checked_doc_path(path: str) -> str:
    """The path, normalised, if it is a plain relative path inside the repository; Windows'
    backslashes are read as slashes (``..\\..\\etc`` is ``../../etc``: refused)."""
    raw = path.strip().replace("\\", "/")
    if (
        not raw
        or len(raw) > MAX_PATH
        or "\x00" in raw
        or raw.startswith(("/", "~"))
        or (len(raw) > 1 and raw[1] == ":")
    ):
        raise _refuse(path)
    parts = PurePosixPath(raw).parts
    if any(p == ".." for p in parts):
        raise _refuse(path)
    normal = posixpath.normpath(raw)
    if normal in (".", "") or normal.startswith("../"):
        raise _refuse(path)
    return normal


def ensure_inside(root: Path | None, rel: str) -> None:
    """Refuse a document whose file resolves outside ``root`` (a symbolic link out)."""
    if root is None or not root.is_dir():
        return
    base = root.resolve()
    target = (root / rel).resolve()
    if target != base and base not in target.parents:
        raise _refuse(rel)


def within_source(path: str, roots: Iterable[Path | None]) -> str:
    """An absolute path to a file inside the knowledge folder on this machine (an agent that
    found it in its own checkout, as a stdio client does) as the relative path documents are
    known by; any other path as given, for :func:`checked_doc_path` to judge."""
    raw = path.strip()
    if not raw.startswith("/") or "\x00" in raw or len(raw) > MAX_PATH:
        return path
    given = Path(os.path.normpath(raw))
    for root in roots:
        if root is None:
            continue
        for base in (Path(os.path.normpath(root.absolute())), root.resolve()):
            if given != base and base in given.parents:
                return given.relative_to(base).as_posix()
    return path
