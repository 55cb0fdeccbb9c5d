"""The search caches (vectors, postings, spelling) follow the index's content, not every commit:
another process remembering a session, logging a query or re-indexing with nothing to do leaves
them loaded, a change to the content has them read again."""

from __future__ import annotations

import shutil
import sqlite3
import time
from pathlib import Path

from briefd.api import Briefd
from briefd.embeddings.fake import FakeEmbedder
from briefd.retrieval.search import SearchRequest
from briefd.settings import Settings
from briefd.store.db import Store, content_version
from briefd.store.documents import set_meta
from briefd.store.migrations import CONTENT_TABLES
from tests.conftest import EXAMPLE, WriteFiles

# a typo: the speller loads its vocabulary too
QUERY = SearchRequest("chargebak evidence deadline", mode="hybrid", scopes=("all",))
LOADS = (
    "v.embedding",
    "FROM postings_state",
    "SELECT term, chunks FROM vocabulary",
)  # vectors, postings, spelling


def traced_search(api: Briefd) -> list[str]:
    """The statements one search runs on the index."""
    statements: list[str] = []
    api.store.conn.set_trace_callback(statements.append)
    try:
        assert api.search(QUERY).hits
    finally:
        api.store.conn.set_trace_callback(None)
    return statements


def loaded(statements: list[str]) -> set[str]:
    return {load for load in LOADS for s in statements if load in s}


def test_caches_outlive_other_processes_logs_and_sessions_and_follow_content(
    settings: Settings, write_files: WriteFiles
) -> None:
    root = write_files({})
    shutil.copytree(EXAMPLE, root, dirs_exist_ok=True)
    with Briefd(settings, embedder=FakeEmbedder()) as writer:
        writer.index()
        with Briefd(settings, embedder=FakeEmbedder()) as reader:
            assert loaded(traced_search(reader)) == set(LOADS)  # the first search loads all
            assert loaded(traced_search(reader)) == set()
            other = sqlite3.connect(settings.db)  # another process: a hook, a CLI query
            with other:
                other.execute(
                    "INSERT INTO recall_injections (session_id, chunk_id, content_hash, "
                    "injected_at) VALUES ('s-1', 'c', 'h', ?)",
                    (time.time(),),
                )
                other.execute(
                    "INSERT INTO usage_events (bundle_id, useful, created_at) VALUES ('b', 1, 'now')"
                )
            assert loaded(traced_search(reader)) == set()
            writer.index()  # a run with nothing to do (cron, a sync that found no change)
            assert loaded(traced_search(reader)) == set()
            write_files(
                {"domain/quokka.md": "# Quokka chargebacks\n\nEvidence is due in 7 days.\n"}
            )
            writer.index()
            assert loaded(traced_search(reader)) == set(LOADS)
            other.close()


def test_every_content_table_moves_the_version_and_state_tables_do_not(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "index.db", create=True)
    triggers = {
        (row[0], row[1])
        for row in store.conn.execute(
            "SELECT tbl_name, name FROM sqlite_master WHERE type = 'trigger' "
            "AND name LIKE '%_moves_content'"
        )
    }
    expected = {
        (table, f"{table}_{event}_moves_content")
        for table in CONTENT_TABLES
        for event in ("insert", "update", "delete")
    }
    assert triggers == expected
    before = content_version(store.conn)[1]
    with store.write() as conn:
        set_meta(conn, "k", "v")
    moved = content_version(store.conn)[1]
    with store.write() as conn:
        set_meta(conn, "k", "v")  # the value it already has: nothing changes
        conn.execute(
            "INSERT INTO recall_injections (session_id, chunk_id, content_hash, injected_at) "
            "VALUES ('s', 'c', 'h', 0)"
        )
    unmoved = content_version(store.conn)[1]
    with store.write() as conn:
        conn.execute("DELETE FROM index_meta WHERE key = 'k'")
    after = content_version(store.conn)[1]
    store.close()
    assert (moved - before, unmoved - moved, after - unmoved) == (1, 0, 1)
