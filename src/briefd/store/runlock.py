"""One index run at a time per index file, across processes: an ``flock`` beside the index,
with the holder's pid and start written in it for those that wait."""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

WAITING = "waiting for another index run of this index"  # index progress stages start with it


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


@dataclass(frozen=True)
class IndexRun:
    """An index run going on now, as it wrote itself in its lock file (:class:`Held`): its
    pid and start (0: it wrote none readable, an older briefd) and its last stage of
    ``done`` of ``total`` (``stage`` empty before its first)."""

    pid: int = 0
    since: float = 0.0
    stage: str = ""
    done: int = 0
    total: int = 0


def index_run(db: Path) -> IndexRun | None:
    """The index run of ``db`` going on now (:func:`index_run_lock`, in any process, this one
    too), or None when none is."""
    if not index_run_held(db):
        return None
    lock = db.with_name(db.name + ".index.lock")
    for _ in range(3):  # the holder empties the file before it writes the next stage
        try:
            fields = lock.read_text(encoding="ascii", errors="replace").split()
            pid, since = int(fields[0]), float(fields[1])
            break
        except (OSError, ValueError, IndexError):
            time.sleep(0.001)
    else:
        return IndexRun()
    try:
        done, total = int(fields[-2]), int(fields[-1])
    except (ValueError, IndexError):
        return IndexRun(pid, since)
    stage = " ".join(fields[2:-2])
    return IndexRun(pid, since, stage, done, total) if stage else IndexRun(pid, since)


class Held:
    """The lock of a run: the seconds it waited for another, and :meth:`progress`, which
    writes the run's stage in the lock file (at most every :data:`PROGRESS_EVERY` seconds, and
    as a stage begins) for a prompt answered meanwhile to say how far the run is."""

    def __init__(self, handle: IO[bytes], waited: float) -> None:
        self.waited = waited
        self._handle = handle
        self._head = f"{os.getpid()} {time.time():.0f}"
        self._stage = ""
        self._written = 0.0
        _write_holder(handle, self._head + "\n")

    def progress(self, stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if stage == self._stage and now - self._written < PROGRESS_EVERY and done < total:
            return
        self._stage, self._written = stage, now
        words = " ".join(stage.split()) or "-"
        _write_holder(self._handle, f"{self._head} {words} {done} {total}\n")


PROGRESS_EVERY = 0.5


@contextmanager
def index_run_lock(db: Path, waiting: Callable[[str], object] | None = None) -> Iterator[Held]:
    """One index run at a time per index file, across processes and threads (an ``flock``
    beside it, released by the kernel when a process dies): a run works out what changed
    before it writes, so two overlapping runs could each apply a stale change set and leave a
    deleted or renamed file served. A folder the lock file cannot be made in runs unlocked.
    Yields the run's :class:`Held` (the seconds it waited for another run, its progress);
    ``waiting`` is called when it starts to, with :func:`_holder`'s words on the run it waits
    for. The holder writes its pid, start and progress in the lock file (emptied as it ends)."""
    lock = db.with_name(db.name + ".index.lock")
    try:  # unbuffered: a holder line a full disk refused is dropped, not written again at close
        handle = lock.open("ab", buffering=0)
    except OSError:
        yield Held(_Nowhere(), 0.0)
        return
    with handle:
        started = time.monotonic()
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if waiting is not None:
                waiting(_holder(lock))
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield Held(handle, time.monotonic() - started)
        finally:
            _write_holder(handle, "")
            fcntl.flock(handle, fcntl.LOCK_UN)


class _Nowhere(io.BytesIO):
    """Where a run that could not make its lock file writes its progress: nowhere kept."""


def _write_holder(handle: IO[bytes], text: str) -> None:
    with contextlib.suppress(OSError):  # a full disk: waiting runs are told less, that is all
        handle.truncate(0)
        handle.write(text.encode("ascii", "replace"))


def _holder(lock: Path) -> str:
    """`` (pid N since <UTC time>; …)`` for the run holding ``lock`` in another process, as
    it wrote itself there; empty when it wrote nothing readable (an older briefd)."""
    try:
        pid, since = lock.read_text(encoding="ascii").split()[:2]
        at = datetime.fromtimestamp(int(since), UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OSError, ValueError):
        return ""
    if int(pid) == os.getpid():  # another thread of this process (a server's sync)
        return ""
    return f" (pid {pid} since {at}; if it hangs, ending it loses nothing: `kill {pid}`)"
