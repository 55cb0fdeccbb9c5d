from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.errors import IndexNotFoundError, SourceError, StoreError
from briefd.model import IndexReport
from briefd.retrieval.search import SearchRequest
from briefd.settings import Settings, with_overrides
from briefd.store import documents as docs_table
from briefd.store.db import Store
from briefd.store.migrations import SCHEMA_VERSION, schema_doc
from tests.conftest import WriteFiles

FILES = {
    "domain/retry.md": """
        ---
        title: Retry policy
        aliases: [backoff rules]
        ---
        # Retry policy

        ## Soft declines

        Retry soft declines with exponential backoff.

        ## Hard declines

        Never retry a stolen card.
        """,
    "conventions/logging.md": """
        # Logging

        Never log the card number. Link: [[retry]].
        """,
    "projects/checkout/runbook.md": "# Runbook\n\nRestart checkout-api pods.\n",
    "README.md": "# Not served\n",
    "notes/loose.md": "# Also not served\n",
}


def _ids(api: Briefd) -> dict[str, str]:
    rows = api.store.conn.execute(
        "SELECT c.id, d.path, c.heading FROM chunks c JOIN documents d ON d.id = c.doc_id"
    )
    return {f"{r['path']}#{r['heading']}": r["id"] for r in rows}


def test_first_index_reports_documents_chunks_and_skips(
    api: Briefd, write_files: WriteFiles
) -> None:
    write_files(FILES)
    report = api.index()
    assert report.documents == 3
    assert report.chunks == 4
    assert report.added == (
        "conventions/logging.md",
        "domain/retry.md",
        "projects/checkout/runbook.md",
    )
    outside = (
        "outside every scope (domain/, conventions/, projects/*/); not served: "
        "add its folder to 'scopes' in briefd.yaml"
    )
    assert [(s.path, s.reason) for s in report.skipped] == [
        ("README.md", outside),
        ("notes/loose.md", outside),
    ]
    journal = api.store.conn.execute("PRAGMA journal_mode").fetchone()[0]
    assert journal == "wal"
    assert api.store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_reindex_without_change_touches_nothing(api: Briefd, write_files: WriteFiles) -> None:
    write_files(FILES)
    first = api.index()
    again = api.index()
    assert (again.added, again.changed, again.deleted, again.unchanged) == ((), (), (), 3)
    assert again.fingerprint == first.fingerprint


def test_editing_one_file_reindexes_only_it(api: Briefd, write_files: WriteFiles) -> None:
    root = write_files(FILES)
    api.index()
    before = _ids(api)
    path = root / "domain/retry.md"
    path.write_text(path.read_text().replace("stolen card", "lost or stolen card"))
    report = api.index()
    assert report.changed == ("domain/retry.md",)
    assert report.added == report.deleted == ()
    assert _ids(api) == before  # same sections, same ids
    hit = api.search(SearchRequest("lost stolen", scopes=("domain",))).hits[0]
    assert hit.heading == "Hard declines"
    assert "lost or stolen card" in hit.content


def test_deleted_file_is_removed_with_its_chunks(api: Briefd, write_files: WriteFiles) -> None:
    root = write_files(FILES)
    api.index()
    (root / "conventions/logging.md").unlink()
    report = api.index()
    assert report.deleted == ("conventions/logging.md",)
    assert api.search(SearchRequest("log", scopes=("all",))).hits == ()


def test_a_source_with_no_document_left_keeps_the_index(
    api: Briefd, write_files: WriteFiles
) -> None:
    """An empty source (a typo'd path, an unmounted volume) is an error that commits nothing:
    the last good index keeps being served."""
    root = write_files(FILES)
    first = api.index()
    for path in FILES:
        (root / path).unlink()
    with pytest.raises(
        SourceError, match=rf"found no document in {root} where the index holds {first.documents}"
    ):
        api.index()
    assert api.documents() and len(api.documents()) == first.documents
    assert api.search(SearchRequest("soft declines")).hits


