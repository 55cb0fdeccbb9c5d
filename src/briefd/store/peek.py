"""A quick read of the index outside a :class:`~briefd.store.db.Store` (no migration, no
lock): the CLI's fast paths (``index`` with nothing changed, ``search`` from its stamp,
``version``). Standard library only, and not pathlib: the stamp's answer imports no more."""

from __future__ import annotations

import os
import sqlite3


def peek(path: str | os.PathLike[str], timeout: float = 5) -> sqlite3.Connection:
    """A connection that only reads the index at ``path`` (``query_only``). SQLite makes the
    ``-wal`` and ``-shm`` files beside a WAL database for any reader, and only a connection
    that may write removes them as it closes last: a read-only one left them behind after
    ``briefd index`` or ``briefd version`` exited, two stray files in the user's folder. So
    it is opened read-write where the file and its folder may be written (never created),
    read-only where not."""
    where = os.path.abspath(os.fspath(path))
    writable = os.access(where, os.W_OK) and os.access(os.path.dirname(where), os.W_OK)
    mode = "rw" if writable else "ro"
    name = where.replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    uri = f"file:{name}?mode={mode}"
    conn = sqlite3.connect(uri, uri=True, timeout=timeout)
    conn.execute("PRAGMA query_only = 1")
    return conn
