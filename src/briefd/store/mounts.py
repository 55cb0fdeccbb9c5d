"""Whether the index's folder is on a file system mounted read-only (a read-only bind mount,
a ``:ro`` container volume, a read-only snapshot): a refusal that ``chmod`` cannot lift."""

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
