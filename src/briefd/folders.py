"""The folder an index lives in, as briefd makes it (X0, O3).

The index holds the query log (what people asked), so the index file is its user's alone
(0600; SQLite gives its ``-wal`` and ``-shm`` files the same mode), and so is a folder briefd
makes for it (0700). A folder briefd makes also ignores itself in git (a ``.gitignore`` of
``*``, like pytest's cache): an index inside the knowledge repository (``.briefd/``) leaves
``git status`` clean and is never committed by a ``git add -A``; a ``briefd.yaml`` put there
is not ignored. A folder that exists already is the user's: it is left as it is, but for a
project's ``.briefd`` folder without an ignore file, which gets briefd's as its index is first
made there (:func:`ignore_in_git`). Files
written beside the index are written as ``<name>.<pid>.partial…`` and renamed into place;
what a process killed while writing one left is swept (:func:`sweep_abandoned`).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from briefd.project import LOCAL_DIR

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


def ignore_in_git(folder: Path) -> None:
    """Give a project's own ``.briefd`` folder that exists without an ignore file briefd's
    (called as its index is first made there): a repository that commits
    ``.briefd/briefd.yaml`` brings the folder to every clone with that file alone (briefd's
    ``.gitignore`` ignores itself), and a user makes the folder by hand to write one; without
    it the index, with its query log, shows in ``git status`` and goes in with ``git add -A``.
    An ignore file of the team's, or any other folder, is left as it is."""
    if folder.name != LOCAL_DIR or os.path.lexists(folder / ".gitignore"):
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


def write_atomically(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` whole or not at all: to a partial file beside it, renamed
    into place (a reader never sees half of it; what a killed writer left is swept first)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    sweep_abandoned(target.parent, "*.partial*.part")
    handle, temporary = tempfile.mkstemp(
        dir=target.parent, prefix=f"{target.name}.{os.getpid()}.partial", suffix=".part"
    )
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        Path(temporary).replace(target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
