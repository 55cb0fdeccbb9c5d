"""The shared state in the SQLite index (``state.url`` unset): one node, nothing shared. The
query log, usage and sync status keep the tables and SQL they always had (:mod:`briefd.store`);
proposals and manifests are read and written here, recall sessions in :mod:`.sessions`."""

from __future__ import annotations

import contextlib
import json
import secrets
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from briefd.errors import StateUnavailableError, StoreError
from briefd.state.model import REPLACES_ADOPTED, Manifest, Proposal, ReplicaStatus
from briefd.state.sessions import IndexSessions
from briefd.store import activity, queryhash, sync_state
from briefd.store.activity import QueryLogEntry
from briefd.store.db import Store
from briefd.store.mounts import mounted_read_only

WAIT_MS = 200  # the query log: the service keeps the entries and retries later

QUERY_COLUMNS = (
    "id, kind, query, scopes, results, top_score, latency_ms, client, created_at, surface, "
    "gate, sections, documents, bundle_id, query_hash"
)
USAGE_COLUMNS = "id, bundle_id, chunk_id, useful, client, created_at"
_PROPOSAL_COLUMNS = (
    "id, branch, doc_path, description, commit_hash, pr_url, status, client, created_at, "
    "pr_number, base_branch, base_commit, forge_error, status_checked_at, pushed_to"
)


