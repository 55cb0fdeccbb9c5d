"""One index run at a time per index file, across processes: an ``flock`` beside the index,
with the holder's pid and start written in it for those that wait."""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO


def index_run_held(db: Path) -> bool:
    """Whether an index run (:func:`index_run_lock`) of ``db`` is going on now, in any process."""
    try:
        handle = db.with_name(db.name + ".index.lock").open("a")
    except OSError:
        return False
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False


@contextmanager
def index_run_lock(db: Path, waiting: Callable[[str], object] | None = None) -> Iterator[float]:
    """One index run at a time per index file, across processes and threads (an ``flock``
    beside it, released by the kernel when a process dies): a run works out what changed
    before it writes, so two overlapping runs could each apply a stale change set and leave a
    deleted or renamed file served. A folder the lock file cannot be made in runs unlocked.
    Yields the seconds it waited for another run; ``waiting`` is called when it starts to,
    with :func:`_holder`'s words on the run it waits for. The holder writes its pid and start
    in the lock file (emptied as it ends)."""
    lock = db.with_name(db.name + ".index.lock")
    try:  # unbuffered: a holder line a full disk refused is dropped, not written again at close
        handle = lock.open("ab", buffering=0)
    except OSError:
        yield 0.0
        return
    with handle:
        started = time.monotonic()
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if waiting is not None:
                waiting(_holder(lock))
            fcntl.flock(handle, fcntl.LOCK_EX)
        _write_holder(handle, f"{os.getpid()} {time.time():.0f}\n")
        try:
            yield time.monotonic() - started
        finally:
            _write_holder(handle, "")
            fcntl.flock(handle, fcntl.LOCK_UN)


def _write_holder(handle: IO[bytes], text: str) -> None:
    with contextlib.suppress(OSError):  # a full disk: waiting runs are told less, that is all
        handle.truncate(0)
        handle.write(text.encode("ascii"))


def _holder(lock: Path) -> str:
    """`` (pid N since <UTC time>; …)`` for the run holding ``lock`` in another process, as
    it wrote itself there; empty when it wrote nothing readable (an older briefd)."""
    try:
        pid, since = lock.read_text(encoding="ascii").split()
        at = datetime.fromtimestamp(int(since), UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OSError, ValueError):
        return ""
    if int(pid) == os.getpid():  # another thread of this process (a server's sync)
        return ""
    return f" (pid {pid} since {at}; if it hangs, ending it loses nothing: `kill {pid}`)"
