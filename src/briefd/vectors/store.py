"""Vectors in SQLite: L2-normalised float32 little-endian blobs keyed by (model, text hash).

Keying by the hash of the embedded text (not the chunk id) means a rebuild, a moved section or
a duplicate passage never costs a second embedding, and vectors written before a crash are kept.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from briefd.embeddings.runtime import give_back_memory
from briefd.markdown.passages import passage_hash, passage_text, passage_windows
from briefd.store.db import Store
from briefd.vectors.quantized import Quantized

Matrix = npt.NDArray[np.float32]
# Another model's rows, as two ranges of the primary key (model, embed_hash): ``model != ?``
# scans the whole table, every vector's blob with it (4.4 GB at a million chunks)
_OTHER_MODEL = "(model < ?1 OR model > ?1)"
LOAD_BLOCK = 1024  # vectors read and quantised at a time: ~6 MB of transient float32


def to_blob(vector: npt.NDArray[np.float32]) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def from_blobs(blobs: Sequence[bytes], dim: int) -> Matrix:
    if not blobs:
        return np.zeros((0, dim), dtype=np.float32)
    joined = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), dim)
    return joined.astype(np.float32)


def backfill_hashes(conn: sqlite3.Connection) -> None:
    """Chunks written before vectors existed get their passage hash."""
    rows = conn.execute(
        "SELECT rowid, title, heading_path, content FROM chunks WHERE embed_hash = ''"
    ).fetchall()
    conn.executemany(
        "UPDATE chunks SET embed_hash = ? WHERE rowid = ?",
        [(passage_hash(passage_text(r[1], json.loads(r[2]), r[3])), r[0]) for r in rows],
    )


def missing(
    conn: sqlite3.Connection, model: str, exclude_docs: Iterable[str] = ()
) -> Iterator[tuple[str, str]]:
    """(hash, passage text) of each stored chunk that has no vector for ``model``, as read."""
    skip = set(exclude_docs)
    rows = conn.execute(
        "SELECT d.path, c.embed_hash, c.title, c.heading_path, c.content FROM chunks c "
        "JOIN documents d ON d.id = c.doc_id "
        "LEFT JOIN chunk_vectors v ON v.model = ? AND v.embed_hash = c.embed_hash "
        "WHERE v.embed_hash IS NULL",
        (model,),
    )
    for r in rows:
        if r[0] not in skip:
            yield r[1], passage_text(r[2], json.loads(r[3]), r[4])


def present(conn: sqlite3.Connection, model: str, hashes: Iterable[str]) -> set[str]:
    wanted = list(set(hashes))
    found: set[str] = set()
    for start in range(0, len(wanted), 500):
        part = wanted[start : start + 500]
        marks = ", ".join("?" * len(part))
        found.update(
            r[0]
            for r in conn.execute(
                f"SELECT embed_hash FROM chunk_vectors WHERE model = ? AND embed_hash IN ({marks})",
                (model, *part),
            )
        )
    return found


def save(conn: sqlite3.Connection, model: str, hashes: Sequence[str], vectors: Matrix) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO chunk_vectors (model, embed_hash, dim, embedding) VALUES (?, ?, ?, ?)",
        [
            (model, h, int(vectors.shape[1]), to_blob(v))
            for h, v in zip(hashes, vectors, strict=True)
        ],
    )


def windows_missing(
    conn: sqlite3.Connection, words: int, exclude_docs: Iterable[str] = ()
) -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """(chunk passage hash, its windows: (window hash, text) of ``words`` words) of each
    stored chunk not yet cut at that size (an empty list: nothing to cut), as read."""
    if words <= 0:
        return
    skip = set(exclude_docs)
    rows = conn.execute(
        "SELECT d.path, c.embed_hash, c.title, c.heading_path, c.content FROM chunks c "
        "JOIN documents d ON d.id = c.doc_id "
        "LEFT JOIN chunk_windows w ON w.embed_hash = c.embed_hash AND w.words = ? "
        "WHERE w.embed_hash IS NULL",
        (words,),
    )
    for r in rows:
        if r[0] not in skip:
            yield r[1], windows_of(r[2], json.loads(r[3]), r[4], words)


def windows_of(
    title: str, heading_path: Sequence[str], content: str, words: int
) -> list[tuple[str, str]]:
    """(window hash, text) of each window of one chunk (:func:`passage_windows`)."""
    return [(passage_hash(t), t) for t in passage_windows(title, heading_path, content, words)]


def window_count(conn: sqlite3.Connection, words: int) -> int:
    """How many windows of ``words`` words the index's chunks are cut into."""
    if words <= 0:
        return 0
    row = conn.execute(
        "SELECT count(*) FROM chunk_windows WHERE words = ? AND position >= 0", (words,)
    ).fetchone()
    return int(row[0])


