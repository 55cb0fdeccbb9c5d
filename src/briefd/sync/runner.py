"""One sync run, and the coalescing in front of it.

A run: take the cross-process sync lock → fetch and reset an owned clone (a user's checkout
is only read) → incremental reindex of the working tree → refresh stored pull request
statuses → record ``sync_state``. A failure at any step is recorded and reported, never
raised into the server: the index the last good run built keeps answering.

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
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from briefd.errors import BriefdError, IndexNotFoundError
from briefd.model import IndexReport
from briefd.sync import source as sources
from briefd.sync import state
from briefd.sync.state import SyncReport, SyncStatus

if TYPE_CHECKING:
    from briefd.api import Briefd

log = logging.getLogger("briefd.sync")


class SyncRunner:
    """Coalesces concurrent requests for ``run_once`` (thread-safe)."""

    def __init__(self, run_once: Callable[[], SyncReport]) -> None:
        self._run_once = run_once
        self._cond = threading.Condition()
        self._started = 0
        self._finished = 0
        self._running = False
        self._background_waiting = False
        self._outcome: SyncReport | BaseException | None = None

    @property
    def running(self) -> bool:
        return self._running

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

    def _shared(self) -> SyncReport:
        outcome = self._outcome
        if isinstance(outcome, BaseException):
            raise outcome
        assert outcome is not None
        return dataclasses.replace(outcome, coalesced=True)

    def trigger(self) -> bool:
        """Start a sync in a background thread (webhook, dashboard); False when one that has
        not started yet is already queued (it will cover this request too)."""
        with self._cond:
            if self._background_waiting:
                return False
            self._background_waiting = True
        threading.Thread(target=self._background, name="briefd-sync", daemon=True).start()
        return True

    def _background(self) -> None:
        try:
            self.run()
        except Exception:  # run_sync reports briefd errors itself; this is a bug, say so
            log.exception("background sync failed")


def run_sync(api: Briefd) -> SyncReport:
    """One sync of ``api``'s configured source (see the module docstring). It works on a
    connection of its own, so callers need no lock around it; readers of ``api`` see the new
    index when it commits (their caches follow ``PRAGMA data_version``)."""
    with type(api)(api.settings, embedder=api.embedder) as worker:
        return _sync(worker)


def _sync(api: Briefd) -> SyncReport:
    settings = api.settings
    started, clock = _now(), time.perf_counter()
    previous = _saved(api)
    previous_commit = _text(previous.get("last_commit"))
    label, kind, branch = "", "none", settings.sync.branch
    commit: str | None = None
    report: IndexReport | None = None
    error: str | None = None
    with sources.sync_lock(settings):
        try:
            source = sources.resolve(settings)
            label, kind = source.label, source.kind
            timeout = settings.sync.git_timeout
            if source.kind == "clone":
                commit = sources.update_clone(source, timeout)
                branch = sources.tracked_branch(source, timeout)
            else:
                commit = sources.head_commit(source, timeout)
            report = api.index(source=source.root)
        except BriefdError as exc:
            error = str(exc)
        except Exception as exc:  # a bug must still be reported, and the last index served
            log.exception("sync failed")
            error = f"sync failed unexpectedly ({exc.__class__.__name__}: {exc}); see the log"
    refresh = _refresh_proposals(api)
    result = SyncReport(
        source=label,
        kind=kind,
        branch=branch,
        previous_commit=previous_commit,
        commit=commit if error is None else previous_commit,
        index=report,
        error=error,
        proposals_checked=refresh.checked,
        proposals_changed=refresh.changed,
        forge_error=refresh.error,
        started_at=started,
        seconds=round(time.perf_counter() - clock, 3),
    )
    success_at = started if error is None else _text(previous.get("last_success_at"))
    try:
        with api.store.write() as conn:
            state.save(conn, result, success_at)
    except IndexNotFoundError:  # no index yet and none was built: the report says why
        pass
    return result


def _saved(api: Briefd) -> dict[str, object]:
    try:
        with api.store.read() as conn:
            return state.load(conn)
    except IndexNotFoundError:
        return {}


def _refresh_proposals(api: Briefd) -> RefreshOutcome:
    from briefd.proposals.service import refresh_statuses

    try:
        outcome = refresh_statuses(api.store, api.settings)
    except IndexNotFoundError:  # no index, so no proposals either
        return RefreshOutcome(0, (), None)
    except BriefdError as exc:  # a forge or store problem never fails the sync
        return RefreshOutcome(0, (), str(exc))
    return RefreshOutcome(outcome.checked, outcome.changed, outcome.error)


@dataclasses.dataclass(frozen=True, slots=True)
class RefreshOutcome:
    checked: int
    changed: tuple[str, ...]
    error: str | None


def status(api: Briefd, runner: SyncRunner) -> SyncStatus:
    settings = api.settings
    try:
        source = sources.resolve(settings)
        label: str | None = source.label
        kind: str = source.kind
    except BriefdError:
        label, kind = None, "none"
    saved = _saved(api)
    return SyncStatus(
        source=label,
        kind=kind,
        branch=_text(saved.get("branch")) or settings.sync.branch,
        last_commit=_text(saved.get("last_commit")),
        last_sync_at=_text(saved.get("last_sync_at")),
        last_success_at=_text(saved.get("last_success_at")),
        last_error=_text(saved.get("last_error")),
        interval=settings.sync.interval,
        webhook=bool(settings.sync.webhook_secret),
        running=runner.running,
        syncs=runner.runs,
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
