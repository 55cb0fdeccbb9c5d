"""An index file deleted under a running server: the store makes a new, empty one in its place
and a sync fills it from the source (minutes with embeddings). Until that sync ends, requests
are told the index is being built (503; ``/api/health`` says ``building``), as during a first
index, instead of answering from the half-filled file (no hits, ``documents: 0``); then the
health notice says how the refill ended."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime

from briefd.store.db import Reopened
from briefd.sync.runner import Told
from briefd.sync.state import SyncReport


class Refill:
    """The refill of the last deleted index file: started once per deletion, ended when its
    sync reports back (``told``). A deletion is the store's ``Reopened`` object itself: two
    within the same second are equal as values, and the second must be refilled too."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._started: Reopened | None = None  # the deletion whose refill was started
        self._ended: tuple[Reopened, str] | None = None  # that deletion, and how its refill ended

    def running(self, reopened: Reopened | None, trigger: Callable[[Told], object]) -> bool:
        """Whether the new file of a deletion is still being filled; the first time a deletion
        is seen, start its refill with ``trigger`` (a background sync)."""
        if reopened is None or reopened.what != "deleted":
            return False
        with self._lock:
            if self._ended is not None and self._ended[0] is reopened:
                return False
            if self._started is reopened:
                return True
            self._started = reopened
        trigger(lambda outcome: self._end(reopened, outcome))
        return True

    def notice(self, reopened: Reopened) -> str:
        """What ``/api/health`` says of the file reopened: the refill running, or how it ended."""
        with self._lock:
            if self._ended is not None and self._ended[0] is reopened:
                return self._ended[1]
            if reopened.what == "deleted" and self._started is reopened:
                return (
                    f"the index file was deleted at {reopened.at}; briefd is filling a new one "
                    "from the source and answers from it once that is done; try again in a minute"
                )
        return reopened.notice

    def _end(self, reopened: Reopened, outcome: SyncReport | Exception) -> None:
        at = datetime.now(UTC).isoformat(timespec="seconds")
        error = str(outcome) if isinstance(outcome, Exception) else outcome.error
        deleted = f"the index file was deleted at {reopened.at}; "
        if error:
            text = f"{deleted}filling a new one from the source failed at {at}: {error}"
        else:
            text = f"{deleted}briefd filled a new one from the source at {at}"
        with self._lock:
            self._ended = (reopened, text)