def save_windows(
    conn: sqlite3.Connection, words: int, windows: dict[str, list[tuple[str, str]]]
) -> None:
    """Record each chunk's windows (a chunk with none gets its -1 row)."""
    conn.executemany(
        "INSERT OR REPLACE INTO chunk_windows (embed_hash, words, position, window_hash) "
        "VALUES (?, ?, ?, ?)",
        [
            (chunk, words, position, window)
            for chunk, cut in windows.items()
            for position, window in (enumerate(h for h, _ in cut) if cut else [(-1, "")])
        ],
    )


def prune(conn: sqlite3.Connection, model: str, words: int = 0) -> int:
    """Drop the windows of chunks gone and of another window size than ``words``, the vectors
    no chunk or window uses, and other models' vectors once this model covers every chunk."""
    conn.execute(
        "DELETE FROM chunk_windows WHERE words != ? OR embed_hash NOT IN "
        "(SELECT embed_hash FROM chunks)",
        (words,),
    )
    removed = conn.execute(
        "DELETE FROM chunk_vectors WHERE model = ? AND embed_hash NOT IN "
        "(SELECT embed_hash FROM chunks) AND embed_hash NOT IN "
        "(SELECT window_hash FROM chunk_windows)",
        (model,),
    ).rowcount
    if uncovered(conn, model) == 0:
        removed += conn.execute(
            f"DELETE FROM chunk_vectors WHERE {_OTHER_MODEL}", (model,)
        ).rowcount
    return int(removed)


def dims(conn: sqlite3.Connection, model: str) -> set[int]:
    """The sizes of the vectors stored for ``model``: those of its first and last vector in
    key order (none stored: an empty set). Every index run that embeds asks this before it
    stores a vector, and drops them all when the model gives another size now (another model
    answers under its name: ingest's ``_resized``), so one model's vectors share one size and
    two seeks tell it. SELECT DISTINCT dim read every vector of the model, blobs and all: at a
    million chunks 4.4 GB, 5.4 CPU-s and 22-94 s on each index run that embedded anything."""
    found = set()
    for order in ("ASC", "DESC"):
        row = conn.execute(
            f"SELECT dim FROM chunk_vectors WHERE model = ? ORDER BY embed_hash {order} LIMIT 1",
            (model,),
        ).fetchone()
        if row is not None:
            found.add(int(row[0]))
    return found


def drop(conn: sqlite3.Connection, model: str) -> None:
    """Forget ``model``'s vectors and which chunks were cut into windows: all embedded again."""
    conn.execute("DELETE FROM chunk_vectors WHERE model = ?", (model,))
    conn.execute("DELETE FROM chunk_windows")


def partly_embedded(conn: sqlite3.Connection, model: str) -> int:
    """Chunks still without a vector of ``model`` while another model's vectors are kept
    (0: none, or no other model's): an index run is embedding the index with ``model`` (a
    changed model id, one an upgrade brought), or one stopped before it was done. Its vectors
    so far cover part of the index only; the other model's go once they cover all of it."""
    other = conn.execute(f"SELECT 1 FROM chunk_vectors WHERE {_OTHER_MODEL} LIMIT 1", (model,))
    return uncovered(conn, model) if other.fetchone() is not None else 0


def models(conn: sqlite3.Connection) -> list[str]:
    """The models the index holds vectors of, in order: each found by a seek in the primary
    key past the one before (DISTINCT would read every row of the table)."""
    found: list[str] = []
    row = conn.execute("SELECT min(model) FROM chunk_vectors").fetchone()
    while row is not None and row[0] is not None:
        found.append(row[0])
        row = conn.execute(
            "SELECT min(model) FROM chunk_vectors WHERE model > ?", (row[0],)
        ).fetchone()
    return found


def uncovered(conn: sqlite3.Connection, model: str) -> int:
    """How many chunks have no vector for ``model``."""
    row = conn.execute(
        "SELECT count(*) FROM chunks c LEFT JOIN chunk_vectors v "
        "ON v.model = ? AND v.embed_hash = c.embed_hash WHERE v.embed_hash IS NULL",
        (model,),
    ).fetchone()
    return int(row[0])


def load(
    conn: sqlite3.Connection, model: str, words: int = 0
) -> tuple[list[int], list[str], Matrix]:
    """(chunk rowids, scopes, float32 matrix) of every chunk that has a vector for ``model``
    (with ``words``, also a row per window of that size: a chunk's rowid on each)."""
    rowids, scopes, quantized = load_quantized(conn, model, words)
    return rowids, scopes, quantized.matrix()


_CHUNK_ROWS = (
    "FROM chunks c JOIN chunk_vectors v ON v.model = :model AND v.embed_hash = c.embed_hash"
)
_WINDOW_ROWS = (
    "FROM chunks c JOIN chunk_windows w ON w.embed_hash = c.embed_hash AND w.words = :words "
    "JOIN chunk_vectors v ON v.model = :model AND v.embed_hash = w.window_hash"
)

