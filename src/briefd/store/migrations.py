"""Numbered schema migrations (X0). ``PRAGMA user_version`` records the last one applied.

The FTS5 table is an external-content table over a view of ``chunks`` whose columns pass
through ``briefd_fold`` (see :mod:`briefd.text`); triggers keep it in sync.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from briefd.store import surfaces, vocabulary
from briefd.store.migration_steps import (
    CONTENT_TABLES,
    FTS_COLUMNS,
    build_postings,
    chunk_windows_sql,
    content_version_sql,
    hash_logged_queries,
    interim_16,
    interim_sql,
    proposal_pushed_to,
    refolded_words,
)

__all__ = ["CONTENT_TABLES", "MIGRATIONS", "SCHEMA_VERSION", "Migration", "schema_doc"]


@dataclass(frozen=True, slots=True)
class Migration:
    """SQL statements, then an optional Python step (in the same transaction)."""

    number: int
    name: str
    sql: str
    after: Callable[[sqlite3.Connection], None] | None = None


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "m001_documents_chunks",
        """
        CREATE TABLE documents (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            scope TEXT NOT NULL,
            title TEXT NOT NULL,
            tags TEXT NOT NULL DEFAULT '[]',
            aliases TEXT NOT NULL DEFAULT '[]',
            refs TEXT NOT NULL DEFAULT '[]',
            front_matter TEXT NOT NULL DEFAULT '{}',
            body TEXT NOT NULL,
            body_start_line INTEGER NOT NULL,
            headings TEXT NOT NULL DEFAULT '[]',
            problems TEXT NOT NULL DEFAULT '[]',
            content_hash TEXT NOT NULL,
            updated_commit TEXT,
            updated_at TEXT,
            indexed_at TEXT NOT NULL
        );
        CREATE INDEX documents_scope ON documents(scope);
        CREATE TABLE chunks (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            scope TEXT NOT NULL,
            title TEXT NOT NULL,
            aliases TEXT NOT NULL DEFAULT '',
            heading TEXT NOT NULL,
            heading_path TEXT NOT NULL,
            anchor TEXT,
            content TEXT NOT NULL,
            tokens INTEGER NOT NULL,
            content_hash TEXT NOT NULL,
            position INTEGER NOT NULL,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL
        );
        CREATE INDEX chunks_doc ON chunks(doc_id, position);
        CREATE INDEX chunks_scope ON chunks(scope);
        """,
    ),
    Migration(
        2,
        "m002_chunks_fts",
        f"""
        CREATE VIEW chunk_search_text AS
            SELECT rowid AS chunk_rowid,
                   briefd_fold(title || ' ' || aliases) AS title,
                   briefd_fold(heading_path) AS heading_path,
                   briefd_fold(content) AS content
            FROM chunks;
        CREATE VIRTUAL TABLE chunks_fts USING fts5(
            title, heading_path, content,
            content='chunk_search_text', content_rowid='chunk_rowid',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
            INSERT INTO chunks_fts(rowid, title, heading_path, content)
            VALUES (new.rowid, {FTS_COLUMNS.format(r="new")});
        END;
        CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, title, heading_path, content)
            VALUES ('delete', old.rowid, {FTS_COLUMNS.format(r="old")});
        END;
        CREATE TRIGGER chunks_au AFTER UPDATE ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, title, heading_path, content)
            VALUES ('delete', old.rowid, {FTS_COLUMNS.format(r="old")});
            INSERT INTO chunks_fts(rowid, title, heading_path, content)
            VALUES (new.rowid, {FTS_COLUMNS.format(r="new")});
        END;
        """,
    ),
    Migration(
        3,
        "m003_links",
        """
        CREATE TABLE links (
            id INTEGER PRIMARY KEY,
            doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            source_path TEXT NOT NULL,
            section TEXT NOT NULL,
            line INTEGER NOT NULL,
            kind TEXT NOT NULL,
            target TEXT NOT NULL,
            fragment TEXT,
            display TEXT,
            target_path TEXT,
            status TEXT NOT NULL DEFAULT 'unresolved',
            detail TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX links_doc ON links(doc_id);
        CREATE INDEX links_target ON links(target_path);
        """,
    ),
    Migration(
        4,
        "m004_service_tables",
        """
        CREATE TABLE chunk_vectors (
            chunk_id TEXT NOT NULL,
            model TEXT NOT NULL,
            dim INTEGER NOT NULL,
            content_hash TEXT NOT NULL,
            embedding BLOB NOT NULL,
            PRIMARY KEY (chunk_id, model)
        );
        CREATE TABLE bundles (
            id TEXT PRIMARY KEY,
            cache_key TEXT NOT NULL UNIQUE,
            task TEXT NOT NULL,
            scopes TEXT NOT NULL,
            max_tokens INTEGER NOT NULL,
            index_fingerprint TEXT NOT NULL,
            model TEXT NOT NULL,
            content TEXT NOT NULL,
            tokens INTEGER NOT NULL,
            sections TEXT NOT NULL,
            truncated INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            hits INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE usage_events (
            id INTEGER PRIMARY KEY,
            bundle_id TEXT NOT NULL,
            chunk_id TEXT,
            useful INTEGER NOT NULL,
            client TEXT,
            created_at TEXT NOT NULL
        );
        CREATE TABLE proposals (
            id TEXT PRIMARY KEY,
            branch TEXT NOT NULL,
            doc_path TEXT NOT NULL,
            description TEXT NOT NULL,
            commit_hash TEXT,
            pr_url TEXT,
            status TEXT NOT NULL,
            client TEXT,
            created_at TEXT NOT NULL
        );
        CREATE TABLE sync_state (
            source TEXT PRIMARY KEY,
            last_commit TEXT,
            last_sync_at TEXT,
            last_error TEXT,
            index_fingerprint TEXT NOT NULL DEFAULT '',
            last_report TEXT NOT NULL DEFAULT '{}'
        );
        """,
    ),
    Migration(
        5,
        "m005_vectors_by_text_hash",
        """
        ALTER TABLE chunks ADD COLUMN embed_hash TEXT NOT NULL DEFAULT '';
        DROP TABLE chunk_vectors;
        CREATE TABLE chunk_vectors (
            model TEXT NOT NULL,
            embed_hash TEXT NOT NULL,
            dim INTEGER NOT NULL,
            embedding BLOB NOT NULL,
            PRIMARY KEY (model, embed_hash)
        ) WITHOUT ROWID;
        CREATE INDEX chunks_embed_hash ON chunks(embed_hash);
        """,
    ),
    Migration(
        6,
        "m006_vocabulary",
        """
        CREATE TABLE vocabulary (
            term TEXT PRIMARY KEY,
            chunks INTEGER NOT NULL
        ) WITHOUT ROWID;
        """,
        after=vocabulary.rebuild,
    ),
    Migration(
        7,
        "m007_gate_calibration",
        """
        CREATE TABLE calibration (
            model TEXT PRIMARY KEY,
            fingerprint TEXT NOT NULL,
            mean REAL NOT NULL,
            std REAL NOT NULL,
            maximum REAL NOT NULL,
            probes INTEGER NOT NULL,
            created_at TEXT NOT NULL
        );
        """,
    ),
    Migration(
        8,
        "m008_gate_probe_vectors",
        """
        ALTER TABLE calibration ADD COLUMN probe_vectors BLOB NOT NULL DEFAULT x'';
        DELETE FROM calibration;
        """,
    ),
    Migration(
        9,
        "m009_gate_language",
        """
        ALTER TABLE calibration ADD COLUMN language TEXT NOT NULL DEFAULT '';
        DELETE FROM calibration;
        """,
    ),
    Migration(
        10,
        "m010_bundle_cache",
        """
        DROP TABLE bundles;
        CREATE TABLE bundles (
            id TEXT PRIMARY KEY,
            cache_key TEXT NOT NULL UNIQUE,
            task TEXT NOT NULL,
            scopes TEXT NOT NULL,
            paths TEXT NOT NULL,
            max_tokens INTEGER NOT NULL,
            format TEXT NOT NULL,
            index_fingerprint TEXT NOT NULL,
            model TEXT NOT NULL,
            content TEXT NOT NULL,
            tokens INTEGER NOT NULL,
            sections TEXT NOT NULL,
            truncated INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            hits INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX bundles_fingerprint ON bundles(index_fingerprint);
        CREATE TABLE bundle_manifests (
            id TEXT PRIMARY KEY,
            request_key TEXT NOT NULL,
            sections TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX bundle_manifests_created ON bundle_manifests(created_at);
        """,
    ),
    Migration(
        11,
        "m011_proposal_forge_state",
        """
        ALTER TABLE proposals ADD COLUMN pr_number INTEGER;
        ALTER TABLE proposals ADD COLUMN base_branch TEXT;
        ALTER TABLE proposals ADD COLUMN base_commit TEXT;
        ALTER TABLE proposals ADD COLUMN forge_error TEXT;
        ALTER TABLE proposals ADD COLUMN status_checked_at TEXT;
        CREATE INDEX proposals_status ON proposals(status);
        """,
    ),
    Migration(
        12,
        "m012_service_counters_query_log",
        """
        CREATE TABLE counters (
            name TEXT NOT NULL,
            labels TEXT NOT NULL,
            value REAL NOT NULL,
            PRIMARY KEY (name, labels)
        ) WITHOUT ROWID;
        CREATE TABLE counters_meta (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE query_log (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,
            query TEXT NOT NULL,
            scopes TEXT NOT NULL,
            results INTEGER NOT NULL,
            top_score REAL,
            latency_ms REAL NOT NULL,
            client TEXT,
            created_at TEXT NOT NULL
        );
        CREATE INDEX query_log_created ON query_log(created_at);
        CREATE TABLE link_dismissals (
            doc_path TEXT NOT NULL,
            target_path TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (doc_path, target_path)
        ) WITHOUT ROWID;
        """,
    ),
    Migration(
        13,
        "m013_recall_sessions",
        """
        CREATE TABLE recall_injections (
            session_id TEXT NOT NULL,
            chunk_id TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            injected_at REAL NOT NULL,
            PRIMARY KEY (session_id, chunk_id)
        ) WITHOUT ROWID;
        CREATE INDEX recall_injections_age ON recall_injections(injected_at);
        """,
    ),
    Migration(
        14,
        "m014_bm25_postings",
        """
        CREATE TABLE postings (
            term TEXT PRIMARY KEY,
            rows BLOB NOT NULL,   -- int64 LE chunk rowids, ascending
            freqs BLOB NOT NULL   -- uint16 LE occurrences per (row, column): title, heading, body
        ) WITHOUT ROWID;
        CREATE TABLE postings_state (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            chunks INTEGER NOT NULL,
            rows BLOB NOT NULL,         -- int64 LE chunk rowids, ascending
            lengths BLOB NOT NULL,      -- int32 LE tokens per chunk over all columns
            scope_codes BLOB NOT NULL,  -- uint16 LE index into scopes
            scopes TEXT NOT NULL        -- JSON list
        );
        """,
        after=build_postings,
    ),
    Migration(
        15,
        "m015_index_meta",
        """
        CREATE TABLE index_meta (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        ) WITHOUT ROWID;
        """,
    ),
    Migration(
        16,
        "m016_knowledge_health",
        """
        ALTER TABLE query_log ADD COLUMN surface TEXT;        -- mcp, rest, hook
        ALTER TABLE query_log ADD COLUMN gate TEXT;           -- off, kept, empty
        ALTER TABLE query_log ADD COLUMN sections TEXT NOT NULL DEFAULT '[]';  -- chunk ids served
        ALTER TABLE query_log ADD COLUMN documents TEXT NOT NULL DEFAULT '[]';  -- their paths
        ALTER TABLE query_log ADD COLUMN bundle_id TEXT;
        ALTER TABLE query_log ADD COLUMN query_hash TEXT;     -- salted hash of the grouping key
        UPDATE query_log SET surface = CASE client WHEN 'mcp' THEN 'mcp' WHEN 'hook' THEN 'hook'
            ELSE 'rest' END;
        CREATE INDEX query_log_bundle ON query_log(bundle_id) WHERE bundle_id IS NOT NULL;
        CREATE INDEX query_log_groups
            ON query_log(query_hash, created_at, results, gate, top_score, surface, kind);
        CREATE INDEX usage_events_created ON usage_events(created_at);
        CREATE INDEX usage_events_bundle ON usage_events(bundle_id);
        CREATE TABLE code_repos (
            name TEXT PRIMARY KEY,
            location TEXT NOT NULL,
            branch TEXT,
            head TEXT,
            commits INTEGER NOT NULL DEFAULT 0,
            last_read INTEGER NOT NULL DEFAULT 0,  -- commits the last refresh read
            refreshed_at TEXT,
            error TEXT
        ) WITHOUT ROWID;
        CREATE TABLE code_commits (
            repo TEXT NOT NULL,
            hash TEXT NOT NULL,
            at TEXT NOT NULL,        -- committer time, ISO 8601 UTC
            author TEXT NOT NULL,
            subject TEXT NOT NULL,
            paths TEXT NOT NULL,     -- the paths it touched, NUL-separated (as git -z prints)
            PRIMARY KEY (repo, hash)
        ) WITHOUT ROWID;
        CREATE INDEX code_commits_at ON code_commits(at);
        CREATE TABLE document_drift (
            doc_path TEXT NOT NULL,
            repo TEXT NOT NULL,
            hash TEXT NOT NULL,
            at TEXT NOT NULL,        -- the commit's time
            paths TEXT NOT NULL,     -- the governed paths it touched, NUL-separated
            PRIMARY KEY (doc_path, repo, hash)
        ) WITHOUT ROWID;
        CREATE INDEX document_drift_at ON document_drift(doc_path, at);
        CREATE TABLE drift_basis (   -- the documents' refs and last change drift was computed for
            doc_path TEXT PRIMARY KEY,
            refs TEXT NOT NULL,
            updated_at TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE query_vectors (  -- phrasings the gaps report compared, by query hash
            query_hash TEXT NOT NULL,
            model TEXT NOT NULL,
            embedding BLOB NOT NULL,  -- float32 LE, L2-normalised
            PRIMARY KEY (query_hash, model)
        ) WITHOUT ROWID;
        """,
        after=hash_logged_queries,
    ),
    Migration(17, "m017_content_version", content_version_sql()),
    Migration(18, "m018_chunk_windows", chunk_windows_sql()),
    Migration(19, "m019_interim_schemas", interim_sql(), after=interim_16),
    Migration(
        20,
        "m020refolded_words",
        "-- the FTS index, postings and vocabulary again when the text holds Han, kana or ß",
        after=refolded_words,
    ),
    Migration(
        21,
        "m021_surfaces",
        """
        CREATE TABLE IF NOT EXISTS surfaces (  -- how chunks write words with diacritics
            term TEXT NOT NULL,      -- the word as the vocabulary holds it (folded)
            form TEXT NOT NULL,      -- a spelling with diacritics, lower-cased
            chunks INTEGER NOT NULL, -- chunks holding that spelling
            PRIMARY KEY (term, form)
        ) WITHOUT ROWID;
        """,
        after=surfaces.rebuild,
    ),
    Migration(
        22,
        "m022proposal_pushed_to",
        "-- proposals.pushed_to TEXT: the URL (without user:token@) of the remote a proposal's "
        "branch was pushed to",
        after=proposal_pushed_to,
    ),
    Migration(
        23,
        "m023_proximity",
        """
        CREATE TABLE IF NOT EXISTS proximity (  -- each chunk's tokens in order: store.streams
            chunk INTEGER PRIMARY KEY, length INTEGER NOT NULL, terms BLOB NOT NULL,
            cells BLOB NOT NULL
        );
        CREATE TABLE IF NOT EXISTS proximity_state (  -- written by the next index run
            id INTEGER PRIMARY KEY CHECK (id = 1), chunks INTEGER NOT NULL, total INTEGER NOT NULL
        );
        """,
    ),
)

SCHEMA_VERSION = MIGRATIONS[-1].number


def schema_doc() -> str:
    """The schema as Markdown, generated from the migrations so it cannot drift."""
    parts = ["# briefd index schema", ""]
    for migration in MIGRATIONS:
        parts += [f"## {migration.name}", "", "```sql", _dedent(migration.sql), "```", ""]
    return "\n".join(parts)


def _dedent(sql: str) -> str:
    import textwrap

    return textwrap.dedent(sql).strip()
