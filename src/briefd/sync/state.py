"""What a sync did (:class:`SyncReport`) and where the source stands (:class:`SyncStatus`);
:func:`record` is what :mod:`briefd.store.sync_state` keeps of a run."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from briefd.model import IndexReport


@dataclass(frozen=True, slots=True)
class SyncReport:
    """One sync run. ``error`` set: the source could not be updated or indexed, and the
    previous index is still the one served."""

    source: str
    kind: str  # clone | checkout | directory | none
    branch: str | None
    previous_commit: str | None
    commit: str | None
    index: IndexReport | None
    error: str | None
    proposals_checked: int
    proposals_changed: tuple[str, ...]  # "id: old → new"
    forge_error: str | None
    started_at: str
    seconds: float
    coalesced: bool = False  # this caller joined a run another caller started

    @property
    def ok(self) -> bool:
        return self.error is None


def log_report(report: SyncReport, log: logging.Logger) -> None:
    """What a sync the server ran (polling, a webhook, the dashboard) did besides reindexing,
    in the server's log as `briefd sync` prints it: its error, each proposal's change of
    status, and a forge that could not be asked (statuses not refreshed)."""
    if report.error:
        log.warning("sync of %s failed: %s", report.source, report.error)
    for change in report.proposals_changed:
        log.info("proposal %s", change)
    if report.forge_error:
        log.warning("pull request statuses not refreshed: %s", report.forge_error)


@dataclass(frozen=True, slots=True)
class SyncStatus:
    """Where the knowledge source stands, for ``/api/stats``, ``/metrics``, the dashboard."""

    source: str | None
    kind: str
    branch: str | None
    last_commit: str | None  # the commit the served index was built from
    last_sync_at: str | None  # the last attempt
    last_success_at: str | None
    last_error: str | None  # the last attempt's error; None when it succeeded
    interval: int
    webhook: bool  # a webhook secret is configured
    running: bool  # a sync is running in this process
    syncs: int  # runs completed by this process


@dataclass(frozen=True, slots=True)
class Refresh:
    """What following open pull requests after a sync found (see ``SyncSteps.after``)."""

    checked: int
    changed: tuple[str, ...]  # "id: open → merged"
    error: str | None  # the last forge failure (statuses it could not read stay as they were)
