"""Indexes made by older builds, opened by this one (X0): the old layout is built here with SQL
(the migrations as they were then), then opened through the API as an upgraded briefd would."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.retrieval.search import SearchRequest
from briefd.settings import Settings
from briefd.store import postings
from briefd.store.db import _statements
from briefd.store.migrations import MIGRATIONS, SCHEMA_VERSION
from briefd.store.queryhash import query_hash, query_salt
from briefd.team.gaps import GapsRequest
from briefd.text import fold
from tests.conftest import WriteFiles

OLD_FOLD = str.maketrans({"ı": "i", "İ": "I"})  # briefd_fold before schema 20

# Migration 16 as the builds of 2026-12-01 before 8c12cea applied it (git show
# 68fa2ec:src/briefd/store/migrations.py): sections space-separated, no documents column, no
# query_vectors or drift_basis, drift paths as JSON lists without the commit's time.
FIRST_16 = """
ALTER TABLE query_log ADD COLUMN surface TEXT;
ALTER TABLE query_log ADD COLUMN gate TEXT;
ALTER TABLE query_log ADD COLUMN sections TEXT NOT NULL DEFAULT '';
ALTER TABLE query_log ADD COLUMN bundle_id TEXT;
ALTER TABLE query_log ADD COLUMN query_hash TEXT;
CREATE INDEX query_log_bundle ON query_log(bundle_id) WHERE bundle_id IS NOT NULL;
CREATE INDEX usage_events_created ON usage_events(created_at);
CREATE INDEX usage_events_bundle ON usage_events(bundle_id);
CREATE TABLE code_repos (
    name TEXT PRIMARY KEY, location TEXT NOT NULL, branch TEXT, head TEXT,
    commits INTEGER NOT NULL DEFAULT 0, last_read INTEGER NOT NULL DEFAULT 0,
    refreshed_at TEXT, error TEXT
) WITHOUT ROWID;
CREATE TABLE code_commits (
    repo TEXT NOT NULL, hash TEXT NOT NULL, at TEXT NOT NULL, author TEXT NOT NULL,
    subject TEXT NOT NULL, paths TEXT NOT NULL, PRIMARY KEY (repo, hash)
) WITHOUT ROWID;
CREATE INDEX code_commits_at ON code_commits(at);
CREATE TABLE document_drift (
    doc_path TEXT NOT NULL, repo TEXT NOT NULL, hash TEXT NOT NULL, paths TEXT NOT NULL,
    PRIMARY KEY (doc_path, repo, hash)
) WITHOUT ROWID;
"""


def _first_16_index(db: Path, example: Path) -> tuple[str, str]:
    """An index of the example knowledge as such a build left it, with a query log of two
    answered searches and one empty one, and a drift row; the chunk ids the searches got."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.create_function("briefd_fold", 1, fold, deterministic=True)
    for migration in MIGRATIONS[:15]:  # 1-15 are as they were then
        for statement in _statements(migration.sql):
            conn.execute(statement)
        if migration.after is not None:
            migration.after(conn)
    for statement in _statements(FIRST_16):
        conn.execute(statement)
    conn.execute("ATTACH ? AS example", (str(example),))
    conn.execute("INSERT INTO documents SELECT * FROM example.documents")
    conn.execute("INSERT INTO chunks SELECT * FROM example.chunks")
    first, second = (
        r[0]
        for r in conn.execute(
            "SELECT c.id FROM example.chunks c JOIN example.documents d ON d.id = c.doc_id "
            "WHERE d.path = 'domain/refunds.md' ORDER BY c.position LIMIT 2"
        )
    )
    conn.execute("DETACH example")
    salt = query_salt(conn)
    at = datetime.now(UTC).isoformat(timespec="seconds")
    for query, sections in (
        ("refund window", f"{first} {second}"),
        ("refund window", first),
        ("zzqx nothing here", ""),
    ):
        conn.execute(
            "INSERT INTO query_log (kind, query, scopes, results, top_score, latency_ms, "
            "client, created_at, surface, gate, sections, bundle_id, query_hash) "
            "VALUES ('search', ?, 'domain', ?, ?, 5.0, 'mcp', ?, 'mcp', ?, ?, NULL, ?)",
            (
                query,
                len(sections.split()),
                2.0 if sections else None,
                at,
                "kept" if sections else "empty",
                sections,
                query_hash(query, salt),
            ),
        )
    conn.execute(
        "INSERT INTO code_commits VALUES ('shop', 'c0ffee', ?, 'dev', 'fix', ?)",
        (at, json.dumps(["svc/refunds.py", "svc/other.py"])),
    )
    conn.execute(
        "INSERT INTO document_drift VALUES ('domain/refunds.md', 'shop', 'c0ffee', ?)",
        (json.dumps(["svc/refunds.py"]),),
    )
    conn.execute("PRAGMA user_version = 16")
    conn.close()
    return first, second


