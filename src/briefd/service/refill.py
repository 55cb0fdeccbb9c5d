"""An index file deleted under a running server: the store makes a new, empty one in its place
and a sync fills it from the source (minutes with embeddings). Until that sync ends, requests
are told the index is being built (503; ``/api/health`` says ``building``), as during a first
index, instead of answering from the half-filled file (no hits, ``documents: 0``)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from briefd.store.db import Reopened
from briefd.sync.runner import Told


class Refill:
    """The refill of the last deleted index file: started once per deletion, ended when its
    sync reports back (``told``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._started: Reopened | None = None  # the deletion whose refill was started
        self._ended: Reopened | None = None  # the deletion whose refill ended

    def running(self, reopened: Reopened | None, trigger: Callable[[Told], object]) -> bool:
        """Whether the new file of a deletion is still being filled; the first time a deletion
        is seen, start its refill with ``trigger`` (a background sync)."""
        if reopened is None or reopened.what != "deleted":
            return False
        with self._lock:
            if self._ended == reopened:
                return False
            if self._started == reopened:
                return True
            self._started = reopened
        trigger(lambda _outcome: self._end(reopened))
        return True

    def notice(self, reopened: Reopened) -> str:
        """What ``/api/health`` says of the file reopened, the refill running or not."""
        with self._lock:
            if reopened.what == "deleted" and self._started == reopened != self._ended:
                return (
                    f"the index file was deleted at {reopened.at}; briefd is filling a new one "
                    "from the source and answers from it once that is done; try again in a minute"
                )
        return reopened.notice

    def _end(self, reopened: Reopened) -> None:
        with self._lock:
            self._ended = reopened
