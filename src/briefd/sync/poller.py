"""Polling (K3): a background thread that syncs every ``interval_seconds``."""

from __future__ import annotations

import logging
import threading
from typing import Protocol

from briefd.sync.state import SyncReport, log_report

log = logging.getLogger("briefd.sync")


class Syncs(Protocol):
    """Anything that runs a (coalesced) sync: the API."""

    def sync(self) -> SyncReport: ...


class Poller:
    """``start()`` begins syncing every ``interval_seconds`` (the first sync one interval
    after the start); ``stop()`` ends it, waiting for a sync in progress to finish."""

    def __init__(self, api: Syncs, interval_seconds: float) -> None:
        if interval_seconds <= 0:
            raise ValueError("a poller needs an interval above 0 seconds")
        self.api = api
        self.interval = interval_seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="briefd-poller", daemon=True)
        self._thread.start()

    def stop(self, timeout: float | None = 30.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                report = self.api.sync()
            except Exception:  # a bug must not end polling; the next tick tries again
                log.exception("sync failed unexpectedly")
                continue
            log_report(report, log)
