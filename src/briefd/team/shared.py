"""Reports over a shared state (replicas): the team's query log and usage feedback — every
replica's, read from the shared state — become temporary tables on the report's own SQLite
connection. They shadow the index's tables of the same names there, so the reports' SQL
(:mod:`briefd.store.reports`) reads them unchanged, joined with this replica's index."""

from __future__ import annotations

from briefd.state import SharedState
from briefd.store.db import Store

_TABLES = ("query_log", "usage_events")


def mirror_team_log(store: Store, state: SharedState, since: str) -> None:
    """On ``store``'s connection (a report's own, see :func:`briefd.store.db.opened`): the
    shared query log and usage since ``since`` shadow the index's (one node: nothing to do)."""
    if not state.shared:
        return
    rows = {"query_log": state.query_rows(since), "usage_events": state.usage_rows(since)}
    with store.read() as conn:
        for table in _TABLES:
            conn.execute(f"DROP TABLE IF EXISTS temp.{table}")
            conn.execute(f"CREATE TEMP TABLE {table} AS SELECT * FROM main.{table} WHERE 0")
            if rows[table]:
                marks = ",".join("?" * len(rows[table][0]))
                conn.executemany(f"INSERT INTO temp.{table} VALUES ({marks})", rows[table])
        conn.execute("CREATE INDEX temp.query_log_hash ON query_log (query_hash, created_at)")
        # from the few usage reports to the entries of their bundles, as on the index
        conn.execute("CREATE INDEX temp.query_log_bundle ON query_log (bundle_id)")
