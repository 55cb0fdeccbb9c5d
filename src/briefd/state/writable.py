"""Whether PostgreSQL would take briefd's writes: a server that answers ``SELECT 1`` may still
refuse every write (a standby, a read-only database or user, rights revoked), and health said
"ok" meanwhile. Read from the server's settings and grants; nothing is written."""

from __future__ import annotations

from typing import Any

import psycopg


def unwritable(conn: psycopg.Connection[Any]) -> str | None:
    """Why briefd's writes would be refused (a read-only database or server, rights missing on
    its tables), or None; read from the server's settings and grants, nothing written."""
    row = conn.execute(_WRITABLE).fetchone()
    assert row is not None
    read_only, missing = row
    if read_only == "on":
        return (
            "the shared state refuses writes: its transactions are read-only (a standby, or "
            "default_transaction_read_only set on the database or the user in state.url); the "
            "query log, usage, proposals and recall sessions cannot be saved until it takes "
            "writes (point state.url at the primary, or set default_transaction_read_only off)"
        )
    if missing:
        return (
            f"the shared state refuses writes: the user in state.url lacks {missing} (connect "
            "as the role that created briefd's tables, or grant the user in state.url those "
            "rights)"
        )
    return None


_WRITES = {  # what briefd does to each of its tables
    "state_meta": ("INSERT", "UPDATE"),
    "query_log": ("INSERT", "DELETE"),
    "usage_events": ("INSERT", "DELETE"),
    "proposals": ("INSERT", "UPDATE"),
    "recall_injections": ("INSERT", "UPDATE", "DELETE"),
    "bundle_manifests": ("INSERT", "DELETE"),
    "replicas": ("INSERT", "UPDATE", "DELETE"),
    "webhook_deliveries": ("INSERT", "DELETE"),
}
_RIGHTS = ", ".join(f"('{t}', '{p}')" for t, ps in _WRITES.items() for p in ps)
_WRITABLE = (
    "SELECT current_setting('transaction_read_only'), (SELECT string_agg(p || ' on ' || t, "
    f"', ') FROM (VALUES {_RIGHTS}, (pg_get_serial_sequence('query_log', 'id'), 'USAGE'), "
    "(pg_get_serial_sequence('usage_events', 'id'), 'USAGE')) AS w (t, p) WHERE NOT CASE "
    "p WHEN 'USAGE' THEN has_sequence_privilege(t, p) ELSE has_table_privilege(t, p) END)"
)
