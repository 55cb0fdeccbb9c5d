"""The knowledge commit a replica serves, and whether another replica's commit is one it has
moved past (then a delta against that replica's bundle is right); the sync steps that tell
the other replicas (``LISTEN/NOTIFY``) and record each replica's status."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from briefd.bundles.compile import Engine
from briefd.errors import BriefdError, IndexNotFoundError
from briefd.ingest import leaving_other_settings
from briefd.model import IndexReport
from briefd.proposals.service import refresh_after_sync
from briefd.settings import Settings
from briefd.sources import git
from briefd.sources import knowledge as sources
from briefd.state import SYNC_CHANNEL, ReplicaStatus, SharedState, replica_name
from briefd.store import sync_state
from briefd.store.activity import now_iso
from briefd.store.db import Store
from briefd.sync.runner import SyncSteps
from briefd.sync.state import SyncReport

log = logging.getLogger("briefd.replicas")
# a replica unseen this long is gone (scaled down, renamed): one that is up reports each sync
REPLICA_DAYS = 7


def served_commit(store: Store) -> str | None:
    """The knowledge commit of the index this replica serves (None: not a synced git source)."""
    try:
        with store.read() as conn:
            return sync_state.synced_commit(conn)
    except IndexNotFoundError:
        return None


def knowledge_commit(store: Store) -> str | None:
    """The knowledge commit the index serves, as ``briefd version`` names it: the one checked
    out when its documents were read, written with them (so never a step behind the search),
    else the last sync's (an earlier briefd's index); None outside git."""
    try:
        with store.read() as conn:
            commit = sync_state.served(conn).get("commit")
    except IndexNotFoundError:
        return None
    return commit if isinstance(commit, str) and commit else None


def _knowledge_commit(open_store: Callable[[], Store]) -> str | None:
    """:func:`knowledge_commit` of the index ``open_store`` opens (None: there is none yet)."""
    try:
        store = open_store()
    except IndexNotFoundError:
        return None
    return knowledge_commit(store)


def across_replicas(engine: Engine, state: SharedState) -> Engine:
    """A bundle engine that finds ``base=`` manifests compiled by any replica, and uses one
    only when it was compiled at the commit served here or an ancestor of it."""
    if not state.shared:
        return engine
    commit = served_commit(engine.store)
    check = knows(engine.settings, commit) if commit else None
    return replace(engine, shared=state, commit=commit, knows=check)


def knows(settings: Settings, served: str) -> Callable[[str], bool]:
    """Whether a commit is ``served`` or one of its ancestors in the knowledge repository (a
    commit this replica has not fetched, or one on another line, is not)."""

    def check(commit: str) -> bool:
        if commit == served:
            return True
        try:
            root = sources.resolve(settings).root
            git.run(["merge-base", "--is-ancestor", commit, served], root, 10)
        except BriefdError:
            return False
        return True

    return check


def sync_steps(
    settings: Settings,
    reindex: Callable[[Path], IndexReport],
    open_store: Callable[[], Store],
    state: Callable[[], SharedState],
) -> SyncSteps:
    """A sync run's steps: the local index records the attempt; a shared state also learns
    this replica's commit, and forge refresh runs on one replica at a time."""

    def save(report: SyncReport, success_at: str | None) -> None:
        sync_state.record_sync(open_store, report, success_at)
        report_replica(settings, open_store, state())

    def reindex_unless_overtaken(root: Path) -> IndexReport:
        with leaving_other_settings():  # a briefd with newer settings indexed it: say so
            return reindex(root)

    return SyncSteps(
        settings,
        reindex_unless_overtaken,
        lambda: sync_state.last_sync(open_store),
        save,
        lambda fetched: refresh_after_sync(state, settings, fetched),
        lambda: _knowledge_commit(open_store),
    )


def report_replica(settings: Settings, open_store: Callable[[], Store], state: SharedState) -> None:
    """Tell the shared state which commit and index this replica serves, forget replicas
    unseen for :data:`REPLICA_DAYS` and bundle manifests older than
    ``bundles.manifest_days`` (best effort)."""
    if not state.shared:
        return
    try:
        store = open_store()
        with store.read() as conn:
            saved = sync_state.load_sync(conn)
            fingerprint = sync_state.index_fingerprint(conn)
        error = saved.get("last_error")
        status = ReplicaStatus(
            replica_name(settings),
            served_commit(store),
            fingerprint,
            now_iso(),
            error if isinstance(error, str) else None,
        )
        state.save_replica(status)
        now = datetime.now(UTC)
        state.prune_replicas((now - timedelta(days=REPLICA_DAYS)).isoformat(timespec="seconds"))
        cutoff = now - timedelta(days=settings.bundles.manifest_days)
        state.prune_manifests(cutoff.isoformat(timespec="seconds"))  # as the index prunes its own
    except BriefdError as exc:
        log.warning("could not report this replica's status: %s", exc)


def announce_sync(state: SharedState) -> None:
    """Ask every other replica to sync (a webhook or a proposal reached this one)."""
    if state.shared:
        try:
            state.broadcast(SYNC_CHANNEL, "sync")
        except BriefdError as exc:
            log.warning("could not tell the other replicas to sync: %s", exc)


def follow_syncs(state: SharedState, trigger: Callable[[], object]) -> None:
    """Sync when another replica says so, and once listening again after PostgreSQL was away
    (a sync another replica was asked for meanwhile could not be said)."""

    def heard(_payload: str) -> None:
        trigger()

    state.listen(SYNC_CHANNEL, heard)