def test_a_source_one_folder_off_into_an_index_names_the_folder_to_give(
    api: Briefd, write_files: WriteFiles
) -> None:
    """README: a source one folder off is told the folder to give instead. A first run said
    so; a run into an index that holds documents said only "check that the source path is
    right" (``--source kb/domain`` for ``kb``)."""
    root = write_files(FILES)
    first = api.index()
    settings = api.settings
    assert settings.source is not None
    off = replace(settings, source=settings.source / "domain")
    with Briefd(off) as wrong, pytest.raises(SourceError) as refused:
        wrong.index()
    assert str(refused.value) == (
        f"found no document in {root / 'domain'} where the index holds {first.documents}: the "
        f"index is left as it was; {root / 'domain'} is itself the folder domain/ of the "
        f"scopes: give the folder that holds it ({root}) as the source (--source, or source: "
        f"in briefd.yaml). To empty the index, delete {settings.db}"
    )
    assert len(api.documents()) == first.documents


def test_index_runs_on_one_index_take_turns(api: Briefd, write_files: WriteFiles) -> None:
    """A run waits while another holds the index's run lock, then sees the files as they are
    by then (a file deleted meanwhile is not served)."""
    root = write_files(FILES)
    api.index()
    db = api.settings.db
    done: list[IndexReport] = []
    with db.with_name(db.name + ".index.lock").open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another run, in the middle of its work
        waiting = threading.Thread(target=lambda: done.append(api.index()))
        waiting.start()
        time.sleep(0.5)
        assert not done  # it waits for the run holding the lock
        (root / "conventions/logging.md").unlink()
        fcntl.flock(held, fcntl.LOCK_UN)
    waiting.join(timeout=30)
    assert done and done[0].deleted == ("conventions/logging.md",)


def test_deleting_the_db_gives_same_ids_and_results(
    settings: Settings, write_files: WriteFiles
) -> None:
    write_files(FILES)
    query = SearchRequest("retry card", scopes=("all",))
    with Briefd(settings) as api:
        api.index()
        (write_files({"domain/extra.md": "# Extra\n\nRetry card payments carefully.\n"}))
        api.index()
        ids, hits = _ids(api), api.search(query).hits
    settings.db.unlink()
    with Briefd(settings) as api:
        api.index()
        assert _ids(api) == ids
        assert api.search(query).hits == hits


def test_rebuild_recreates_from_source(api: Briefd, write_files: WriteFiles) -> None:
    write_files(FILES)
    api.index()
    ids = _ids(api)
    report = api.index(rebuild=True)
    assert report.rebuilt and len(report.added) == 3
    assert _ids(api) == ids


def test_rebuild_replaces_a_corrupt_file(settings: Settings, write_files: WriteFiles) -> None:
    write_files(FILES)
    settings.db.parent.mkdir(parents=True, exist_ok=True)
    settings.db.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(
        StoreError, match=r"is not a usable briefd index .*`briefd index --rebuild`"
    ):
        Briefd(settings).index()
    with Briefd(settings) as api:
        assert api.index(rebuild=True).documents == 3


def test_bad_front_matter_is_reported_not_fatal(api: Briefd, write_files: WriteFiles) -> None:
    write_files(
        {**FILES, "domain/broken.md": "---\ntitle: [x\n---\n# Broken\n\nStill searchable.\n"}
    )
    report = api.index()
    assert [(p.path, p.problem.split(" (")[0]) for p in report.problems] == [
        ("domain/broken.md", "front matter is not valid YAML at line 3")
    ]
    assert api.search(SearchRequest("still searchable")).hits[0].doc_path == "domain/broken.md"


def test_non_utf8_file_is_skipped_with_reason(api: Briefd, write_files: WriteFiles) -> None:
    root = write_files(FILES)
    (root / "domain/latin1.md").write_bytes("# Caf\xe9\n".encode("latin-1"))
    report = api.index()
    said = (
        "not valid UTF-8 text: byte 0xE9 at line 1, column 6 (é in Windows-1252); fix that "
        "character, or save the file as UTF-8"
    )
    assert ("domain/latin1.md", said) in [(s.path, s.reason) for s in report.skipped]


