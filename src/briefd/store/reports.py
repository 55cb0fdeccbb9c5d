"""SQL of the team's reports on the query log and usage feedback (T3, T6): query groups for
the gaps report, served sections and feedback for the usage report, requests per day. The
rules (grouping, ranking) are in :mod:`briefd.team`; the callers own the transaction."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

# Served from the index query_log_groups alone (no table rows read): 100,000 entries in ~0.1 s.
GROUPS_SQL = """
SELECT query_hash AS key, count(*) AS asked, sum(results = 0) AS empty,
       sum(coalesce(gate, '') = 'empty') AS gated, sum(coalesce(gate, '') = 'generic') AS generic,
       max(top_score) AS best,
       max(CASE WHEN kind = 'search' THEN top_score END) AS best_search,
       max(CASE WHEN kind = 'bundle' THEN top_score END) AS best_bundle,
       max(CASE WHEN kind = 'recall' THEN top_score END) AS best_recall,
       sum(surface = 'mcp') AS mcp, sum(surface = 'rest') AS rest, sum(surface = 'hook') AS hook,
       group_concat(DISTINCT kind) AS kinds, min(created_at) AS first_at,
       max(created_at) AS last_at
FROM query_log
WHERE query_hash IS NOT NULL AND created_at >= ?
GROUP BY query_hash
"""

# a section reported useful (the tracker issue heading a bundle is the caller's own text: that
# it helped says nothing of the knowledge)
USEFUL_SQL = """
SELECT DISTINCT q.query_hash FROM usage_events u
CROSS JOIN query_log q ON q.bundle_id = u.bundle_id  -- from the few reports to their entries
WHERE u.useful = 1 AND u.chunk_id NOT LIKE 'issue:%' AND q.query_hash IS NOT NULL
  AND q.created_at >= ?
"""

# per query hash, the "nothing helped" reports (report_usage naming no section) on bundles its
# entries got with sections in them: a client's retry in the same second is one report
UNHELPED_SQL = """
SELECT q.query_hash, count(DISTINCT json_array(u.bundle_id, u.client, u.created_at))
FROM usage_events u
CROSS JOIN query_log q ON q.bundle_id = u.bundle_id  -- from the few reports to their entries
WHERE u.useful = 0 AND u.created_at >= ? AND q.query_hash IS NOT NULL AND q.results > 0
  AND q.created_at >= ?
