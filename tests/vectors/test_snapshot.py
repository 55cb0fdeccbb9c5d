"""The quantised rows saved beside the index file (O4): read back while the chunks are the same,
never when they changed or a vector is missing, and a bad file costs only a load from SQLite."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from briefd.api import Briefd
from briefd.embeddings.fake import FakeEmbedder
from briefd.settings import Settings
from briefd.vectors import snapshot, store
from tests.conftest import WriteFiles

DOCS = {f"domain/topic-{n}.md": f"# Topic {n}\n\nSection {n} about refunds.\n" for n in range(6)}


def _rows(db: Path, model: str) -> tuple[snapshot.Rows, list[str]]:
    """The rows through a snapshot (every size kept), and the vector reads SQLite saw (the
    key's look at one row's size is none)."""
    conn = sqlite3.connect(db)
    reads: list[str] = []
    conn.set_trace_callback(lambda sql: reads.append(sql) if "embedding" in sql else None)
    try:
        return snapshot.rows(conn, model, db, minimum=0), reads
    finally:
        conn.close()


def _same(a: snapshot.Rows, b: snapshot.Rows) -> bool:
    fields = ("coarse", "fine", "coarse_scale", "fine_scale")
    arrays = all(np.array_equal(getattr(a[2], f), getattr(b[2], f)) for f in fields)
    return a[0] == b[0] and a[1] == b[1] and arrays


def _snapshots(db: Path) -> list[Path]:
    return sorted(db.parent.glob(f"{db.name}{snapshot.SUFFIX}*.npz"))


@pytest.fixture
def embedder(settings: Settings, write_files: WriteFiles) -> FakeEmbedder:
    """The documents indexed with vectors; the embedder that made them."""
    write_files(DOCS)
    made = FakeEmbedder()
    with Briefd(settings, embedder=made) as api:
        api.index()
    return made


def test_the_rows_come_back_from_the_file_while_the_chunks_are_the_same(
    settings: Settings, write_files: WriteFiles, embedder: FakeEmbedder
) -> None:
    db = settings.db
    with sqlite3.connect(db) as conn:
        from_sqlite = store.load_quantized(conn, embedder.model_id)
    first, reads = _rows(db, embedder.model_id)
    assert reads and len(_snapshots(db)) == 1 and _same(first, from_sqlite)
    again, reads = _rows(db, embedder.model_id)
    assert reads == [] and _same(again, from_sqlite)  # from the file: no vector read
    with Briefd(settings, embedder=embedder) as api, api.store.write() as conn:
        last = "SELECT embed_hash FROM chunks ORDER BY rowid DESC LIMIT 1"  # same rowids, but
        conn.execute(f"UPDATE chunks SET embed_hash = ({last}) WHERE rowid = 1")  # one's vector
        swapped = store.load_quantized(conn, embedder.model_id)  # is another text's now
    moved, reads = _rows(db, embedder.model_id)
    assert reads and _same(moved, swapped) and not _same(moved, from_sqlite)
    write_files({"domain/topic-2.md": "# Topic 2\n\nNow about settlement.\n"})
    with Briefd(settings, embedder=embedder) as api:
        api.index()
    changed, reads = _rows(db, embedder.model_id)
    assert reads and len(_snapshots(db)) == 1  # read from SQLite, the stale file replaced
    with sqlite3.connect(db) as conn:
        assert _same(changed, store.load_quantized(conn, embedder.model_id))


def test_no_snapshot_with_a_vector_missing_and_a_bad_file_is_replaced(
    settings: Settings, embedder: FakeEmbedder
) -> None:
    db = settings.db
    with sqlite3.connect(db) as conn:  # a chunk whose vector is not there (yet)
        first = "SELECT embed_hash FROM chunks ORDER BY rowid LIMIT 1"
        conn.execute(f"DELETE FROM chunk_vectors WHERE embed_hash = ({first})")
    partial, reads = _rows(db, embedder.model_id)
    assert reads and len(partial[0]) == len(DOCS) - 1 and _snapshots(db) == []
    with Briefd(settings, embedder=embedder) as api:
        api.index()  # embeds the missing vector again
    _rows(db, embedder.model_id)
    [saved] = _snapshots(db)
    saved.write_bytes(saved.read_bytes()[:200])  # cut short
    rows, reads = _rows(db, embedder.model_id)
    assert reads and len(rows[0]) == len(DOCS)
    assert _rows(db, embedder.model_id)[1] == []  # written again, whole


def test_a_folder_that_cannot_be_written_only_costs_the_load(
    settings: Settings, embedder: FakeEmbedder, tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-folder" / "index.db"  # where the file would go: nowhere
    with sqlite3.connect(settings.db) as conn:
        rows = snapshot.rows(conn, embedder.model_id, missing, minimum=0)
        assert _same(rows, store.load_quantized(conn, embedder.model_id))
    assert not missing.parent.exists()


STALLED_SAVE = """
import sqlite3, sys, time
from pathlib import Path
from briefd.vectors import snapshot

def stall(self, target):  # the rename that ends the save: killed before it
    print("written", flush=True)
    time.sleep(3600)

Path.replace = stall
snapshot.rows(sqlite3.connect(sys.argv[1]), sys.argv[2], Path(sys.argv[1]), minimum=0)
"""


def test_the_partial_file_of_a_process_killed_while_saving_is_removed(
    settings: Settings, embedder: FakeEmbedder
) -> None:
    """A process killed while saving a snapshot left its partial file beside the index for
    good (10 MB at 13,500 chunks, one more per kill); the next save removes it, and leaves
    alone the one a live process is writing."""
    db = settings.db
    saving = subprocess.Popen(
        [sys.executable, "-c", STALLED_SAVE, str(db), embedder.model_id],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert saving.stdout is not None and saving.stdout.readline() == "written\n"
    saving.send_signal(signal.SIGKILL)
    saving.wait()
    saving.stdout.close()
    [left] = db.parent.glob(f"{db.name}{snapshot.SUFFIX}*.npz.{saving.pid}.partial.npz")
    live = db.with_name(f"{db.name}{snapshot.SUFFIX}0123abcd.npz.{os.getpid()}.partial.npz")
    live.write_bytes(b"another process is writing this one")

    rows, reads = _rows(db, embedder.model_id)

    assert reads and len(rows[0]) == len(DOCS)
    assert not left.exists()
    assert live.exists()
    assert [p.name for p in _snapshots(db) if ".partial" not in p.name] == [
        left.name.split(f".{saving.pid}.")[0]
    ]