def test_a_markdown_file_with_an_upper_case_extension_is_reported(
    api: Briefd, write_files: WriteFiles
) -> None:
    write_files({**FILES, "domain/notes.MD": "# Notes\n\nShouted.\n", "domain/img.PNG": "x"})
    report = api.index()
    reasons = {s.path: s.reason for s in report.skipped}
    assert reasons["domain/notes.MD"].startswith("its extension is not in lower case")
    assert "domain/img.PNG" not in reasons  # not a document whatever its case


def test_markdown_under_another_extension_is_reported_with_the_pattern_to_add(
    api: Briefd, write_files: WriteFiles, settings: Settings
) -> None:
    """A Docusaurus folder's pages are .mdx, an older wiki's .mdown or .mkd: index.include
    (``**/*.md``, ``**/*.markdown``) passed them over without a word, so `briefd index` said
    it indexed the other documents and searches never found these, with nothing to act on."""
    write_files(
        {
            **FILES,
            "domain/payouts.mdx": "# Payouts\n\nPayouts run nightly.\n",
            "domain/old/fees.mkd": "# Fees\n\nFees.\n",
            "domain/drafts.mdx": "# Drafts\n",
            "domain/.gitignore": "drafts.mdx\n",
            "README.mdx": "# Readme\n",
            "domain/diagram.mdx.png": "x",
        }
    )
    skipped = api.index().skipped
    reasons = {s.path: s.reason for s in skipped if not s.path.endswith(".md")}
    assert reasons == {
        "domain/old/fees.mkd": "Markdown by its extension (.mkd), which index.include does not "
        "match; add '**/*.mkd' to index.include to index it, or leave it out with index.exclude",
        "domain/payouts.mdx": "Markdown by its extension (.mdx), which index.include does not "
        "match; add '**/*.mdx' to index.include to index it, or leave it out with index.exclude",
    }
    # README.mdx is outside every scope, drafts.mdx ignored, diagram.mdx.png no Markdown: unsaid
    include = ["**/*.md", "**/*.mdx"]
    with Briefd(with_overrides(settings, {"index.include": include}), embedder=None) as wider:
        report = wider.index()
        assert "domain/payouts.mdx" in report.added
        assert wider.search(SearchRequest("payouts nightly")).hits[0].doc_path == (
            "domain/payouts.mdx"
        )


def test_a_stray_byte_keeps_the_version_indexed_before(
    api: Briefd, write_files: WriteFiles
) -> None:
    """A document that stops being valid UTF-8 (a stray byte from an editor or a merge) stays
    served as it was, with a warning, until the file is fixed."""
    root = write_files(FILES)
    api.index()
    retry = root / "domain/retry.md"
    good = retry.read_bytes()
    retry.write_bytes(good + b"\xff\xfe")
    report = api.index()
    assert report.deleted == ()
    reasons = {s.path: s.reason for s in report.skipped}
    assert reasons["domain/retry.md"].startswith("not valid UTF-8 text: byte 0xFF at line ")
    assert reasons["domain/retry.md"].endswith(
        "(ÿ in Windows-1252); fix that character, or save the file as UTF-8; the version "
        "indexed before is kept"
    )
    assert api.search(SearchRequest("soft declines")).hits[0].doc_path == "domain/retry.md"
    retry.write_bytes(good.replace(b"exponential backoff", b"jittered backoff"))
    fixed = api.index()
    assert fixed.changed == ("domain/retry.md",)
    assert "domain/retry.md" not in [s.path for s in fixed.skipped]
    assert api.search(SearchRequest("jittered")).hits[0].doc_path == "domain/retry.md"


def test_control_characters_never_reach_the_index(api: Briefd, write_files: WriteFiles) -> None:
    write_files(
        {**FILES, "domain/odd.md": "# Odd\n\n## Bytes\n\nNUL\x00 here, ESC\x1b[31m red,\ttab.\n"}
    )
    api.index()
    hit = api.search(SearchRequest("bytes red")).hits[0]
    assert hit.doc_path == "domain/odd.md"
    assert "NUL here, ESC red,\ttab." in hit.content and "\x00" not in hit.content


