"""The folder an index lives in, as briefd makes it (X0, O3).

The index holds the query log (what people asked), so the index file is its user's alone
(0600; SQLite gives its ``-wal`` and ``-shm`` files the same mode), and so is a folder briefd
makes for it (0700). A folder briefd makes also ignores itself in git (a ``.gitignore`` of
``*``, like pytest's cache): an index inside the knowledge repository (``.briefd/``) leaves
``git status`` clean and is never committed by a ``git add -A``; a ``briefd.yaml`` put there
is not ignored. A folder that exists already is the user's: it is left as it is. Files
written beside the index are written as ``<name>.<pid>.partial…`` and renamed into place;
what a process killed while writing one left is swept (:func:`sweep_abandoned`).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

IGNORE = (
    "# made by briefd: the index and what it keeps beside it, never to be committed\n"
    "*\n"
    "!briefd.yaml\n"
)


def make_index_folder(folder: Path) -> None:
    """Make ``folder`` (and its parents) when it does not exist: private, and git-ignored."""
    if folder.is_dir():
        return
    folder.parent.mkdir(parents=True, exist_ok=True)
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:  # another process made it first
        return
    with contextlib.suppress(OSError):  # the folder stays usable without it
        (folder / ".gitignore").write_text(IGNORE, encoding="utf-8")


def create_private(path: Path) -> None:
    """Create the empty file ``path`` readable by its user alone, unless it exists."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))


def sweep_abandoned(folder: Path, pattern: str) -> None:
    """Remove the partial files (``<name>.<pid>.partial…``) matching ``pattern`` that a
    process killed while writing one left behind: no live process has the pid in their name.
    Another process's file being written now stays."""
    for partial in folder.glob(pattern):
        writer = partial.name.rpartition(".partial")[0].rpartition(".")[2]
        if writer.isdigit() and int(writer) > 0 and not alive(int(writer)):
            partial.unlink(missing_ok=True)


def alive(pid: int) -> bool:
    """Whether a process ``pid`` runs (another user's counts: it may be writing)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True
