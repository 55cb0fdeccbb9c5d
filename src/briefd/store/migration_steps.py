"""The SQL builders and Python steps of :mod:`briefd.store.migrations` (X0): the tables a
change to moves ``content_version``, the FTS5 triggers' columns, the triggers generated per
table, and the steps some migrations run after their SQL, in the same transaction."""

from __future__ import annotations

import sqlite3

from briefd.store import vocabulary
from briefd.text import refolded

FTS_COLUMNS = (
    "briefd_fold({r}.title || ' ' || {r}.aliases), briefd_fold({r}.heading_path), "
    "briefd_fold({r}.content)"
)


# What the search caches read (postings, vectors, vocabulary, calibration, meta): a change to
# any of them moves ``content_version``, and only those do. A session remembered or a query
# logged by another process no longer makes every cache in a server reload (PRAGMA
# data_version moves on any commit: measured, a hook's in-process answer next to a warm daemon
# cost the daemon's next recall +19 ms — vectors, postings and spelling read again). The two
# tables with a row per word have no trigger of their own: ``postings`` is only written with
# ``postings_state`` and ``vocabulary`` with ``chunks``, in the same transaction (a trigger per
# word made a BM25-only rebuild of the example knowledge ~6% slower).
_COUNTED_SINCE_17 = (
    "documents",
    "chunks",
    "links",
    "chunk_vectors",
    "calibration",
    "postings_state",
    "index_meta",
)
CONTENT_TABLES = (*_COUNTED_SINCE_17, "chunk_windows")  # its triggers come with it (18)


def content_version_sql() -> str:
    triggers = "\n".join(
        f"CREATE TRIGGER {table}_{event.lower()}_moves_content AFTER {event} ON {table} "
        "BEGIN UPDATE content_version SET n = n + 1; END;"
        for table in _COUNTED_SINCE_17
        for event in ("INSERT", "UPDATE", "DELETE")
    )
    return (
        "CREATE TABLE content_version (n INTEGER NOT NULL);\n"
        "INSERT INTO content_version (n) VALUES (0);\n" + triggers
    )


def chunk_windows_sql() -> str:
    """The windows a long chunk is also embedded as (R2, :func:`briefd.markdown.passages.
    passage_windows`): per chunk text and window size, each window's passage hash, whose vector
    is in ``chunk_vectors``. A chunk with no window of that size has one row at position -1
    (so a chunk still to be windowed is told from one with nothing to window)."""
    triggers = "\n".join(
        f"CREATE TRIGGER chunk_windows_{event.lower()}_moves_content AFTER {event} ON "
        "chunk_windows BEGIN UPDATE content_version SET n = n + 1; END;"
        for event in ("INSERT", "UPDATE", "DELETE")
    )
    return (
        """
        CREATE TABLE chunk_windows (
            embed_hash TEXT NOT NULL,   -- the chunk's passage hash
            words INTEGER NOT NULL,     -- the window size it was cut at
            position INTEGER NOT NULL,  -- 0, 1, ... in the chunk; -1: no window
            window_hash TEXT NOT NULL,  -- the window's passage hash ('' at -1)
            PRIMARY KEY (embed_hash, words, position)
        ) WITHOUT ROWID;
        CREATE INDEX chunk_windows_window ON chunk_windows(window_hash);
        """
        + triggers
    )


def hash_logged_queries(conn: sqlite3.Connection) -> None:
    from briefd.store import queryhash

    queryhash.hash_logged_queries(conn)


def interim_16(conn: sqlite3.Connection) -> None:
    from briefd.store import interim

    interim.bring_up(conn)


def interim_sql() -> str:
    """What the first forms of migrations 16 and 17 lacked or had too much (a build between
    them recorded schema 16 or 17 all the same): every statement a no-op on the final form."""
    triggers = "\n".join(
        f"DROP TRIGGER IF EXISTS {table}_{event}_moves_content;"
        for table in ("vocabulary", "postings")
        for event in ("insert", "update", "delete")
    )
    return (
        """
        UPDATE query_log SET surface = CASE client WHEN 'mcp' THEN 'mcp' WHEN 'hook' THEN 'hook'
            ELSE 'rest' END WHERE surface IS NULL;
        CREATE INDEX IF NOT EXISTS query_log_groups
            ON query_log(query_hash, created_at, results, gate, top_score, surface, kind);
        CREATE TABLE IF NOT EXISTS drift_basis (
            doc_path TEXT PRIMARY KEY,
            refs TEXT NOT NULL,
            updated_at TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS query_vectors (
            query_hash TEXT NOT NULL,
            model TEXT NOT NULL,
            embedding BLOB NOT NULL,
            PRIMARY KEY (query_hash, model)
        ) WITHOUT ROWID;
        """
        + triggers
    )


def build_postings(conn: sqlite3.Connection) -> None:
    from briefd.store import postings  # numpy: not for the hook's light path

    postings.rebuild(conn)


def refolded_words(conn: sqlite3.Connection) -> None:
    """An index whose text holds Han or kana characters was tokenized with each run of them
    (a sentence) as one word, and one holding ß with it (Straße, never found by "strasse"):
    its FTS index, postings and word list are made again as :func:`briefd.text.fold` now
    folds. Other indexes are left as they are."""
    rows = conn.execute(
        "SELECT title || ' ' || aliases || ' ' || heading_path, content FROM chunks"
    )
    if not any(refolded(head) or refolded(body) for head, body in rows):
        return
    conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")
    vocabulary.rebuild(conn)
    build_postings(conn)


def proposal_pushed_to(conn: sqlite3.Connection) -> None:
    """The column, added once (an index set back to an older version runs this again)."""
    columns = {str(row[1]) for row in conn.execute("PRAGMA table_info(proposals)")}
    if "pushed_to" not in columns:
        conn.execute("ALTER TABLE proposals ADD COLUMN pushed_to TEXT")