def test_gitignore_and_exclude_globs(settings: Settings, write_files: WriteFiles) -> None:
    from dataclasses import replace

    root = write_files({**FILES, ".gitignore": "drafts/\n", "domain/drafts/wip.md": "# WIP\n"})
    settings = replace(settings, index=replace(settings.index, exclude=("projects/**",)))
    with Briefd(settings) as api:
        report = api.index(root)
        paths = {r[0] for r in api.store.conn.execute("SELECT path FROM documents")}
    assert paths == {"domain/retry.md", "conventions/logging.md"}
    assert report.documents == 2


def test_missing_index_error_says_what_to_do(settings: Settings) -> None:
    """With the source in the settings the command is plain `briefd index` (``--source DIR``
    read as if the settings named none); without one, it says which flag it needs."""
    with pytest.raises(IndexNotFoundError) as caught:
        Briefd(settings).search(SearchRequest("x"))
    assert str(caught.value) == (
        f"no index at {settings.db}; build one with `briefd index` "
        f"(source: {settings.source}, from the settings)"
    )
    with pytest.raises(IndexNotFoundError) as caught:
        Briefd(replace(settings, source=None)).search(SearchRequest("x"))
    assert str(caught.value) == (
        f"no index at {settings.db}; build one with `briefd index --source DIR`"
    )


def test_newer_schema_is_refused(settings: Settings, write_files: WriteFiles) -> None:
    write_files(FILES)
    Briefd(settings).index()
    conn = sqlite3.connect(settings.db)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(StoreError, match="newer than this briefd understands"):
        Store.open(settings.db)


def test_a_newer_index_is_never_rebuilt_over(settings: Settings, write_files: WriteFiles) -> None:
    """`briefd index --rebuild` with an older briefd (a rollback) must not start the newer
    index over: its query log, feedback and proposals cannot be made again from git."""
    write_files(FILES)
    Briefd(settings).index()
    conn = sqlite3.connect(settings.db)
    conn.execute(
        "INSERT INTO query_log (kind, query, scopes, results, latency_ms, created_at) "
        "VALUES ('search', 'refund window', 'domain', 1, 3.0, '2026-12-01T10:00:00+00:00')"
    )
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError) as refused:
        Briefd(settings).index(rebuild=True)
    assert "a newer briefd made it" in str(refused.value)
    assert "--rebuild included" in str(refused.value)
    conn = sqlite3.connect(settings.db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1
    assert conn.execute("SELECT query FROM query_log").fetchall() == [("refund window",)]
    conn.close()


def test_fts_stays_in_sync_with_chunks(api: Briefd, write_files: WriteFiles) -> None:
    root = write_files(FILES)
    api.index()
    (root / "domain/retry.md").write_text("# Retry\n\nCompletely new words here.\n")
    api.index()
    conn = api.store.conn
    conn.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)")
    count = conn.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'exponential'")
    assert count.fetchone()[0] == 0


def test_schema_doc_is_generated_from_migrations() -> None:
    doc = schema_doc()
    assert "## m001_documents_chunks" in doc
    assert "CREATE VIRTUAL TABLE chunks_fts USING fts5(" in doc
    assert "tokenize='porter unicode61 remove_diacritics 2'" in doc


def test_disk_path_that_cannot_be_created(tmp_path: Path, settings: Settings) -> None:
    from dataclasses import replace

    blocker = tmp_path / "file"
    blocker.write_text("x")
    db = blocker / "sub" / "index.db"
    with pytest.raises(StoreError) as refused:
        Briefd(replace(settings, db=db)).index(tmp_path)
    assert str(refused.value) == (
        f"cannot create the index {db} ({blocker} is a file, not a folder); pass --db (or 'db:' "
        "in briefd.yaml) a path in a folder you can write"
    )


def test_symlinks_out_of_the_source_are_skipped_not_served(
    api: Briefd, write_files: WriteFiles, tmp_path: Path
) -> None:
    root = write_files({"domain/inside.md": "# Inside\n\nKept here.\n"})
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\nprivate key material\n", encoding="utf-8")
    (root / "domain" / "leak.md").symlink_to(secret)
    (root / "domain" / "alias.md").symlink_to(root / "domain" / "inside.md")
    report = api.index(root)
    assert [(s.path, s.reason) for s in report.skipped] == [
        (
            "domain/leak.md",
            "symbolic link to a file outside the knowledge source; not served: move or copy the "
            "file into the knowledge source",
        )
    ]
    assert report.documents == 2  # a link inside the source is an ordinary document
    assert api.search(SearchRequest("private key material")).hits == ()


