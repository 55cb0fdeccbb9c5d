"""What agents did with the index: usage feedback (T2), the query log (for the gaps report, T3),
persisted service counters (I4) and dismissed link suggestions (T5). SQL only (the rules are in
:mod:`briefd.team`); the callers own the transaction."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from briefd.store import freshness, sync_state
from briefd.store.documents import set_meta
from briefd.store.reports import section_info


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True, slots=True)
class QueryLogEntry:
    """One search, bundle or hook prompt as the service saw it: ``surface`` (mcp, rest, hook),
    the gate's verdict, the chunk ids served, the bundle's id; ``query_hash`` is the salted
    hash of the query's grouping key and ``query`` is empty when prompts are not logged in
    full (``activity.log_prompts``)."""

    kind: str  # search | bundle | recall
    query: str
    scopes: tuple[str, ...]
    results: int
    top_score: float | None
    latency_ms: float
    client: str | None
    created_at: str
    surface: str | None = None
    gate: str | None = None
    sections: tuple[str, ...] = ()
    bundle_id: str | None = None
    query_hash: str | None = None


@dataclass(frozen=True, slots=True)
class UsageReceipt:
    """What ``report_usage`` stored; ``unknown_chunk_ids`` are not in the current index (they
    are stored anyway: the index may have changed since the bundle was compiled)."""

    bundle_id: str
    stored: int
    useful_chunk_ids: tuple[str, ...]
    unknown_chunk_ids: tuple[str, ...]


def existing_chunk_ids(conn: sqlite3.Connection, ids: Sequence[str]) -> set[str]:
    """Those of ``ids`` that are chunks of the current index."""
    marks = ",".join("?" * len(ids))
    return {r[0] for r in conn.execute(f"SELECT id FROM chunks WHERE id IN ({marks})", tuple(ids))}


def documents_for_suggestions(conn: sqlite3.Connection) -> list[sqlite3.Row]:
    """Every document's names, body and headings (for unlinked mentions), by path."""
    return conn.execute(
        "SELECT id, path, title, aliases, body, body_start_line, content_hash, headings "
        "FROM documents ORDER BY path"
    ).fetchall()


def link_targets(conn: sqlite3.Connection) -> dict[int, set[str]]:
    """The documents each document (by id) links to."""
    links: dict[int, set[str]] = {}
    for r in conn.execute("SELECT doc_id, target_path FROM links WHERE target_path IS NOT NULL"):
        links.setdefault(r["doc_id"], set()).add(r["target_path"])
    return links


def save_usage(
    conn: sqlite3.Connection,
    bundle_id: str,
    useful_chunk_ids: Sequence[str],
    client: str | None,
    created_at: str,
) -> int:
    """One row per useful chunk; a report naming no chunk is stored as one row saying so."""
    rows: list[tuple[str, str | None, int, str | None, str]] = [
        (bundle_id, c, 1, client, created_at) for c in dict.fromkeys(useful_chunk_ids)
    ]
    if not rows:
        rows = [(bundle_id, None, 0, client, created_at)]
    conn.executemany(
        "INSERT INTO usage_events (bundle_id, chunk_id, useful, client, created_at) "
        "VALUES (?, ?, ?, ?, ?)",
        rows,
    )
    return len(rows)


def save_queries(
    conn: sqlite3.Connection,
    entries: Sequence[QueryLogEntry],
    documents: Mapping[str, str] | None = None,
) -> None:
    """Append entries; each also records the documents its sections belong to (as indexed
    now), so the usage report counts documents without joining every section. Text that is
    not valid Unicode (a lone surrogate that got past the front ends) is stored with U+FFFD in
    its place, so one entry never blocks the rest. ``documents`` (chunk id → path) replaces
    the lookup in this index."""
    if documents is None:
        where = section_info(conn, {c for e in entries for c in e.sections})
        documents = {c: info.doc_path for c, info in where.items()}
    conn.executemany(
        "INSERT INTO query_log (kind, query, scopes, results, top_score, latency_ms, client, "
        "created_at, surface, gate, sections, documents, bundle_id, query_hash) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [query_log_row(e, documents) for e in entries],
    )


_SURROGATE = re.compile("[\ud800-\udfff]")


def _storable(text: str) -> str:
    return _SURROGATE.sub("\ufffd", text)


def query_log_row(
    e: QueryLogEntry, documents: Mapping[str, str], storable: Callable[[str], str] = _storable
) -> tuple[object, ...]:
    """The ``query_log`` columns of one entry, in the order both state engines insert them
    (``storable`` cleans text the engine cannot hold)."""
    return (
        e.kind,
        storable(e.query),
        json.dumps(list(e.scopes)),
        e.results,
        e.top_score,
        e.latency_ms,
        storable(e.client) if e.client is not None else None,
        e.created_at,
        e.surface or surface_of(e.client),
        e.gate,
        json.dumps(list(e.sections)),
        json.dumps(sorted({documents[c] for c in e.sections if c in documents})),
        e.bundle_id,
        e.query_hash,
    )


def surface_of(client: str | None) -> str:
    """The surface of an entry that does not name one (logged before surfaces were)."""
    return client if client in ("mcp", "hook") else "rest"


