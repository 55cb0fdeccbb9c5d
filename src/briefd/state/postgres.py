"""The shared state in PostgreSQL (``state.url: postgresql://…``), for replicas behind a load
balancer: psycopg 3 with a connection pool, numbered migrations (:mod:`.migrations`),
``LISTEN/NOTIFY`` for broadcasts and transaction-scoped advisory locks for work one replica
does at a time.

Degraded, not down: when PostgreSQL does not answer, every call raises
:class:`StateUnavailableError` at once (after the first, which waited ``timeout_seconds``), so
callers keep serving from the local index; a thread probes the server every ``RETRY_SECONDS``
and, when it answers, opens the pool anew (:mod:`.pgconnection`). Nothing else is needed."""

from __future__ import annotations

import contextlib
import json
import logging
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import psycopg

from briefd.errors import StateUnavailableError, StoreError
from briefd.settings import StateSettings
from briefd.state.base import MISSED
from briefd.state.kept import Unshared
from briefd.state.local import QUERY_COLUMNS, USAGE_COLUMNS, proposal_row, sections_of
from briefd.state.model import REPLACES_ADOPTED, Manifest, Proposal, ReplicaStatus
from briefd.state.pgconnection import RETRY_SECONDS, Conn, PostgresConnection
from briefd.state.pgpool import waited_lock
from briefd.state.pgsaid import redacted as redacted  # the masked URL, as tests read it
from briefd.store.activity import QueryLogEntry, query_log_row, text_rules
from briefd.store.freshness import TEXT_MODES, modes_key

log = logging.getLogger("briefd.state")
LISTEN_POLL_SECONDS = 1.0
CATCH_UP_WAIT_SECONDS = 10.0  # a listener back waits this long for the prober's pool

_PROPOSAL_COLUMNS = (
    "id, branch, doc_path, description, commit_hash, pr_url, status, client, created_at, "
    "pr_number, base_branch, base_commit, forge_error, status_checked_at, pushed_to"
)
_SURROGATE = re.compile("[\ud800-\udfff]")
_ACCESS = "replica_access:"  # state_meta key of what a replica asks of its callers: + its name