def test_a_new_chunker_or_chunking_setting_rechunks_every_document(
    settings: Settings, write_files: WriteFiles
) -> None:
    write_files(FILES)
    with Briefd(settings, embedder=None) as api:
        first = api.index()
        assert not first.rechunked
        again = api.index()
        assert not again.rechunked and again.unchanged == first.documents
        with api.store.write() as conn:  # as an index built by an older briefd
            conn.execute("UPDATE index_meta SET value = 'chunker 1' WHERE key = 'parse'")
        before = api.search(SearchRequest("soft declines", scopes=("all",))).hits
        redone = api.index()
        assert redone.rechunked and not redone.changed and not redone.added
        assert redone.unchanged == first.documents
        after = api.search(SearchRequest("soft declines", scopes=("all",))).hits
        assert [h.chunk_id for h in after] == [h.chunk_id for h in before]
    small = with_overrides(settings, {"chunking.max_tokens": 20, "chunking.target_tokens": 10})
    with Briefd(small, embedder=None) as api:
        assert api.index().rechunked
        assert not api.index().rechunked


def test_a_new_chunker_rewrites_only_the_documents_it_reads_otherwise(
    settings: Settings, write_files: WriteFiles
) -> None:
    """Re-chunked by an upgraded briefd, a document that comes out as the index holds it is
    not written again: rewriting all 2,000 documents of a repository cost 8.1 CPU-s where
    their parse alone takes a fraction (its chunks, postings and vocabulary were redone).
    Those that come out otherwise (here: the old briefd's line numbers and tags) are."""
    write_files(FILES)
    rows = (
        "SELECT d.path, d.indexed_at, d.tags, c.rowid, c.start_line FROM chunks c "
        "JOIN documents d ON d.id = c.doc_id ORDER BY c.rowid"
    )
    with Briefd(settings, embedder=None) as api:
        api.index()
        before = [tuple(r) for r in api.store.conn.execute(rows)]
        with api.store.write() as conn:  # as an older chunker and front-matter reader left it
            conn.execute("UPDATE index_meta SET value = 'chunker 1' WHERE key = 'parse'")
            conn.execute(
                "UPDATE chunks SET start_line = start_line + 1 WHERE doc_id = "
                "(SELECT id FROM documents WHERE path = 'domain/retry.md')"
            )
            conn.execute(
                "UPDATE documents SET tags = '[\"old\"]' WHERE path = 'conventions/logging.md'"
            )
            conn.execute("UPDATE documents SET indexed_at = '2020-01-01T00:00:00+00:00'")
        redone = api.index()
        assert redone.rechunked and redone.unchanged == redone.documents == 3
        after = {r[0]: tuple(r)[1:] for r in api.store.conn.execute(rows)}
        kept = after["projects/checkout/runbook.md"]
        assert kept[0] == "2020-01-01T00:00:00+00:00"  # not written again
        assert kept[2:] == before[-1][3:]  # the same chunk row
        for path in ("domain/retry.md", "conventions/logging.md"):
            assert after[path][0] != "2020-01-01T00:00:00+00:00"  # written as parsed now
        assert [r[4] for r in api.store.conn.execute(rows) if r[0] == "domain/retry.md"] == [
            r[4] for r in before if r[0] == "domain/retry.md"
        ]
        assert after["conventions/logging.md"][1] == "[]"
        hits = api.search(SearchRequest("soft declines", scopes=("all",))).hits
        assert hits[0].doc_path == "domain/retry.md"
        assert not api.index().rechunked


def test_a_stub_document_can_be_found(api: Briefd, write_files: WriteFiles) -> None:
    write_files({"domain/wombats.md": "# Onboarding wombats\n\n## Checklist\n"})
    api.index()
    hits = api.search(SearchRequest("wombats checklist", scopes=("all",))).hits
    assert [h.doc_path for h in hits] == ["domain/wombats.md"]
    assert [s.chunks for s in api.scopes()] == [1]