def prune_before(conn: sqlite3.Connection, cutoff: str) -> tuple[int, int]:
    """Delete query log entries and usage feedback created before ``cutoff`` (ISO 8601 UTC),
    and the vectors of phrasings no longer logged; how many entries and usage rows went. Their
    bytes are overwritten in the file, whatever the SQLite build's default (secure_delete)."""
    default = conn.execute("PRAGMA secure_delete").fetchone()[0]
    conn.execute("PRAGMA secure_delete = ON")
    try:
        queries = conn.execute("DELETE FROM query_log WHERE created_at < ?", (cutoff,)).rowcount
        usage = conn.execute("DELETE FROM usage_events WHERE created_at < ?", (cutoff,)).rowcount
        if queries:
            conn.execute(
                "DELETE FROM query_vectors WHERE query_hash NOT IN "
                "(SELECT query_hash FROM query_log WHERE query_hash IS NOT NULL)"
            )
    finally:
        conn.execute(f"PRAGMA secure_delete = {int(default)}")
    return queries, usage


def text_rules(log_prompts: str, hook: str) -> list[str]:
    """The statements that take out of the query log what ``log_prompts`` (searches and
    bundles) and ``hook`` (hook prompts) no longer let it hold: the text of entries now logged
    ``hashed``, the text and hash of those now logged ``off`` (plain SQL both state engines
    run)."""
    rules = []
    for mode, kinds in ((log_prompts, "kind <> 'recall'"), (hook, "kind = 'recall'")):
        if mode == "hashed":
            rules.append(f"UPDATE query_log SET query = '' WHERE {kinds} AND query <> ''")
        elif mode == "off":
            rules.append(
                "UPDATE query_log SET query = '', query_hash = NULL "
                f"WHERE {kinds} AND (query <> '' OR query_hash IS NOT NULL)"
            )
    return rules


def forget_text(conn: sqlite3.Connection, log_prompts: str, hook: str) -> int:
    """Bring entries logged under looser settings to ``log_prompts`` and ``hook`` (see
    :func:`text_rules`), and drop the vectors of phrasings no longer logged in full; how many
    entries changed. Runs once per change of the settings (:data:`~briefd.store.freshness.TEXT_MODES`); the old text is
    overwritten in the file (secure_delete), as a pruned entry's is."""
    modes = freshness.modes_key(log_prompts, hook)
    if freshness.text_modes(conn) == modes:
        return 0
    default = conn.execute("PRAGMA secure_delete").fetchone()[0]
    conn.execute("PRAGMA secure_delete = ON")
    try:
        changed = sum(conn.execute(sql).rowcount for sql in text_rules(log_prompts, hook))
        if changed:
            conn.execute(
                "DELETE FROM query_vectors WHERE query_hash NOT IN (SELECT query_hash FROM "
                "query_log WHERE query <> '' AND query_hash IS NOT NULL)"
            )
    finally:
        conn.execute(f"PRAGMA secure_delete = {int(default)}")
    set_meta(conn, freshness.TEXT_MODES, modes)
    return changed


def text_hashes(conn: sqlite3.Connection, hashes: Sequence[str]) -> set[str]:
    """Those of ``hashes`` that entries logged with their text still have."""
    found: set[str] = set()
    for start in range(0, len(hashes), 500):  # SQLite's limit on parameters
        part = hashes[start : start + 500]
        sql = (
            f"SELECT DISTINCT query_hash FROM query_log WHERE query_hash IN "
            f"({','.join('?' * len(part))}) AND query <> ''"
        )
        found.update(r[0] for r in conn.execute(sql, tuple(part)))
    return found


def vector_hashes(conn: sqlite3.Connection) -> list[str]:
    """The query hashes of the phrasing vectors the gaps report kept."""
    return [r[0] for r in conn.execute("SELECT DISTINCT query_hash FROM query_vectors")]


def forget_vectors(conn: sqlite3.Connection, hashes: Sequence[str]) -> None:
    """Delete the vectors of these phrasings, their bytes overwritten (secure_delete)."""
    default = conn.execute("PRAGMA secure_delete").fetchone()[0]
    conn.execute("PRAGMA secure_delete = ON")
    try:
        conn.executemany("DELETE FROM query_vectors WHERE query_hash = ?", [(h,) for h in hashes])
    finally:
        conn.execute(f"PRAGMA secure_delete = {int(default)}")


def recent_queries(conn: sqlite3.Connection, limit: int = 100) -> list[QueryLogEntry]:
    rows = conn.execute(
        "SELECT * FROM query_log ORDER BY id DESC LIMIT ?", (max(0, limit),)
    ).fetchall()
    return [
        QueryLogEntry(
            kind=r["kind"],
            query=r["query"],
            scopes=tuple(json.loads(r["scopes"])),
            results=r["results"],
            top_score=r["top_score"],
            latency_ms=r["latency_ms"],
            client=r["client"],
            created_at=r["created_at"],
            surface=r["surface"],
            gate=r["gate"],
            sections=tuple(json.loads(r["sections"])),
            bundle_id=r["bundle_id"],
            query_hash=r["query_hash"],
        )
        for r in rows
    ]