def test_an_index_of_the_first_schema_16_keeps_its_query_log_and_reports(
    settings: Settings, example_index: Path
) -> None:
    first, second = _first_16_index(settings.db, example_index)
    with Briefd(settings, embedder=None) as api:
        usage = api.usage()
        gaps = api.gaps(GapsRequest())
        api.drift()
        conn = api.store.conn
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        drift = conn.execute("SELECT at, paths FROM document_drift").fetchall()
        commit = conn.execute("SELECT at, paths FROM code_commits").fetchone()
    assert usage.requests == 3
    refunds = next(d for d in usage.documents if d.doc_path == "domain/refunds.md")
    assert (refunds.served, refunds.sections_served) == (2, 2)
    served = {s.chunk_id: s.served for s in usage.sections}
    assert (served[first], served[second]) == (2, 1)
    assert [(g.query, g.empty) for g in gaps.gaps if g.empty] == [("zzqx nothing here", 1)]
    assert [tuple(r) for r in drift] == [(commit[0], "svc/refunds.py")]
    assert commit[1] == "svc/refunds.py\0svc/other.py"


def test_the_word_triggers_of_the_first_schema_17_are_dropped(
    settings: Settings, example_index: Path
) -> None:
    """The first form of migration 17 moved the content version on every word written to the
    vocabulary and the postings (~6% slower rebuilds); they go, the other triggers stay."""
    settings.db.write_bytes(example_index.read_bytes())
    conn = sqlite3.connect(settings.db, isolation_level=None)
    for table in ("vocabulary", "postings"):
        conn.execute(
            f"CREATE TRIGGER {table}_insert_moves_content AFTER INSERT ON {table} "
            "BEGIN UPDATE content_version SET n = n + 1; END"
        )
    conn.execute("PRAGMA user_version = 18")
    conn.close()
    with Briefd(settings, embedder=None) as api:
        names = {
            r[0]
            for r in api.store.conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%moves%'"
            )
        }
    assert not {"vocabulary_insert_moves_content", "postings_insert_moves_content"} & names
    assert "postings_state_insert_moves_content" in names and "chunks_insert_moves_content" in names


@pytest.mark.parametrize(
    ("text", "query", "words"),
    [
        ("部分返金も可能ですが、合計額は売上金額を超えません。", "合計額", {"合", "計", "額"}),
        ("Die Straße mit Hausnummer.", "strasse", {"strasse"}),
        ("ＡＰＩ keys are issued here.", "API", {"api"}),
        ("يَجِبُ طَلَبُ الاسْتِرْدَادِ", "الاسترداد", {"الاسترداد"}),
    ],
)
def test_an_index_made_before_schema_20_finds_words_as_search_folds_them(
    settings: Settings, write_files: WriteFiles, text: str, query: str, words: set[str]
) -> None:
    """Schema 19's FTS index and postings hold a Japanese sentence as one word and "Straße"
    with its ß: migration 20 makes them and the word list again as queries are folded (each
    Han or kana character a word, ß as ss), so a word of the sentence, or "strasse", is found."""
    write_files({"domain/doc.md": f"# Doc\n\n{text}\n"})
    with Briefd(settings, embedder=None) as api:
        api.index()
    conn = sqlite3.connect(settings.db, isolation_level=None)
    conn.create_function("briefd_fold", 1, lambda t: (t or "").translate(OLD_FOLD))
    conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")
    postings.rebuild(conn)
    conn.execute("DELETE FROM vocabulary")  # it held the sentence, "straße": none of these
    conn.execute("PRAGMA user_version = 19")
    conn.close()
    with Briefd(settings, embedder=None) as api:
        hits = api.search(SearchRequest(query)).hits
        known = {r[0] for r in api.store.conn.execute("SELECT term FROM vocabulary")}
    assert [h.doc_path for h in hits] == ["domain/doc.md"]
    assert words <= known