# CROSS JOIN keeps SQLite's join order, chunk → window → vector: left to choose, it starts from
# every vector of the model (the bound model name reads as selective) — 0.55 s a query on
# scifact's index against ~2 ms for a hundred candidates' windows
_CANDIDATE_WINDOWS = (
    "FROM chunks c CROSS JOIN chunk_windows w ON w.embed_hash = c.embed_hash "
    "AND w.words = :words CROSS JOIN chunk_vectors v ON v.model = :model "
    "AND v.embed_hash = w.window_hash"
)


def load_quantized(
    conn: sqlite3.Connection, model: str, words: int = 0
) -> tuple[list[int], list[str], Quantized]:
    """(chunk rowids, scopes, quantised rows) of every chunk that has a vector for ``model``,
    in rowid order; with ``words`` (the gate's calibration), then one row per window of that
    size under its chunk's rowid (a rowid then appears more than once, out of rowid order).

    The int8 rows are allocated once and filled block by block from the cursor, so loading
    50K vectors never holds a float32 copy of them (:mod:`briefd.vectors.quantized`).
    """
    params = {"model": model, "words": words}
    # the chunks in rowid order (their own scan gives it); the windows (read only to fit the
    # gate) as they come: ordering them would sort every window's blob in a temporary B-tree
    parts = [(_CHUNK_ROWS, " ORDER BY c.rowid")] + ([(_WINDOW_ROWS, "")] if words > 0 else [])
    count, dim = _bound(conn, params, words)
    quantized = Quantized.empty(count, dim)
    rowids: list[int] = []
    scopes: list[str] = []
    for part, order in parts:
        select = f"SELECT c.rowid, c.scope, v.embedding {part}{order}"
        _fill(conn.execute(select, params), count, dim, quantized, rowids, scopes)
    give_back_memory()  # the blocks' float32 copies: a server keeps none of them
    if len(rowids) < 0.9 * count:  # many chunks without a vector: keep only what was filled
        return rowids, scopes, quantized.head(len(rowids)).copy()
    return rowids, scopes, quantized.head(len(rowids))


def _bound(conn: sqlite3.Connection, params: dict[str, object], words: int) -> tuple[int, int]:
    """At least as many rows as the vectors to load (every chunk, and with ``words`` every
    window of that size), and their dimension. Counting the chunks that have a vector would
    read every vector's page (0.1-0.17 s at 50K chunks): their blobs live in the key's leaves."""
    count = int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
    if words > 0:
        windows = (
            "SELECT count(*) FROM chunks c JOIN chunk_windows w ON w.embed_hash = c.embed_hash"
        )
        count += int(conn.execute(f"{windows} AND w.words = :words", params).fetchone()[0])
    row = conn.execute("SELECT dim FROM chunk_vectors WHERE model = :model LIMIT 1", params)
    found = row.fetchone()
    return count, int(found[0]) if found else 0


def _fill(
    rows: sqlite3.Cursor,
    count: int,
    dim: int,
    quantized: Quantized,
    rowids: list[int],
    scopes: list[str],
) -> None:
    while len(rowids) < count:
        fetched = rows.fetchmany(min(LOAD_BLOCK, count - len(rowids)))
        if not fetched:
            break
        ids, names, blobs = zip(*fetched, strict=True)
        quantized.put(len(rowids), from_blobs(blobs, dim))
        rowids.extend(ids)
        scopes.extend(names)


def window_vectors(
    conn: sqlite3.Connection, model: str, words: int, rowids: Sequence[int]
) -> tuple[npt.NDArray[np.int64], Matrix]:
    """(chunk rowid per row, float32 rows) of the windows of ``words`` words of the given
    chunks, read from the index file: a query reads its candidates' windows, not every one."""
    wanted = list(dict.fromkeys(int(r) for r in rowids))
    owners: list[int] = []
    blobs: list[bytes] = []
    for start in range(0, len(wanted), 500):
        part = wanted[start : start + 500]
        params: dict[str, object] = {f"r{i}": rowid for i, rowid in enumerate(part)}
        marks = ", ".join(f":{name}" for name in params)
        rows = conn.execute(
            f"SELECT c.rowid, v.embedding {_CANDIDATE_WINDOWS} WHERE c.rowid IN ({marks})",
            {**params, "model": model, "words": words},
        )
        for rowid, blob in rows:
            owners.append(rowid)
            blobs.append(blob)
    dim = len(blobs[0]) // 4 if blobs else 0
    return np.asarray(owners, dtype=np.int64), from_blobs(blobs, dim)


def copy_from(store: Store, donor: Path, model: str) -> int:
    """Copy ``model``'s vectors from another index file, so passages it already embedded are
    not embedded again (an eval subset reuses the vectors of its full set). Returns how many
    vectors were new here."""
    store.conn.execute("ATTACH DATABASE ? AS donor", (str(donor),))
    try:
        with store.write() as conn:
            return int(
                conn.execute(
                    "INSERT OR IGNORE INTO chunk_vectors (model, embed_hash, dim, embedding) "
                    "SELECT model, embed_hash, dim, embedding FROM donor.chunk_vectors "
                    "WHERE model = ?",
                    (model,),
                ).rowcount
            )
    finally:
        store.conn.execute("DETACH DATABASE donor")