def load_counters(conn: sqlite3.Connection) -> dict[tuple[str, str], float]:
    """Persisted counter values keyed by (name, labels as canonical JSON)."""
    rows = conn.execute("SELECT name, labels, value FROM counters")
    return {(r["name"], r["labels"]): float(r["value"]) for r in rows}


def store_counters(
    conn: sqlite3.Connection, values: dict[tuple[str, str], float], replace: bool = False
) -> None:
    """Add increments to the stored counters (every process serving the index adds its own);
    ``replace`` first forgets every stored one (a reset)."""
    if replace:
        conn.execute("DELETE FROM counters")
    conn.executemany(
        "INSERT INTO counters (name, labels, value) VALUES (?, ?, ?) "
        "ON CONFLICT (name, labels) DO UPDATE SET value = value + excluded.value",
        [(name, labels, value) for (name, labels), value in values.items()],
    )


def counters_reset_at(conn: sqlite3.Connection) -> str | None:
    row = conn.execute("SELECT value FROM counters_meta WHERE key = 'reset_at'").fetchone()
    return str(row["value"]) if row else None


def mark_counters_reset(conn: sqlite3.Connection, at: str) -> None:
    conn.execute(
        "INSERT INTO counters_meta (key, value) VALUES ('reset_at', ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (at,),
    )


def dismissed_links(conn: sqlite3.Connection) -> set[tuple[str, str]]:
    rows = conn.execute("SELECT doc_path, target_path FROM link_dismissals")
    return {(r["doc_path"], r["target_path"]) for r in rows}


def dismiss_link(conn: sqlite3.Connection, doc_path: str, target_path: str, at: str) -> None:
    conn.execute(
        "INSERT OR IGNORE INTO link_dismissals (doc_path, target_path, created_at) "
        "VALUES (?, ?, ?)",
        (doc_path, target_path, at),
    )


def follow_renames(conn: sqlite3.Connection, renamed: Mapping[str, str]) -> None:
    """Dismissed suggestions follow their documents to their new paths (old → new), as the
    document dismissed for and as the target dismissed."""
    for old, new in renamed.items():
        for column in ("doc_path", "target_path"):
            conn.execute(
                f"UPDATE OR IGNORE link_dismissals SET {column} = ? WHERE {column} = ?", (new, old)
            )
        conn.execute(
            "DELETE FROM link_dismissals WHERE doc_path = ? OR target_path = ?", (old, old)
        )


def overview(conn: sqlite3.Connection) -> dict[str, object]:
    """Index contents and service tables at a glance (``/api/stats``, the dashboard)."""
    one = conn.execute
    state = sync_state.rows(conn)
    index_row = next((r for r in state if r["source"] == sync_state.INDEX_ROW), None)
    report = json.loads(index_row["last_report"]) if index_row else {}
    proposals = {"open": 0, "merged": 0, "closed": 0}
    for r in one("SELECT status, count(*) AS n FROM proposals GROUP BY status"):
        proposals[r["status"]] = r["n"]
    return {
        "documents": one("SELECT count(*) FROM documents").fetchone()[0],
        "chunks": one("SELECT count(*) FROM chunks").fetchone()[0],
        "vectors": one("SELECT count(*) FROM chunk_vectors").fetchone()[0],
        "fingerprint": index_row["index_fingerprint"] if index_row else None,
        "last_indexed_at": index_row["last_sync_at"] if index_row else None,
        "skipped": report.get("skipped", []),
        "problems": report.get("problems", []),
        "sources": [
            {
                "source": r["source"],
                "last_commit": _commit(conn, r),
                "last_sync_at": r["last_sync_at"],
                "last_error": r["last_error"],
                "kind": _kind(r),
            }
            for r in state
        ],
        "proposals": proposals,
        "usage_events": one("SELECT count(*) FROM usage_events").fetchone()[0],
        "queries_logged": one("SELECT count(*) FROM query_log").fetchone()[0],
        "counters_reset_at": counters_reset_at(conn),
    }


def _commit(conn: sqlite3.Connection, row: sqlite3.Row) -> str | None:
    """The row's commit; for the index row, the one checked out when its documents were read
    (a checkout indexed by `briefd index` and served with `--no-index` has no sync's); for the
    sync's, the commit it serves (:func:`sync_state.synced_commit`: never a step behind the
    documents)."""
    if row["source"] == sync_state.SYNC_ROW:
        return sync_state.synced_commit(conn)
    if row["last_commit"] or row["source"] != sync_state.INDEX_ROW:
        return str(row["last_commit"]) if row["last_commit"] else None
    return freshness.served_commit(conn) or None


def _kind(row: sqlite3.Row) -> str | None:
    """What the sync row's source is (clone, checkout, directory: a folder without git; none:
    it could not be resolved), as its last sync said; None for the index row."""
    if row["source"] != sync_state.SYNC_ROW:
        return None
    try:
        kind = json.loads(row["last_report"] or "{}").get("kind")
    except (ValueError, AttributeError):
        return None
    return kind if isinstance(kind, str) else None
