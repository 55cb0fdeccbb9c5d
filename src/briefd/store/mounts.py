"""Whether the index's folder is on a file system mounted read-only (a read-only bind mount,
a ``:ro`` container volume, a read-only snapshot): a refusal that ``chmod`` cannot lift; which
of its files and folder the user cannot write otherwise, and whether a reader opens it
read-only and immutable."""

from __future__ import annotations

import os
from pathlib import Path


def read_only_mount(path: Path) -> Path | None:
    """The nearest existing folder at or above ``path`` (its folder, for a file), if the file
    system it is on is mounted read-only; None when it is writable or cannot be told."""
    folder = path if path.is_dir() else path.parent
    for here in (folder.absolute(), *folder.absolute().parents):
        try:
            flags = os.statvfs(here).f_flag
        except FileNotFoundError:
            continue
        except OSError:
            return None
        return here if flags & os.ST_RDONLY else None
    return None


def mounted_read_only(path: Path) -> str | None:
    """What to say of the index ``path`` on a read-only file system, or None if it is not."""
    where = read_only_mount(path)
    if where is None:
        return None
    return (
        f"{where} is on a file system mounted read-only, so no permission change (chmod, "
        "chown) lets briefd write there; remount it read-write (or drop ':ro' from the volume), "
        "or pass --db (or 'db:' in briefd.yaml) a path on a writable file system"
    )


def unwritable_folder(path: Path) -> bool:
    """Whether a reader opens the index ``path`` read-only and immutable: its folder cannot be
    written (a read-only mount or volume, a folder of another user's) and no ``-shm`` is
    there, which SQLite would have to create to read a WAL index the usual way, nor a ``-wal``
    holding anything (a writer's changes, which an immutable read would not see)."""
    if not path.is_file() or os.access(path.parent, os.W_OK) or not os.access(path, os.R_OK):
        return False
    try:
        wal = Path(f"{path}-wal").stat().st_size
    except FileNotFoundError:
        wal = 0
    return wal == 0 and not os.path.lexists(f"{path}-shm")


def not_writable(path: Path) -> str | None:
    """Which file or folder keeps the user from writing the index, and what to do, if the
    permissions tell: the file itself (``chmod a-w``, a copy from a read-only mount), SQLite's
    ``-wal`` / ``-shm`` beside it (left by another user), or its folder."""
    files = (path, *(path.with_name(path.name + end) for end in ("-wal", "-shm")))
    unwritable = [str(f) for f in files if f.exists() and not os.access(f, os.W_OK)]
    folder = path.parent if str(path.parent) != "." else path.parent.absolute()
    closed = folder.is_dir() and not os.access(folder, os.W_OK | os.X_OK)
    if unwritable:
        one = len(unwritable) == 1
        which = " and ".join([", ".join(unwritable[:-1]), unwritable[-1]][-len(unwritable) :])
        also = ""
        if closed:  # the folder too: fixing the file alone would only fail on the folder next
            also = f", and so is {'its' if one else 'their'} folder {folder}, where SQLite "
            also += f"writes {path.name}-wal and {path.name}-shm"
            unwritable.append(str(folder))
        return (
            f"{which} {'is' if one else 'are'} read-only for you{also}; make "
            f"{'it' if one and not closed else 'them'} writable (chmod u+w {' '.join(unwritable)}"
            ", or chown to the user briefd runs as), or pass --db (or 'db:' in briefd.yaml) "
            "elsewhere"
        )
    if closed:
        return (
            f"its folder {folder} is not writable by you, and SQLite writes {path.name}-wal and "
            f"{path.name}-shm beside the index; make the folder writable, or pass --db (or "
            "'db:' in briefd.yaml) a path in a folder you can write"
        )
    return None


FULL_BELOW = 1 << 20  # bytes free under which a file system counts as full


def disk_full(path: Path) -> bool:
    """Whether the file system of ``path``'s folder has (almost) no space left for the user
    (less than :data:`FULL_BELOW`): SQLite cannot even size the -shm it reads a WAL index
    through there."""
    try:
        found = os.statvfs(path.parent)
    except OSError:
        return False
    return found.f_bavail * found.f_frsize < FULL_BELOW