class LocalState(IndexSessions):
    """:class:`~briefd.state.base.SharedState` on the index ``open_store`` opens."""

    engine = "sqlite"
    shared = False

    def __init__(self, open_store: Callable[[], Store]) -> None:
        super().__init__(open_store)
        self._locks: dict[str, threading.Lock] = {}
        self._listeners: dict[str, list[Callable[[str], None]]] = {}
        self._deliveries: dict[str, float] = {}  # one node: this process's memory
        self._deliveries_lock = threading.Lock()

    def problem(self) -> str | None:
        """None: the index opens and takes writes (without one, :class:`IndexNotFoundError` is
        raised). An index opened read-only (its folder on a read-only mount:
        :func:`briefd.store.mounts.unwritable_folder`) keeps nothing of what the state holds
        (the query log, usage reports, proposals): said, as a shared state refusing writes is
        (health ``degraded``, proposals refused before anything is pushed). So is one opened
        read-only because its disk was full (``Store.full``), until space is freed."""
        store = self._open()
        store.follow_file()  # a full disk given space again: the store writes again
        if not store.frozen:
            return None
        if store.full:
            return FULL.format(path=store.path)
        why = mounted_read_only(store.path) or f"{store.path.parent} cannot be written"
        return READ_ONLY.format(path=store.path, why=why)

    def query_salt(self) -> bytes:
        with self._open().write(wait_ms=WAIT_MS, durable=False) as conn:
            return queryhash.query_salt(conn)

    def save_queries(self, entries: Sequence[QueryLogEntry], documents: Mapping[str, str]) -> None:
        with self._open().write(wait_ms=WAIT_MS, durable=False) as conn:
            activity.save_queries(conn, entries, documents)

    def recent_queries(self, limit: int = 100) -> list[QueryLogEntry]:
        with self._open().read() as conn:
            return activity.recent_queries(conn, limit)

    def save_usage(
        self, bundle_id: str, chunk_ids: Sequence[str], client: str | None, at: str
    ) -> int:
        """A busy index (a reindex in another process, a full disk) keeps the report in
        memory and writes it with a later flush (:meth:`Store.defer`)."""
        store = self._open()
        if store.frozen and not store.full:  # never written: kept, it was lost at the stop
            raise StateUnavailableError(f"nothing was stored: {self.problem()}")

        def save(conn: sqlite3.Connection) -> None:
            activity.save_usage(conn, bundle_id, chunk_ids, client, at)

        try:
            with store.write(wait_ms=WAIT_MS) as conn:
                save(conn)
        except StoreError:
            said = f"a usage report of bundle {bundle_id}"
            store.defer(f"usage:{bundle_id}:{secrets.token_hex(8)}", save, said=said)
        return max(len(dict.fromkeys(chunk_ids)), 1)

    def query_rows(self, since: str) -> list[tuple[Any, ...]]:
        with self._open().read() as conn:
            sql = f"SELECT {QUERY_COLUMNS} FROM query_log WHERE created_at >= ? ORDER BY id"
            return [tuple(r) for r in conn.execute(sql, (since,))]

    def usage_rows(self, since: str) -> list[tuple[Any, ...]]:
        with self._open().read() as conn:
            sql = f"SELECT {USAGE_COLUMNS} FROM usage_events WHERE created_at >= ? ORDER BY id"
            return [tuple(r) for r in conn.execute(sql, (since,))]

    def prune_before(self, cutoff: str) -> tuple[int, int]:
        with self._open().write(wait_ms=WAIT_MS, durable=False) as conn:
            return activity.prune_before(conn, cutoff)

    def text_hashes(self, hashes: Sequence[str]) -> set[str]:
        with self._open().read() as conn:
            return activity.text_hashes(conn, hashes)

    def forget_text(self, log_prompts: str, hook: str) -> int:
        with self._open().write(wait_ms=WAIT_MS, durable=False) as conn:
            return activity.forget_text(conn, log_prompts, hook)

    def counts(self) -> dict[str, int]:
        with self._open().read() as conn:
            one = conn.execute
            found = {
                "queries_logged": one("SELECT count(*) FROM query_log").fetchone()[0],
                "usage_events": one("SELECT count(*) FROM usage_events").fetchone()[0],
            }
            for status, n in one("SELECT status, count(*) FROM proposals GROUP BY status"):
                found[f"proposals_{status}"] = n
            # and those whose record waits for the index, as proposals() lists them
            waiting = {p.id: p for p in _waiting(self._open(), set(), None)}
            marks = ", ".join("?" * len(waiting))
            sql = f"SELECT id FROM proposals WHERE id IN ({marks})"
            stored = {row[0] for row in one(sql, tuple(waiting))} if waiting else set()
        for proposal in (p for key, p in waiting.items() if key not in stored):
            key = f"proposals_{proposal.status}"
            found[key] = found.get(key, 0) + 1
        return found

    def save_proposal(self, proposal: Proposal) -> None:
        """Its branch is made by now, so an index that cannot take the row (another process
        writing past the busy timeout, a full disk) keeps it in memory for a later flush
        (:meth:`Store.defer`) rather than fail: the agent would propose it again."""
        store = self._open()

        def save(conn: sqlite3.Connection) -> None:
            conn.execute(
                # a sync found its branch first, and adopted it (proposals.follow)
                f"INSERT INTO proposals ({_PROPOSAL_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" + REPLACES_ADOPTED,
                proposal_row(proposal),
            )

        try:
            with store.write() as conn:
                save(conn)
        except StoreError:
            said = f"proposal {proposal.id} ({proposal.doc_path}, branch {proposal.branch})"
            store.defer(f"{_WAITING}{proposal.id}", save, proposal, said)

    def proposals(self, status: str | None = None) -> list[Proposal]:
        """Stored proposals, newest first, with those whose record still waits for the index
        (:meth:`save_proposal`): a client told 201 finds its proposal listed, and the checks
        of a repeat see it. The records waiting are written first when the index takes them."""
        store = self._open()
        with contextlib.suppress(StoreError):  # still busy (or full): they keep waiting
            store.flush_deferred(WAIT_MS)
        where, args = ("WHERE status = ?", (status,)) if status else ("", ())
        sql = f"SELECT {_PROPOSAL_COLUMNS} FROM proposals {where} ORDER BY created_at DESC, id"
        with store.read() as conn:
            found = [Proposal(*row) for row in conn.execute(sql, args)]
        waiting = _waiting(store, {p.id for p in found}, status)
        if not waiting:
            return found
        by_id = sorted([*found, *waiting], key=lambda p: p.id)
        return sorted(by_id, key=lambda p: p.created_at, reverse=True)  # stable: ids ascend

    def open_pulls(self) -> list[Proposal]:
        return self._oldest_first("status = 'open' AND pr_number IS NOT NULL")

    def unfollowed(self) -> list[Proposal]:
        return self._oldest_first(
            "(status = 'pushed' AND pr_number IS NULL) OR (status = 'closed' AND pr_number > 0)"
        )

    def _oldest_first(self, where: str) -> list[Proposal]:
        sql = f"SELECT {_PROPOSAL_COLUMNS} FROM proposals WHERE {where} ORDER BY created_at, id"
        with self._open().read() as conn:
            return [Proposal(*row) for row in conn.execute(sql)]

    def record_check(
        self, proposal_id: str, status: str | None, error: str | None, at: str
    ) -> None:
        """A status read: ``status`` None (the forge failed) keeps the stored status."""
        with self._open().write() as conn:
            conn.execute(
                "UPDATE proposals SET status = coalesce(?, status), forge_error = ?, "
                "status_checked_at = ? WHERE id = ?",
                (status, error, at, proposal_id),
            )

    def record_pull(self, proposal_id: str, number: int, url: str, status: str, at: str) -> None:
        with self._open().write() as conn:
            conn.execute(
                "UPDATE proposals SET pr_number = ?, pr_url = ?, status = ?, forge_error = NULL, "
                "status_checked_at = ? WHERE id = ?",
                (number, url, status, at, proposal_id),
            )

    def save_manifest(self, bundle_id: str, manifest: Manifest, at: str) -> None:
        with self._open().write() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO bundle_manifests (id, request_key, sections, created_at) "
                "VALUES (?, ?, ?, ?)",
                (bundle_id, manifest.request_key, json.dumps(manifest.sections), at),
            )

    def manifest(self, bundle_id: str) -> Manifest | None:
        with self._open().read() as conn:
            row = conn.execute(
                "SELECT request_key, sections FROM bundle_manifests WHERE id = ?", (bundle_id,)
            ).fetchone()
        return None if row is None else Manifest(str(row[0]), sections_of(row[1]))

    def prune_manifests(self, cutoff: str) -> int:
        with self._open().write() as conn:
            sql = "DELETE FROM bundle_manifests WHERE created_at < ?"
            return int(conn.execute(sql, (cutoff,)).rowcount)

    def save_replica(self, status: ReplicaStatus) -> None:
        """One node: its sync status is the index's own ``sync_state`` row."""

    def prune_replicas(self, cutoff: str) -> int:
        """One node: the index's own, never forgotten."""
        return 0

    def replicas(self) -> list[ReplicaStatus]:
        with self._open().read() as conn:
            saved = sync_state.load_sync(conn)
            fingerprint = sync_state.index_fingerprint(conn)
            commit = sync_state.synced_commit(conn)
        at, error = saved.get("last_sync_at"), saved.get("last_error")
        return [
            ReplicaStatus(
                "local",
                commit,
                fingerprint,
                at if isinstance(at, str) else "",
                error if isinstance(error, str) else None,
            )
        ]

    def save_access(self, line: str | None) -> None:
        """One node: no other replica to agree with."""

    def accesses(self, fresh_seconds: float) -> dict[str, str]:
        return {}

    def claim_deliveries(self, keys: Sequence[str], now: float, window: float) -> str | None:
        """One node: kept in this process (no other receives the webhook)."""
        with self._deliveries_lock:
            seen = self._deliveries
            for key in [k for k, at in seen.items() if at < now - window]:
                del seen[key]
            found = next((key for key in keys if key in seen), None)
            if found is None:
                seen.update(dict.fromkeys(keys, now))
            return found

    def broadcast(self, channel: str, payload: str) -> None:
        """One node: nobody else to tell."""

    def listen(self, channel: str, callback: Callable[[str], None]) -> None:
        self._listeners.setdefault(channel, []).append(callback)

    @contextlib.contextmanager
    def exclusive(self, name: str, wait: float = 0.0) -> Iterator[bool]:
        lock = self._locks.setdefault(name, threading.Lock())
        got = lock.acquire(timeout=wait) if wait > 0 else lock.acquire(blocking=False)
        try:
            yield got
        finally:
            if got:
                lock.release()

    def close(self) -> None:
        """The index is the API's to close."""


