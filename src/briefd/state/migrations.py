"""The PostgreSQL schema of the shared state, as numbered migrations applied in order under an
advisory lock (replicas starting together migrate once). Times are ISO 8601 UTC text, as in
the SQLite index, so reports read both the same way."""

from __future__ import annotations

from dataclasses import dataclass

import psycopg

MIGRATION_LOCK = 7_361_901  # pg_advisory_xact_lock key while migrating


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "m001_shared_state",
        """
        CREATE TABLE state_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE query_log (
            id BIGSERIAL PRIMARY KEY,
            kind TEXT NOT NULL,
            query TEXT NOT NULL,
            scopes TEXT NOT NULL,
            results INTEGER NOT NULL,
            top_score DOUBLE PRECISION,
            latency_ms DOUBLE PRECISION NOT NULL,
            client TEXT,
            created_at TEXT NOT NULL,
            surface TEXT,
            gate TEXT,
            sections TEXT NOT NULL DEFAULT '[]',
            documents TEXT NOT NULL DEFAULT '[]',
            bundle_id TEXT,
            query_hash TEXT,
            replica TEXT
        );
        CREATE INDEX query_log_created ON query_log (created_at);
        CREATE TABLE usage_events (
            id BIGSERIAL PRIMARY KEY,
            bundle_id TEXT NOT NULL,
            chunk_id TEXT,
            useful INTEGER NOT NULL,
            client TEXT,
            created_at TEXT NOT NULL,
            replica TEXT
        );
        CREATE INDEX usage_events_created ON usage_events (created_at);
        CREATE TABLE proposals (
            id TEXT PRIMARY KEY,
            branch TEXT NOT NULL,
            doc_path TEXT NOT NULL,
            description TEXT NOT NULL,
            commit_hash TEXT,
            pr_url TEXT,
            status TEXT NOT NULL,
            client TEXT,
            created_at TEXT NOT NULL,
            pr_number INTEGER,
            base_branch TEXT,
            base_commit TEXT,
            forge_error TEXT,
            status_checked_at TEXT
        );
        CREATE INDEX proposals_status ON proposals (status);
        CREATE TABLE recall_injections (
            session_id TEXT NOT NULL,
            chunk_id TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            injected_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (session_id, chunk_id)
        );
        CREATE INDEX recall_injections_age ON recall_injections (injected_at);
        CREATE TABLE bundle_manifests (
            id TEXT PRIMARY KEY,
            request_key TEXT NOT NULL,
            sections TEXT NOT NULL,
            knowledge_commit TEXT,
            replica TEXT,
            created_at TEXT NOT NULL
        );
        CREATE INDEX bundle_manifests_created ON bundle_manifests (created_at);
        CREATE TABLE replicas (
            replica TEXT PRIMARY KEY,
            knowledge_commit TEXT,
            fingerprint TEXT,
            seen_at TEXT NOT NULL,
            last_error TEXT
        );
        """,
    ),
    Migration(
        2,
        "m002_webhook_deliveries",
        """
        CREATE TABLE webhook_deliveries (
            key TEXT PRIMARY KEY,
            received_at DOUBLE PRECISION NOT NULL,
            replica TEXT
        );
        CREATE INDEX webhook_deliveries_age ON webhook_deliveries (received_at);
        """,
    ),
    Migration(
        3,
        "m003_proposal_pushed_to",
        """
        -- the remote a proposal's branch was pushed to (its URL without user:token@)
        ALTER TABLE proposals ADD COLUMN pushed_to TEXT;
        """,
    ),
)


def migrate(conn: psycopg.Connection[tuple[object, ...]]) -> int:
    """Apply the migrations this database lacks (one transaction); the version it is at. A
    database already at the latest version is only read: a role with rights on briefd's
    tables but none to create any (its owner migrated it) uses it as it is."""
    latest = MIGRATIONS[-1].version
    with conn.transaction():
        found = conn.execute("SELECT to_regclass('state_migrations') IS NOT NULL").fetchone()
        if found and found[0]:
            row = conn.execute("SELECT coalesce(max(version), 0) FROM state_migrations").fetchone()
            if row and int(str(row[0])) >= latest:
                return int(str(row[0]))
    with conn.transaction():
        conn.execute("SELECT set_config('statement_timeout', '0', true)")  # a table rewritten
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS state_migrations (version INTEGER PRIMARY KEY, "
            "name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        row = conn.execute("SELECT coalesce(max(version), 0) FROM state_migrations").fetchone()
        current = int(str(row[0])) if row else 0
        for m in MIGRATIONS:
            if m.version > current:
                conn.execute(m.sql.encode())
                conn.execute(
                    "INSERT INTO state_migrations (version, name) VALUES (%s, %s)",
                    (m.version, m.name),
                )
                current = m.version
    return current
