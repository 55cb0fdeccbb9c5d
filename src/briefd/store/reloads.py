"""What a long-running process (the server, the prompt hook's daemon) logs when it loads the
index again after another process changed it: a long index run beside it (`briefd index`
embedding for minutes) commits a batch every few seconds, each loaded again on the next tick,
and a line for each was log spam. Each process hands its own logger."""

from __future__ import annotations

import logging
import time

SAID_EVERY = 60.0  # seconds: at most one line in this long


class Reloads:
    def __init__(self, log: logging.Logger) -> None:
        self._log = log  # where the process's warm-up lines go
        self._said_at = -SAID_EVERY  # time.monotonic() of the last line
        self._unsaid = 0  # reloads since, not logged

    def say(self, took: float | None) -> None:
        """Log a reload (``took`` ms; None: none now) at most once in ``SAID_EVERY`` seconds,
        with how many were not said since; those of a run that has ended are said once that
        time is up."""
        now = time.monotonic()
        since = now - self._said_at
        if took is not None and since < SAID_EVERY:
            self._unsaid += 1
            return
        if took is None and (not self._unsaid or since < SAID_EVERY):
            return
        unsaid, self._said_at, self._unsaid = self._unsaid, now, 0
        if took is None:
            self._log.info(
                "the index changed %d more times in the last %.0f s (another process writing "
                "it): loaded again each time",
                unsaid,
                since,
            )
        elif unsaid:
            self._log.info(
                "the index changed: loaded again in %.0f ms (also %d times in the last %.0f s, "
                "not logged each: another process is writing it)",
                took,
                unsaid,
                since,
            )
        else:
            self._log.info("the index changed: loaded again in %.0f ms", took)