READ_ONLY = (
    "the index {path} is opened read-only ({why}): the query log, usage reports and proposals "
    "are not kept; search and bundles go on from it"
)
FULL = (
    "the index {path} is opened read-only: its disk is full (free disk space, and briefd "
    "writes it again); the query log and usage reports wait in memory meanwhile (lost if the "
    "server stops first), proposals are refused; search and bundles go on from it"
)
_WAITING = "proposal:"  # the key of a proposal record waiting for the index: + its id


def _waiting(store: Store, stored: set[str], status: str | None) -> list[Proposal]:
    """The proposals whose record waits for the index (not written since), of ``status``."""
    return [
        p
        for p in store.deferred_payloads(_WAITING)
        if isinstance(p, Proposal) and p.id not in stored and status in (None, p.status)
    ]


def proposal_row(p: Proposal) -> tuple[object, ...]:
    return (
        p.id,
        p.branch,
        p.doc_path,
        p.description,
        p.commit_hash,
        p.pr_url,
        p.status,
        p.client,
        p.created_at,
        p.pr_number,
        p.base_branch,
        p.base_commit,
        p.forge_error,
        p.status_checked_at,
        p.pushed_to,
    )


def sections_of(text: str) -> tuple[tuple[str, str, int], ...]:
    return tuple((str(c), str(f), int(t)) for c, f, t in json.loads(text))
