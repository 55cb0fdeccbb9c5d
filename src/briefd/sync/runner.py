"""One sync run, and the coalescing in front of it.

A run: take the cross-process sync lock → fetch and reset an owned clone (a user's checkout
is only read) → incremental reindex of the working tree → record ``sync_state`` (and, with a
shared state, this replica's commit) → refresh stored pull request statuses. A failure at any
step is recorded and reported, never raised into the server: the index the last good run built
keeps answering.

Concurrent callers coalesce: a caller that arrives while a run is going waits for the next
run (which starts after it arrived, so it sees what was pushed before it asked), and every
caller waiting for that run shares it.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from briefd.errors import BriefdError
from briefd.model import IndexReport
from briefd.settings import Settings
from briefd.sync.state import Refresh, SyncReport, SyncStatus, log_report

log = logging.getLogger("briefd.sync")
Told = Callable[["SyncReport | Exception"], None]  # how a sync asked for in the background ended


class SyncRunner:
    """Coalesces concurrent requests for ``run_once`` (thread-safe)."""

    def __init__(self, run_once: Callable[[], SyncReport]) -> None:
        self._run_once = run_once
        self._cond = threading.Condition()
        self._started = 0
        self._finished = 0
        self._running = False
        self._background_waiting = False
        self._told: list[Told] = []  # to hear how the background run asked for ends
        self._outcome: SyncReport | BaseException | None = None

    @property
    def running(self) -> bool:
        return self._running

    @property
    def last(self) -> SyncReport | None:
        """The report of the last run in this process (None: none ended, or it raised)."""
        outcome = self._outcome
        return outcome if isinstance(outcome, SyncReport) else None

    @property
    def runs(self) -> int:
        """Runs completed in this process."""
        return self._finished

    def run(self) -> SyncReport:
        """Run a sync that starts after this call, or wait for the one others are waiting for."""
        with self._cond:
            target = self._started + 1
            while self._finished < target:
                if not self._running:
                    self._running = True
                    self._started += 1
                    self._background_waiting = False
                    break
                self._cond.wait()
            else:
                return self._shared()
        outcome: SyncReport | BaseException
        try:
            outcome = self._run_once()
        except BaseException as exc:  # handed to every waiter, then re-raised
            outcome = exc
        with self._cond:
            self._outcome = outcome
            self._running = False
            self._finished += 1
            self._cond.notify_all()
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    @property
    def idle(self) -> bool:
        """No run is going, and none is queued to start."""
        with self._cond:
            return not (self._running or self._background_waiting)

    def _shared(self) -> SyncReport:
        outcome = self._outcome
        if isinstance(outcome, BaseException):
            raise outcome
        assert outcome is not None
        return dataclasses.replace(outcome, coalesced=True)

    def trigger(self, told: Told | None = None) -> bool:
        """Ask for a sync in a background thread (webhook, dashboard): True when it starts
        now, False when it is queued — behind the sync running (it starts when that one ends),
        or covered by one that has not started yet. ``told`` is handed the report of the run
        that covers this request (or what it raised) when that run ends."""
        with self._cond:
            if self._background_waiting:
                self._told.extend([told] if told else [])
                return False
            self._background_waiting = True
            now = not self._running
            self._told = waiting = [told] if told else []
        thread = threading.Thread(target=self._background, args=(waiting,), daemon=True)
        thread.name = "briefd-sync"
        thread.start()
        return now

    def _background(self, waiting: list[Told]) -> None:
        outcome: SyncReport | Exception
        try:
            outcome = self.run()
        except Exception as exc:  # run_sync reports briefd errors itself; this is a bug, say so
            log.exception("background sync failed")
            outcome = exc
        else:
            log_report(outcome, log)
        with self._cond:  # the run started: no one joins this list any more
            told = list(waiting)
        for tell in told:
            tell(outcome)


@dataclass(frozen=True, slots=True)
class SyncSteps:
    """What a sync run needs from the layers above it, given as callables (sync imports
    neither the API nor proposals)."""

    settings: Settings
    reindex: Callable[[Path], IndexReport]  # index this directory, on a connection of its own
    load: Callable[[], dict[str, object]]  # the last sync's record ({} without an index)
    save: Callable[[SyncReport, str | None], None]  # record an attempt (no-op without an index)
    # after the reindex (open pull requests; True: the source was updated); never raises
    after: Callable[[bool], Refresh]
    # the knowledge commit the index serves when no sync recorded one (read in a checkout)
    served: Callable[[], str | None] = lambda: None


def run_sync(steps: SyncSteps) -> SyncReport:
    """One sync of the configured source (see the module docstring). ``steps.reindex`` works
    on a connection of its own, so callers need no lock around it; readers see the new index
    when it commits (their caches follow the index's content version)."""
    from briefd.sources import knowledge as sources  # at a sync, not at every CLI start

    settings = steps.settings
    started, clock = _now(), time.perf_counter()
    previous = steps.load()
    previous_commit = _text(previous.get("last_commit"))
    label, kind = _configured(settings), "none"
    branch = settings.sync.branch or _text(previous.get("branch"))  # the served one, until known
    commit: str | None = None
    report: IndexReport | None = None
    error: str | None = None
    with sources.sync_lock(settings):
        try:
            source = sources.resolve(settings)
            label, kind = source.label, source.kind
            commit = source.update()
            branch = source.branch()
            report = steps.reindex(source.root)
        except BriefdError as exc:
            error = str(exc)
        except Exception as exc:  # a bug must still be reported, and the last index served
            log.exception("sync failed")
            error = f"sync failed unexpectedly ({exc.__class__.__name__}: {exc}); see the log"
    if error is not None and previous_commit is not None:  # name the branch still served
        branch = _text(previous.get("branch")) or branch
    result = SyncReport(
        source=label,
        kind=kind,
        branch=branch,
        previous_commit=previous_commit,
        commit=commit if error is None else previous_commit,
        index=report,
        error=error,
        proposals_checked=0,
        proposals_changed=(),
        forge_error=None,
        started_at=started,
        seconds=round(time.perf_counter() - clock, 3),
    )
    # recorded before the forge refresh: health, `briefd version` and the replicas' listing
    # name the commit whose documents are served while it runs, not the one before
    try:
        steps.save(result, started if error is None else _text(previous.get("last_success_at")))
    except BriefdError as exc:  # a full disk, a busy index: the report stands, unrecorded
        log.warning("could not record the sync in the index: %s", exc)
    refresh = steps.after(error is None)
    return dataclasses.replace(
        result,
        proposals_checked=refresh.checked,
        proposals_changed=refresh.changed,
        forge_error=refresh.error,
        seconds=round(time.perf_counter() - clock, 3),
    )


def status(steps: SyncSteps, runner: SyncRunner) -> SyncStatus:
    from briefd.sources import knowledge as sources

    settings = steps.settings
    try:
        source = sources.resolve(settings)
        label: str | None = source.label
        kind: str = source.kind
    except BriefdError:  # a folder gone (moved, not mounted): still named, as its error is
        label, kind = _configured(settings) or None, "none"
    saved = steps.load() or _unrecorded(runner.last)
    return SyncStatus(
        source=label,
        kind=kind,
        branch=_text(saved.get("branch")) or settings.sync.branch,
        # the served documents' own commit first: written with them, never a step behind
        last_commit=steps.served() or _text(saved.get("last_commit")),
        last_sync_at=_text(saved.get("last_sync_at")),
        last_success_at=_text(saved.get("last_success_at")),
        last_error=_text(saved.get("last_error")),
        interval=settings.sync.interval,
        webhook=bool(settings.sync.webhook_secret),
        running=runner.running,
        syncs=runner.runs,
    )


def _unrecorded(report: SyncReport | None) -> dict[str, object]:
    """What this process knows of its last sync when the index holds no record: none is kept
    without an index (a first clone the remote refused, a first index that failed)."""
    if report is None:
        return {}
    return {
        "branch": report.branch,
        "last_commit": report.commit,
        "last_sync_at": report.started_at,
        "last_success_at": report.started_at if report.ok else None,
        "last_error": report.error,
    }


def _configured(settings: Settings) -> str:
    """The configured source as reports name it, when it cannot be resolved ('' without one)."""
    if settings.sync.remote:
        from briefd.sources import git

        return git.redact(settings.sync.remote)
    return str(settings.source) if settings.source is not None else ""


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
