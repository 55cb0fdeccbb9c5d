"""The service's own record: the query log (read by the gaps report, T3) with its privacy
rules (T6: ``activity.log_prompts``, ``activity.retention_days``) and the persisted service
counters (I4), plus the index overview for ``/api/stats``."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from briefd.errors import StoreError
from briefd.settings import ActivitySettings
from briefd.state import SharedState
from briefd.store import activity, queryhash, reports
from briefd.store.activity import QueryLogEntry
from briefd.store.db import Store
from briefd.team.period import shown_since

WAIT_MS = 200  # query log and counters: the service keeps them and retries later
RESET_WAIT_MS = 3_000  # a reset (a person clicking) waits this long for a sync's write
WHAT_IS_LOGGED = (
    "the query log holds what `briefd serve`, `briefd mcp` and the recall daemon answer "
    "(searches and bundles over MCP and REST, hook prompts); `briefd search`, `briefd "
    "bundle` and hook prompts answered in the hook's own process (while the daemon starts, "
    "or with recall.daemon off) are not logged"
)


def nothing_logged(since: str, now: datetime | None = None) -> str:
    """What an empty window of the query log means (gaps and usage reports): a window that
    starts after ``now`` (``--since 2027-01-31`` typed for 2026) holds nothing whatever is
    logged, which the log's coverage would not explain."""
    now = now or datetime.now(UTC)
    try:
        starts = datetime.fromisoformat(since)
    except ValueError:
        starts = None
    if starts is not None and starts.tzinfo is not None and starts > now:
        return (
            f"Nothing can be logged since {shown_since(since)}: that is after now "
            f"({now:%Y-%m-%d %H:%M} UTC); give an earlier date, or a span such as 30d."
        )
    return f"Nothing was logged since {shown_since(since)}: {WHAT_IS_LOGGED}."


def log_queries(
    store: Store, entries: Sequence[QueryLogEntry], settings: ActivitySettings, state: SharedState
) -> None:
    """Append searches, bundles and hook prompts to the query log — their text kept, hashed
    or left out as ``settings`` say — and prune what is older than the retention period; a
    busy index (or an unreachable shared state) raises after ``WAIT_MS`` (the caller keeps the
    entries and retries)."""
    if not state.shared:  # one node: one transaction on the index, as always
        with store.write(wait_ms=WAIT_MS, durable=False) as conn:
            if entries:
                salt = queryhash.query_salt(conn)
                activity.save_queries(conn, [as_logged(e, settings, salt) for e in entries])
            prune(conn, settings)
        return
    # the upkeep first: failing after the entries were saved, it would have them kept for the
    # next flush and saved again, every flush while it fails (a role that may not DELETE)
    state.forget_text(settings.log_prompts, prompt_mode("recall", settings))
    if settings.retention_days > 0:
        state.prune_before(cutoff_of(settings))
    if entries:
        salt = state.query_salt()
        with store.read() as conn:  # the documents of the sections, as indexed here
            where = reports.section_info(conn, {c for e in entries for c in e.sections})
        documents = {c: info.doc_path for c, info in where.items()}
        state.save_queries([as_logged(e, settings, salt) for e in entries], documents)


def prompt_mode(kind: str, settings: ActivitySettings) -> str:
    """How the text of a ``kind`` request is logged: hook prompts (``recall``) follow the
    stricter of ``log_prompts`` and ``log_hook_prompts``."""
    return settings.hook_mode if kind == "recall" else settings.log_prompts


def as_logged(entry: QueryLogEntry, settings: ActivitySettings, salt: bytes) -> QueryLogEntry:
    """``entry`` as it may be stored: full text and its hash, the hash alone, or neither."""
    mode = prompt_mode(entry.kind, settings)
    if mode == "off":
        return replace(entry, query="", query_hash=None)
    hashed = queryhash.query_hash(entry.query, salt)
    return replace(entry, query=entry.query if mode == "full" else "", query_hash=hashed)


def prune(conn: sqlite3.Connection, settings: ActivitySettings) -> tuple[int, int]:
    """Delete query log entries and usage feedback older than ``retention_days`` (0: keep
    everything); how many of each went. Entries logged before ``log_prompts`` or
    ``log_hook_prompts`` became stricter lose what the settings no longer keep first."""
    activity.forget_text(conn, settings.log_prompts, prompt_mode("recall", settings))
    if settings.retention_days <= 0:
        return 0, 0
    return activity.prune_before(conn, cutoff_of(settings))


def prune_shared_vectors(store: Store, state: SharedState) -> None:
    """Replicas: drop the vectors of phrasings (kept in this index by the gaps report) that the
    shared query log no longer holds in full — pruned past retention, or logged hashed since;
    this index's own log, which :func:`prune` follows, is empty there."""
    with store.read() as conn:
        kept = activity.vector_hashes(conn)
    if not kept:
        return
    gone = sorted(set(kept) - state.text_hashes(kept))
    if gone:
        with store.write(wait_ms=WAIT_MS, durable=False) as conn:
            activity.forget_vectors(conn, gone)


def cutoff_of(settings: ActivitySettings) -> str:
    cutoff = datetime.now(UTC) - timedelta(days=settings.retention_days)
    return cutoff.isoformat(timespec="seconds")


def overview(store: Store, state: SharedState) -> dict[str, object]:
    """Index size, last index run, sync sources, proposal and usage counts (I2 stats); the
    counts of a shared state are the team's (every replica's), not this index's, and None
    with ``state_error`` while it cannot be reached or refuses this replica."""
    with store.read() as conn:
        found = activity.overview(conn)
    if not state.shared:  # the index's own, with the proposals whose record waits for it
        counts = state.counts()
    else:
        try:
            counts = state.counts()
        except StoreError as exc:  # away or refusing: the index's own figures still answer
            found.update(proposals=None, usage_events=None, queries_logged=None)
            found["state_error"] = str(exc)
            return found
        found["usage_events"] = counts["usage_events"]
        found["queries_logged"] = counts["queries_logged"]
    found["proposals"] = {"open": 0, "merged": 0, "closed": 0} | {
        key.removeprefix("proposals_"): n
        for key, n in counts.items()
        if key.startswith("proposals_")  # local and pushed too, as on one node
    }
    return found


def counters(store: Store) -> dict[tuple[str, str], float]:
    """Persisted service counters keyed by (name, labels JSON)."""
    with store.read() as conn:
        return activity.load_counters(conn)


def save_counters(store: Store, values: dict[tuple[str, str], float], reset: bool) -> None:
    """Add counter increments to the stored values; ``reset`` forgets the stored ones first
    and records when."""
    with store.write(wait_ms=RESET_WAIT_MS if reset else WAIT_MS) as conn:
        activity.store_counters(conn, values, replace=reset)
        if reset:
            activity.mark_counters_reset(conn, activity.now_iso())