GROUP BY q.query_hash
"""


@dataclass(frozen=True, slots=True)
class QueryGroup:
    """Log entries sharing a query hash since a cutoff: how often asked, how often empty or
    emptied by the gate, the best top score, per surface; ``bests`` the best top score per
    kind (a hook prompt's BM25 score and a search's fused one are on scales of their own)."""

    key: str
    asked: int
    empty: int
    gated: int
    best: float | None
    surfaces: dict[str, int]
    kinds: tuple[str, ...]
    first_at: str
    last_at: str
    bests: dict[str, float] = field(default_factory=dict)
    generic: int = 0  # hook prompts nothing matched that recall read as everyday chatter


KINDS = ("search", "bundle", "recall")


@dataclass(frozen=True, slots=True)
class SectionInfo:
    chunk_id: str
    doc_path: str
    heading: str  # the breadcrumb, "Title › Heading"


def query_groups(conn: sqlite3.Connection, since: str) -> list[QueryGroup]:
    """Every group of logged queries since ``since``."""
    return [
        QueryGroup(
            key=r["key"],
            asked=r["asked"],
            empty=r["empty"],
            gated=r["gated"],
            best=r["best"],
            surfaces={s: r[s] for s in ("mcp", "rest", "hook") if r[s]},
            kinds=tuple(sorted(set((r["kinds"] or "").split(",")))),
            first_at=r["first_at"],
            last_at=r["last_at"],
            bests={k: r[f"best_{k}"] for k in KINDS if r[f"best_{k}"] is not None},
            generic=r["generic"],
        )
        for r in conn.execute(GROUPS_SQL, (since,))
    ]


def useful_keys(conn: sqlite3.Connection, since: str) -> set[str]:
    """Query hashes of entries whose bundle was reported useful (T2)."""
    return {r[0] for r in conn.execute(USEFUL_SQL, (since,))}


def unhelped_counts(conn: sqlite3.Connection, since: str) -> Counter[str]:
    """Per query hash, how often a bundle its entries got was reported as helping with
    nothing (T2) since ``since``."""
    return Counter({r[0]: r[1] for r in conn.execute(UNHELPED_SQL, (since, since))})


def phrasings(conn: sqlite3.Connection, since: str, keys: Sequence[str]) -> dict[str, str]:
    """One logged phrasing per query hash in ``keys`` (those logged with their text)."""
    marks = ",".join("?" * len(keys))
    sql = (
        "SELECT query_hash, max(query) FROM query_log "
        f"WHERE query_hash IN ({marks}) AND created_at >= ? AND query != '' GROUP BY query_hash"
    )
    return {r[0]: r[1] for r in conn.execute(sql, (*keys, since))}


def cached_vectors(
    conn: sqlite3.Connection, model: str, keys: Sequence[str]
) -> dict[str, npt.NDArray[np.float32]]:
    """Stored vectors of the phrasings of these query hashes, for ``model``."""
    marks = ",".join("?" * len(keys))
    sql = f"SELECT query_hash, embedding FROM query_vectors WHERE model = ? AND query_hash IN ({marks})"
    rows = conn.execute(sql, (model, *keys))
    return {r[0]: np.frombuffer(r[1], dtype="<f4") for r in rows}


def save_vectors(
    conn: sqlite3.Connection, model: str, vectors: Iterable[tuple[str, npt.NDArray[np.float32]]]
) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO query_vectors (query_hash, model, embedding) VALUES (?, ?, ?)",
        [(key, model, np.asarray(v, dtype="<f4").tobytes()) for key, v in vectors],
    )


def unhashed_entries(conn: sqlite3.Connection, since: str) -> int:
    """Entries logged without their query (``activity.log_prompts: off``)."""
    sql = "SELECT count(*) FROM query_log WHERE query_hash IS NULL AND created_at >= ?"
    return int(conn.execute(sql, (since,)).fetchone()[0])


def sections_served(
    conn: sqlite3.Connection, since: str, keys: Sequence[str]
) -> dict[str, Counter[str]]:
    """Per query hash in ``keys``: how often each chunk id was served."""
    found: dict[str, Counter[str]] = {k: Counter() for k in keys}
    marks = ",".join("?" * len(keys))
    sql = (
        "SELECT query_hash, j.value FROM query_log, json_each(query_log.sections) j "
        f"WHERE query_hash IN ({marks}) AND created_at >= ?"
    )
    for key, chunk_id in conn.execute(sql, (*keys, since)):
        found[key][chunk_id] += 1
    return found


def section_info(conn: sqlite3.Connection, chunk_ids: Iterable[str]) -> dict[str, SectionInfo]:
    """Where the chunks of the current index with these ids are (gone ones are left out)."""
    ids = sorted(set(chunk_ids))
    found: dict[str, SectionInfo] = {}
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        rows = conn.execute(
            "SELECT c.id, d.path, c.heading_path, c.heading FROM chunks c "
            f"JOIN documents d ON d.id = c.doc_id WHERE c.id IN ({','.join('?' * len(part))})",
            part,
        )
        found.update((r[0], SectionInfo(r[0], r[1], _breadcrumb(r[2], r[3]))) for r in rows)
    return found


def _breadcrumb(heading_path: str, heading: str) -> str:
    """A section's place, its heading path ("Heading › Subheading"); a document's lead
    section (the text under its title, whose heading path is empty) is named by its heading,
    the title."""
    return " › ".join(json.loads(heading_path)) or heading


HINTS = ("", "NOT INDEXED")


def window_hint(conn: sqlite3.Connection, since: str) -> str:
    """How the usage report reads the query log since ``since``: the whole table in its
    stored order when the window holds most of it (the dashboard's 30 days of a 30-day log),
    not row by row through ``query_log_created`` — entries merged from replicas or logged
    late lie out of time order, and 100,000 of them read through the index cost seconds."""
    total = conn.execute("SELECT count(*) FROM query_log").fetchone()[0]
    inside = conn.execute(
        "SELECT count(*) FROM query_log WHERE created_at >= ?", (since,)
    ).fetchone()[0]
    return "NOT INDEXED" if inside * 2 > total else ""


def served_by_surface(
    conn: sqlite3.Connection, since: str, column: str, hint: str = ""
) -> list[tuple[str, str, int, str]]:
    """(chunk id or document path, surface, entries that served it, the last time) since
    ``since``; ``column`` is ``sections`` or ``documents``, ``hint`` from :func:`window_hint`."""
    assert column in ("sections", "documents") and hint in HINTS
    sql = (
        f"SELECT j.value, q.surface, count(*), max(q.created_at) FROM query_log q {hint}, "
        f"json_each(q.{column}) j WHERE q.created_at >= ? AND q.{column} != '[]' "
        "GROUP BY j.value, q.surface"
    )
    return [(r[0], r[1], r[2], r[3]) for r in conn.execute(sql, (since,))]


def useful_counts(conn: sqlite3.Connection, since: str) -> Counter[str]:
    """How often each chunk id was reported useful since ``since``: by the reports
    :func:`feedback_totals` counts (a client's retry in the same second is one report)."""
    sql = (
        "SELECT chunk_id, count(DISTINCT json_array(bundle_id, client, created_at)) "
        "FROM usage_events WHERE useful = 1 AND chunk_id IS NOT NULL AND created_at >= ? "
        "GROUP BY chunk_id"
    )
    return Counter({r[0]: r[1] for r in conn.execute(sql, (since,))})


def feedback_totals(conn: sqlite3.Connection, since: str) -> tuple[int, int]:
    """(usage reports, of which "nothing helped") since ``since``: a report naming no section
    is its one row; one naming sections, its rows of one bundle, client and second (so the
    same report sent twice in a second, a client's retry, is one either way)."""
    row = conn.execute(
        "SELECT count(DISTINCT CASE WHEN useful = 1 THEN json_array(bundle_id, client, "
        "created_at) END), count(DISTINCT CASE WHEN useful = 0 THEN json_array(bundle_id, "
        "client, created_at) END) FROM usage_events WHERE created_at >= ?",
        (since,),
    ).fetchone()
    nothing = int(row[1] or 0)
    return int(row[0] or 0) + nothing, nothing


def documents(conn: sqlite3.Connection) -> list[tuple[str, str, str]]:
    """(path, title, scope) of every indexed document, by path."""
    sql = "SELECT path, title, scope FROM documents ORDER BY path"
    return [(r[0], r[1], r[2]) for r in conn.execute(sql)]


def daily_counts(
    conn: sqlite3.Connection, since: str, hint: str = "", until: str | None = None
) -> list[tuple[str, str, str, int, int]]:
    """(UTC day, kind, surface, requests, of which empty) since ``since`` (before ``until``)."""
    assert hint in HINTS
    window, args = _window(since, until)
    sql = (
        "SELECT substr(created_at, 1, 10) AS day, kind, surface, count(*), sum(results = 0) "
        f"FROM query_log {hint} WHERE {window} GROUP BY day, kind, surface"
    )
    return [(r[0], r[1], r[2], r[3], r[4]) for r in conn.execute(sql, args)]


def daily_latencies(
    conn: sqlite3.Connection, since: str, hint: str = "", until: str | None = None
) -> list[tuple[str, float]]:
    """(UTC day, latency ms) of every entry since ``since`` (before ``until``)."""
    assert hint in HINTS
    window, args = _window(since, until)
    sql = f"SELECT substr(created_at, 1, 10), latency_ms FROM query_log {hint} WHERE {window}"
    return [(r[0], r[1]) for r in conn.execute(sql, args)]


def _window(since: str, until: str | None) -> tuple[str, tuple[str, ...]]:
    """The condition on ``created_at`` from ``since`` (to before ``until``), a range of
    ``query_log_created`` when read through it."""
    if until is None:
        return "created_at >= ?", (since,)
    return "created_at >= ? AND created_at < ?", (since, until)


def requests_upto(
    conn: sqlite3.Connection, upto: int
) -> list[tuple[str, str, str, int, int, float]]:
    """(UTC day, kind, surface, requests, of which empty, 0.0) of the entries up to ``rowid``
    ``upto``, and then (UTC day, '', '', 0, 0, latency ms) of each: a tally's start."""
    counts = (
        "SELECT substr(created_at, 1, 10), kind, surface, count(*), sum(results = 0), 0.0 "
        "FROM query_log NOT INDEXED WHERE rowid <= ? GROUP BY 1, 2, 3"
    )
    latencies = (
        "SELECT substr(created_at, 1, 10), '', '', 0, 0, latency_ms FROM query_log NOT INDEXED "
        "WHERE rowid <= ?"
    )
    rows = conn.execute(counts, (upto,)).fetchall() + conn.execute(latencies, (upto,)).fetchall()
    return [(r[0], r[1], r[2], r[3], r[4], r[5]) for r in rows]


def served_between(
    conn: sqlite3.Connection, since: str, until: str, column: str
) -> list[tuple[str, str, int, str]]:
    """:func:`served_by_surface` of the entries from ``since`` to before ``until`` (one day
    of a window: read through ``query_log_created``)."""
    assert column in ("sections", "documents")
    sql = (
        f"SELECT j.value, q.surface, count(*), max(q.created_at) FROM query_log q, "
        f"json_each(q.{column}) j WHERE q.created_at >= ? AND q.created_at < ? "
        f"AND q.{column} != '[]' GROUP BY j.value, q.surface"
    )
    return [(r[0], r[1], r[2], r[3]) for r in conn.execute(sql, (since, until))]


def log_mark(conn: sqlite3.Connection, rowid: int) -> tuple[int, str | None]:
    """How many entries the query log holds up to ``rowid``, and that entry's time (None: it
    is gone): what a tally of the entries up to it checks before it adds the later ones."""
    count = conn.execute("SELECT count(*) FROM query_log WHERE rowid <= ?", (rowid,)).fetchone()
    at = conn.execute("SELECT created_at FROM query_log WHERE rowid = ?", (rowid,)).fetchone()
    return int(count[0]), at[0] if at is not None else None


def logged_after(
    conn: sqlite3.Connection, rowid: int
) -> Iterable[tuple[int, str, str | None, str, str, str, int, float]]:
    """(rowid, time, surface, sections JSON, documents JSON, kind, results, latency ms) of
    the entries after ``rowid``, in rowid order."""
    sql = (
        "SELECT rowid, created_at, surface, sections, documents, kind, results, latency_ms "
        "FROM query_log WHERE rowid > ? ORDER BY rowid"
    )
    return conn.execute(sql, (rowid,))


def served_by_day(
    conn: sqlite3.Connection, upto: int, column: str
) -> list[tuple[str, str, str | None, int, str]]:
    """(UTC day, chunk id or document path, surface, entries that served it, the last time)
    of the entries up to ``rowid`` ``upto``: a tally's start, counted in one pass."""
    assert column in ("sections", "documents")
    sql = (
        f"SELECT substr(q.created_at, 1, 10), j.value, q.surface, count(*), max(q.created_at) "
        f"FROM query_log q NOT INDEXED, json_each(q.{column}) j WHERE q.rowid <= ? "
        f"AND q.{column} != '[]' GROUP BY 1, 2, 3"
    )
    return [(r[0], r[1], r[2], r[3], r[4]) for r in conn.execute(sql, (upto,))]


def last_entry(conn: sqlite3.Connection) -> int:
    """The rowid of the query log's last entry (0: none)."""
    return int(conn.execute("SELECT max(rowid) FROM query_log").fetchone()[0] or 0)