def test_awkward_files_are_skipped_with_reasons(api: Briefd, write_files: WriteFiles) -> None:
    root = write_files({"domain/good.md": "# Good\n\nRefund policy.\n"})
    (root / "domain" / "l1.md").symlink_to("l2.md")
    (root / "domain" / "l2.md").symlink_to("l1.md")
    os.mkfifo(root / "domain" / "pipe.md")
    latin1 = os.open(os.fsencode(root / "domain") + b"/caf\xe9.md", os.O_CREAT | os.O_WRONLY)
    os.write(latin1, b"# Cafe\n")  # a file name that is not UTF-8
    os.close(latin1)
    report = api.index()
    reasons = {s.path: s.reason for s in report.skipped}
    assert reasons["domain/l1.md"] == reasons["domain/l2.md"] == "symbolic link loop; not served"
    assert reasons["domain/pipe.md"].startswith("not a regular file")
    assert reasons["domain/caf\ufffd.md"].startswith("its name is not valid UTF-8")
    assert report.documents == 1


def test_a_file_that_is_not_an_index_is_never_altered(
    settings: Settings, write_files: WriteFiles, tmp_path: Path
) -> None:
    write_files(FILES)
    notes = tmp_path / "notes.md"
    notes.write_text("# My notes\n\nKeep me.\n")
    with pytest.raises(StoreError, match="not an SQLite file, so not a briefd index"):
        Briefd(with_overrides(settings, {"db": str(notes)})).index(rebuild=True)
    assert notes.read_text() == "# My notes\n\nKeep me.\n"
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER)")
    with pytest.raises(StoreError, match="database of another application"):
        Briefd(with_overrides(settings, {"db": str(other)})).index(rebuild=True)
    with sqlite3.connect(other) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master")]
    assert tables == ["orders"]


def test_rebuild_replaces_an_index_damaged_inside(
    settings: Settings, write_files: WriteFiles
) -> None:
    write_files(FILES)
    with Briefd(settings) as api:
        api.index()
    with settings.db.open("r+b") as db:  # a page in the middle overwritten
        db.seek(4096 * 3)
        db.write(os.urandom(4096))
    with Briefd(settings) as api:
        assert api.index(rebuild=True).documents == 3
        assert api.search(SearchRequest("soft declines", scopes=("all",))).hits


def test_moves_are_followed_to_where_a_document_is_now(
    api: Briefd, write_files: WriteFiles
) -> None:
    """K5: the index records documents it sees move with their content unchanged, for broken
    links to say where they went: a → b then b → c leads to c from a and b; a former path
    that is a document again (moved back, or a new file there) is no move."""
    root = write_files({"domain/a.md": "# A\n\nAlpha.\n", "domain/x.md": "# X\n\nEx.\n"})
    api.index(root)

    def move(old: str, new: str) -> dict[str, str]:
        (root / new).parent.mkdir(parents=True, exist_ok=True)
        (root / old).rename(root / new)
        api.index(root)
        with api.store.read() as conn:
            return docs_table.moved_documents(conn)

    assert move("domain/a.md", "domain/b.md") == {"domain/a.md": "domain/b.md"}
    assert move("domain/b.md", "domain/old/c.md") == {
        "domain/a.md": "domain/old/c.md",
        "domain/b.md": "domain/old/c.md",
    }
    assert move("domain/x.md", "domain/y.md") == {
        "domain/a.md": "domain/old/c.md",
        "domain/b.md": "domain/old/c.md",
        "domain/x.md": "domain/y.md",
    }
    back = {"domain/b.md": "domain/a.md", "domain/old/c.md": "domain/a.md"}  # a is no move
    assert move("domain/old/c.md", "domain/a.md") == {"domain/x.md": "domain/y.md", **back}
    (root / "domain/x.md").write_text("# Another X\n\nNew.\n")
    api.index(root)
    with api.store.read() as conn:
        assert docs_table.moved_documents(conn) == back
