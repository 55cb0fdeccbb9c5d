"""The stored vectors' bookkeeping (R2, O4) never reads the whole chunk_vectors table: at a
million chunks that table is 4.4 GB, every vector's blob inline, and a query that walks it
costs the first search after every start and index run seconds of reading."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np

from briefd.api import Briefd
from briefd.embeddings.fake import FakeEmbedder
from briefd.settings import Settings
from briefd.vectors import store
from tests.conftest import WriteFiles

ROWS = 3000  # vectors of one model beyond the index's own


def _steps(conn: sqlite3.Connection, call: Callable[[], object]) -> int:
    """SQLite virtual machine steps (in hundreds) that ``call()`` took."""
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    conn.set_progress_handler(count, 100)
    try:
        call()
    finally:
        conn.set_progress_handler(None, 0)
    return steps[0]


def _index(settings: Settings, write_files: WriteFiles, dim: int = 8) -> tuple[Path, str]:
    write_files({f"domain/topic-{n}.md": f"# Topic {n}\n\nRefund rule {n}.\n" for n in range(4)})
    with Briefd(settings, embedder=FakeEmbedder()) as api:
        api.index()
        model = FakeEmbedder().model_id
    db = Path(settings.db)
    conn = sqlite3.connect(db)
    with conn:  # vectors no chunk uses (a large index's worth of rows, in miniature)
        vectors = np.random.default_rng(3).standard_normal((ROWS, dim)).astype(np.float32)
        store.save(conn, model, [f"unused-{i:05d}" for i in range(ROWS)], vectors)
    conn.close()
    return db, model


def test_no_other_models_vectors_is_told_without_reading_every_vector(
    settings: Settings, write_files: WriteFiles
) -> None:
    db, model = _index(settings, write_files)
    conn = sqlite3.connect(db)
    try:
        assert store.partly_embedded(conn, model) == 0
        assert store.models(conn) == [model]
        # a full scan steps through every one of the 3,000 rows (~30 hundred steps or more)
        assert _steps(conn, lambda: store.partly_embedded(conn, model)) < 5
        assert _steps(conn, lambda: store.models(conn)) < 5
    finally:
        conn.close()


def test_the_size_of_the_stored_vectors_is_told_without_reading_every_vector(
    settings: Settings, write_files: WriteFiles
) -> None:
    """Every index run that embeds anything asks it (ingest's _resized): at a million chunks
    a SELECT DISTINCT dim read 4.4 GB, 22-94 s of the run."""
    db, model = _index(settings, write_files, dim=FakeEmbedder().dim)
    conn = sqlite3.connect(db)
    try:
        assert store.dims(conn, model) == {FakeEmbedder().dim}
        assert store.dims(conn, "no-such@model") == set()
        assert _steps(conn, lambda: store.dims(conn, model)) < 5
    finally:
        conn.close()


def test_other_models_are_still_found_and_dropped_once_this_one_covers_the_index(
    settings: Settings, write_files: WriteFiles
) -> None:
    db, model = _index(settings, write_files)
    conn = sqlite3.connect(db)
    try:
        chunks = [r[0] for r in conn.execute("SELECT embed_hash FROM chunks ORDER BY rowid")]
        one = np.ones((1, 8), dtype=np.float32)
        with conn:  # one model sorting before the index's, one after; each covers one chunk
            store.save(conn, "aaa-older@model", chunks[:1], one)
            store.save(conn, "zzz-newer@model", chunks[:1], one)
        assert store.models(conn) == ["aaa-older@model", model, "zzz-newer@model"]
        # this model covers every chunk, so another's being there leaves none to embed
        assert store.partly_embedded(conn, model) == 0
        # a model covering one chunk of the index has the others still to embed
        assert store.partly_embedded(conn, "zzz-newer@model") == len(chunks) - 1
        with conn:
            removed = store.prune(conn, model)
        assert store.models(conn) == [model]
        assert removed >= 2 + ROWS  # the two other models' rows and the unused vectors
    finally:
        conn.close()