class PostgresState(PostgresConnection):
    """:class:`~briefd.state.base.SharedState` in PostgreSQL; ``replica`` names this process
    (the connection, its failures and recovery: :class:`PostgresConnection`)."""

    engine = "postgresql"
    shared = True

    def __init__(self, settings: StateSettings, replica: str) -> None:
        super().__init__(settings, replica)
        # broadcasts name their process: one replica a name shared by mistake still hears
        self._sender = f"{replica}\t{uuid.uuid4().hex[:12]}"
        self._named_twice = False
        self._unshared = Unshared()  # what the server could not be told while it was away

    # -- the query log and usage

    def query_salt(self) -> bytes:
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO state_meta (key, value) VALUES ('query_log_salt', "
                "md5(random()::text || clock_timestamp()::text)) ON CONFLICT (key) DO NOTHING"
            )
            row = conn.execute(
                "SELECT value FROM state_meta WHERE key = 'query_log_salt'"
            ).fetchone()
        assert row is not None
        return bytes.fromhex(str(row[0]))

    def save_queries(self, entries: Sequence[QueryLogEntry], documents: Mapping[str, str]) -> None:
        if not entries:
            return
        rows = [(*query_log_row(e, documents, _storable), self.replica) for e in entries]
        with self._tx() as conn, conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO query_log (kind, query, scopes, results, top_score, latency_ms, "
                "client, created_at, surface, gate, sections, documents, bundle_id, "
                "query_hash, replica) VALUES "
                "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                rows,
            )

    def recent_queries(self, limit: int = 100) -> list[QueryLogEntry]:
        with self._tx() as conn:
            rows = conn.execute(
                "SELECT kind, query, scopes, results, top_score, latency_ms, client, "
                "created_at, surface, gate, sections, bundle_id, query_hash FROM query_log "
                "ORDER BY id DESC LIMIT %s",
                (max(0, limit),),
            ).fetchall()
        return [
            QueryLogEntry(
                kind=r[0],
                query=r[1],
                scopes=tuple(json.loads(r[2])),
                results=r[3],
                top_score=r[4],
                latency_ms=r[5],
                client=r[6],
                created_at=r[7],
                surface=r[8],
                gate=r[9],
                sections=tuple(json.loads(r[10])),
                bundle_id=r[11],
                query_hash=r[12],
            )
            for r in rows
        ]

    def query_rows(self, since: str) -> list[tuple[Any, ...]]:
        """Query log rows since ``since`` in the SQLite table's column order (for reports)."""
        with self._tx(long=True) as conn:
            sql = f"SELECT {QUERY_COLUMNS} FROM query_log WHERE created_at >= %s ORDER BY id"
            return conn.execute(sql.encode(), (since,)).fetchall()

    def usage_rows(self, since: str) -> list[tuple[Any, ...]]:
        with self._tx(long=True) as conn:
            sql = f"SELECT {USAGE_COLUMNS} FROM usage_events WHERE created_at >= %s ORDER BY id"
            return conn.execute(sql.encode(), (since,)).fetchall()

    def save_usage(
        self, bundle_id: str, chunk_ids: Sequence[str], client: str | None, at: str
    ) -> int:
        rows: list[tuple[str, str | None, int, str | None, str, str]] = [
            (bundle_id, c, 1, client, at, self.replica) for c in dict.fromkeys(chunk_ids)
        ]
        rows = rows or [(bundle_id, None, 0, client, at, self.replica)]
        with self._tx() as conn, conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO usage_events (bundle_id, chunk_id, useful, client, created_at, "
                "replica) VALUES (%s, %s, %s, %s, %s, %s)",
                rows,
            )
        return len(rows)

    def prune_before(self, cutoff: str) -> tuple[int, int]:
        with self._tx(long=True) as conn:
            queries = conn.execute("DELETE FROM query_log WHERE created_at < %s", (cutoff,))
            usage = conn.execute("DELETE FROM usage_events WHERE created_at < %s", (cutoff,))
            return queries.rowcount, usage.rowcount

    def text_hashes(self, hashes: Sequence[str]) -> set[str]:
        with self._tx(long=True) as conn:
            rows = conn.execute(
                "SELECT DISTINCT query_hash FROM query_log WHERE query_hash = ANY(%s) "
                "AND query <> ''",
                (list(hashes),),
            )
            return {str(r[0]) for r in rows}

    def forget_text(self, log_prompts: str, hook: str) -> int:
        modes = modes_key(log_prompts, hook)
        with self._tx(long=True) as conn:
            row = conn.execute("SELECT value FROM state_meta WHERE key = %s", (TEXT_MODES,))
            if (row.fetchone() or (None,))[0] == modes:
                return 0
            changed = sum(conn.execute(sql).rowcount for sql in text_rules(log_prompts, hook))
            conn.execute(
                "INSERT INTO state_meta (key, value) VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (TEXT_MODES, modes),
            )
            return changed

    def counts(self) -> dict[str, int]:
        with self._tx(long=True) as conn:
            found = {
                "queries_logged": _count(conn, "SELECT count(*) FROM query_log"),
                "usage_events": _count(conn, "SELECT count(*) FROM usage_events"),
            }
            for status, n in conn.execute("SELECT status, count(*) FROM proposals GROUP BY 1"):
                found[f"proposals_{status}"] = int(n)
        return found

    # -- proposals

    def save_proposal(self, proposal: Proposal) -> None:
        """Unbounded: it comes after the push, and a proposal pushed unrecorded is lost."""
        with self._tx(long=True) as conn:
            conn.execute(
                f"INSERT INTO proposals ({_PROPOSAL_COLUMNS}) VALUES "
                "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                + REPLACES_ADOPTED.replace("%", "%%"),  # a sync adopted its branch first
                proposal_row(proposal),
            )

    def proposals(self, status: str | None = None) -> list[Proposal]:
        where, args = ("WHERE status = %s", (status,)) if status else ("", ())
        sql = f"SELECT {_PROPOSAL_COLUMNS} FROM proposals {where} ORDER BY created_at DESC, id"
        with self._tx() as conn:
            return [Proposal(*row) for row in conn.execute(sql.encode(), args)]

    def open_pulls(self) -> list[Proposal]:
        return self._oldest_first("status = 'open' AND pr_number IS NOT NULL")

    def unfollowed(self) -> list[Proposal]:
        return self._oldest_first(
            "(status = 'pushed' AND pr_number IS NULL) OR (status = 'closed' AND pr_number > 0)"
        )

    def _oldest_first(self, where: str) -> list[Proposal]:
        sql = f"SELECT {_PROPOSAL_COLUMNS} FROM proposals WHERE {where} ORDER BY created_at, id"
        with self._tx() as conn:
            return [Proposal(*row) for row in conn.execute(sql.encode())]

    def record_check(
        self, proposal_id: str, status: str | None, error: str | None, at: str
    ) -> None:
        with self._tx() as conn:
            conn.execute(
                "UPDATE proposals SET status = coalesce(%s, status), forge_error = %s, "
                "status_checked_at = %s WHERE id = %s",
                (status, error, at, proposal_id),
            )

    def record_pull(self, proposal_id: str, number: int, url: str, status: str, at: str) -> None:
        with self._tx() as conn:
            conn.execute(
                "UPDATE proposals SET pr_number = %s, pr_url = %s, status = %s, "
                "forge_error = NULL, status_checked_at = %s WHERE id = %s",
                (number, url, status, at, proposal_id),
            )

    # -- recall sessions

    def seen(self, session_id: str, now: float, hours: float) -> dict[str, str]:
        """While the server is away, what this replica gave the session meanwhile (none:
        the error)."""
        try:
            return self._seen(session_id, now, hours)
        except StateUnavailableError:
            given = self._unshared.seen(session_id, now - hours * 3600)
            if given:
                return given
            raise

    def _seen(self, session_id: str, now: float, hours: float) -> dict[str, str]:
        with self._tx() as conn:
            rows = conn.execute(
                "SELECT chunk_id, content_hash FROM recall_injections "
                "WHERE session_id = %s AND injected_at >= %s",
                (session_id, now - hours * 3600),
            )
            return {str(r[0]): str(r[1]) for r in rows}

    def remember(
        self, session_id: str, sections: Sequence[tuple[str, str]], now: float, hours: float
    ) -> None:
        """While the server is away, kept here (this replica answers from it) and written
        when it is back; the caller is told it failed (the other replicas do not know it)."""
        try:
            self._remember([(session_id, c, d, now) for c, d in sections], now - hours * 3600)
        except StateUnavailableError:
            self._unshared.keep_injections(session_id, list(sections), now)
            raise

    def _remember(self, rows: Sequence[tuple[str, str, str, float]], expired: float) -> None:
        with self._tx() as conn, conn.cursor() as cur:
            cur.execute("DELETE FROM recall_injections WHERE injected_at < %s", (expired,))
            cur.executemany(
                "INSERT INTO recall_injections (session_id, chunk_id, content_hash, "
                "injected_at) VALUES (%s, %s, %s, %s) ON CONFLICT (session_id, chunk_id) DO "
                "UPDATE SET content_hash = excluded.content_hash, "
                "injected_at = greatest(recall_injections.injected_at, excluded.injected_at)",
                rows,
            )

    # -- bundle manifests

    def save_manifest(self, bundle_id: str, manifest: Manifest, at: str) -> None:
        """Keep what a bundle held for every replica; while the server is away, kept here and
        written when it answers again (the caller is still told it failed: until then the
        other replicas cannot resolve it)."""
        try:
            self._save_manifest(bundle_id, manifest, at)
        except StateUnavailableError:
            self._unshared.keep_manifest(bundle_id, manifest, at)
            raise

    def _share_kept(self) -> None:
        """Write what was kept while the server was away (best effort: kept on failure)."""
        kept = self._unshared.take()
        try:
            for bundle_id, (manifest, at) in kept.manifests.items():
                self._save_manifest(bundle_id, manifest, at)
            rows = [
                (session, chunk, digest, at)
                for session, given in kept.injections.items()
                for chunk, (digest, at) in given.items()
            ]
            if rows:
                self._remember(rows, 0.0)
        except StoreError as exc:
            self._unshared.give_back(kept)
            log.warning("could not share what was kept while it was away: %s", exc)

    def _save_manifest(self, bundle_id: str, manifest: Manifest, at: str) -> None:
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO bundle_manifests (id, request_key, sections, knowledge_commit, "
                "replica, created_at) VALUES (%s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (id) DO NOTHING",
                (
                    bundle_id,
                    manifest.request_key,
                    json.dumps(manifest.sections),
                    manifest.commit,
                    manifest.replica or self.replica,
                    at,
                ),
            )

    def manifest(self, bundle_id: str) -> Manifest | None:
        with self._tx() as conn:
            row = conn.execute(
                "SELECT request_key, sections, knowledge_commit, replica FROM bundle_manifests "
                "WHERE id = %s",
                (bundle_id,),
            ).fetchone()
        if row is None:
            return None
        return Manifest(str(row[0]), sections_of(row[1]), row[2], row[3])

    def prune_manifests(self, cutoff: str) -> int:
        with self._tx(long=True) as conn:
            return conn.execute(
                "DELETE FROM bundle_manifests WHERE created_at < %s", (cutoff,)
            ).rowcount

    # -- replicas and coordination

    def save_replica(self, status: ReplicaStatus) -> None:
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO replicas (replica, knowledge_commit, fingerprint, seen_at, "
                "last_error) VALUES (%s, %s, %s, %s, %s) ON CONFLICT (replica) DO UPDATE SET "
                "knowledge_commit = excluded.knowledge_commit, "
                "fingerprint = excluded.fingerprint, seen_at = excluded.seen_at, "
                "last_error = excluded.last_error",
                (
                    status.replica,
                    status.commit,
                    status.fingerprint,
                    status.seen_at,
                    status.last_error,
                ),
            )

    def prune_replicas(self, cutoff: str) -> int:
        with self._tx(long=True) as conn:
            return conn.execute("DELETE FROM replicas WHERE seen_at < %s", (cutoff,)).rowcount

    def replicas(self) -> list[ReplicaStatus]:
        with self._tx() as conn:
            rows = conn.execute(
                "SELECT replica, knowledge_commit, fingerprint, seen_at, last_error "
                "FROM replicas ORDER BY replica"
            ).fetchall()
        return [ReplicaStatus(*row) for row in rows]

    def save_access(self, line: str | None) -> None:
        """Say what this replica asks of its callers (``None``: it stopped), stamped with the
        server's clock (replicas' own clocks may disagree)."""
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO state_meta (key, value) VALUES (%s, %s || chr(9) || "
                "floor(extract(epoch FROM now()))::bigint) ON CONFLICT (key) DO UPDATE SET "
                "value = excluded.value",
                (_ACCESS + self.replica, line or ""),
            )

    def accesses(self, fresh_seconds: float) -> dict[str, str]:
        """What each replica that said so within ``fresh_seconds`` asks of its callers."""
        with self._tx() as conn:
            rows = conn.execute(
                "SELECT substr(key, %s), split_part(value, chr(9), 1) FROM state_meta "
                "WHERE left(key, %s) = %s AND split_part(value, chr(9), 1) <> '' AND "
                "split_part(value, chr(9), 2) ~ '^[0-9]+$' AND "
                "split_part(value, chr(9), 2)::bigint >= extract(epoch FROM now()) - %s",
                (len(_ACCESS) + 1, len(_ACCESS), _ACCESS, fresh_seconds),
            ).fetchall()
        return {str(r[0]): str(r[1]) for r in rows}

    def claim_deliveries(self, keys: Sequence[str], now: float, window: float) -> str | None:
        """Race-free across replicas: a key another replica inserts meanwhile waits for its
        transaction, then counts as seen."""
        with self._tx() as conn:
            conn.execute("DELETE FROM webhook_deliveries WHERE received_at < %s", (now - window,))
            fresh: set[str] = set()
            for key in keys:
                row = conn.execute(
                    "INSERT INTO webhook_deliveries (key, received_at, replica) "
                    "VALUES (%s, %s, %s) ON CONFLICT (key) DO NOTHING RETURNING key",
                    (key, now, self.replica),
                ).fetchone()
                fresh.update([str(row[0])] if row else [])
            found = next((key for key in keys if key not in fresh), None)
            if found is not None and fresh:  # a replay records nothing
                conn.execute("DELETE FROM webhook_deliveries WHERE key = ANY(%s)", (list(fresh),))
            return found

    def broadcast(self, channel: str, payload: str) -> None:
        with self._tx() as conn:
            conn.execute("SELECT pg_notify(%s, %s)", (channel, f"{self._sender}\n{payload}"))

    def listen(self, channel: str, callback: Callable[[str], None]) -> None:
        """A daemon thread on a connection of its own; it reconnects after a failure, and
        then calls ``callback`` once with :data:`~briefd.state.base.MISSED` (what was
        broadcast meanwhile never reached it: a sync a webhook asked for while PostgreSQL
        was away, whose broadcast failed, is caught up)."""
        thread = threading.Thread(
            target=self._listen, args=(channel, callback), name=f"briefd-listen-{channel}"
        )
        thread.daemon = True
        thread.start()

    def _listen(self, channel: str, callback: Callable[[str], None]) -> None:
        lost = False  # not listening for a while: broadcasts may have been missed
        while not self._closed.is_set():
            try:
                with psycopg.connect(
                    self.url, autocommit=True, connect_timeout=self._connect_timeout()
                ) as conn:
                    conn.execute(f'LISTEN "{channel}"'.encode())
                    if lost:
                        lost = False
                        self._until_answering()
                        _call(callback, MISSED)
                    while not self._closed.is_set():
                        for note in conn.notifies(timeout=LISTEN_POLL_SECONDS):
                            sender, _, payload = note.payload.partition("\n")
                            if sender != self._sender:
                                self._check_name(sender)
                                _call(callback, payload)
            except psycopg.Error as exc:
                lost = True
                log.debug("listening on %s: %s", channel, exc)
                self._closed.wait(RETRY_SECONDS)

    def _until_answering(self) -> None:
        """Wait (a few seconds at most) for the prober to let calls through again: the catch-up
        a listener starts at its reconnect records this replica's status through them."""
        deadline = time.monotonic() + CATCH_UP_WAIT_SECONDS
        while self._problem is not None and time.monotonic() < deadline:
            if self._closed.wait(0.1):
                return

    def _check_name(self, sender: str) -> None:
        """Say (once) that another replica goes by this one's name: they share one row of
        replica status, and replicas before this release skip each other's broadcasts."""
        if sender.partition("\t")[0] == self.replica and not self._named_twice:
            self._named_twice = True
            log.warning(
                "another replica is also named %r (state.replica): give each its own name",
                self.replica,
            )

    @contextlib.contextmanager
    def exclusive(self, name: str, wait: float = 0.0) -> Iterator[bool]:
        """A transaction-scoped advisory lock: released when the block ends, or when this
        replica dies (its connection goes with it; not when it is frozen, hence the bounded
        wait: PostgreSQL's ``lock_timeout``, inside a savepoint the timeout rolls back)."""
        with self._tx(own=True) as conn:
            if wait > 0:
                yield waited_lock(conn, f"briefd:{name}", wait)
                return
            row = conn.execute(
                "SELECT pg_try_advisory_xact_lock(hashtext(%s))", (f"briefd:{name}",)
            ).fetchone()
            yield bool(row and row[0])


def _count(conn: Conn, sql: str) -> int:
    row = conn.execute(sql.encode()).fetchone()
    return int(row[0]) if row else 0


def _storable(text: str) -> str:
    return _SURROGATE.sub("\ufffd", text).replace("\x00", "\ufffd")


def _call(callback: Callable[[str], None], payload: str) -> None:
    try:
        callback(payload)
    except Exception:  # a listener's bug must not stop listening
        log.exception("state listener failed")
