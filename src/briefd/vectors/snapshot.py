"""The quantised rows of a large index, saved beside its file (O4).

Loading 50K vectors from SQLite takes ~0.45 s: every 1.5 KB blob is read and quantised, on
every process start and after every index change. From ``MIN_ROWS`` rows on, the rows
(int8 codes, scales, rowids, scopes) are also saved next to the index file
(``index.db.vectors-<key>.npz``, written atomically) and read back from there in tens of
milliseconds while the key still matches.

The key is a digest of what the rows are made of: the model, and every chunk's rowid with its
embed hash and with its scope, read from two covering indexes (~45 ms at 50K chunks). The same
chunks under the same model have the same vectors (a chunk's vector is stored by the hash of its
text), so a matching key means the saved rows are the rows SQLite would give. A snapshot is
saved only when every chunk had a vector: one that was missing could arrive later under the
same key. A file that cannot be read is ignored (and replaced); a folder that cannot be written
only costs the next load from SQLite. Snapshots of earlier keys are removed when a new one is
saved, and so are the partial files of processes killed while writing one.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import zipfile
from pathlib import Path

import numpy as np

from briefd.embeddings.runtime import give_back_memory
from briefd.folders import sweep_abandoned
from briefd.vectors import store
from briefd.vectors.quantized import Quantized

MIN_ROWS = 10_000  # below this SQLite loads the rows in under ~0.1 s: no file is kept
FORMAT = 1  # part of the key: bump when the file's arrays change
SUFFIX = ".vectors-"

Rows = tuple[list[int], list[str], Quantized]


def rows(
    conn: sqlite3.Connection, model: str, beside: Path | None, minimum: int = MIN_ROWS
) -> Rows:
    """(chunk rowids, scopes, quantised rows) of every chunk with a vector for ``model``, as
    :func:`store.load_quantized` gives them: from the snapshot beside ``beside`` (the index
    file) when its key matches, else from SQLite (and saved, from ``minimum`` rows on)."""
    return keyed_rows(conn, model, beside, minimum)[0]


def keyed_rows(
    conn: sqlite3.Connection, model: str, beside: Path | None, minimum: int = MIN_ROWS
) -> tuple[Rows, str | None]:
    """:func:`rows`, and the key that names them when every chunk has its vector (None when
    some have none, or in memory): the same key, the same rows (the HNSW graph of large
    rows is saved under it, :func:`briefd.vectors.graph.graph`, not hashed from them)."""
    if beside is None:
        return store.load_quantized(conn, model), None
    found = key(conn, model)
    path = beside.with_name(f"{beside.name}{SUFFIX}{found[0]}.npz")
    saved = _read(path)
    if saved is not None:
        return saved, found[0]
    loaded = store.load_quantized(conn, model)
    complete = len(loaded[0]) == found[1]  # every chunk has its vector
    if len(loaded[0]) >= minimum and complete:
        _save(path, loaded)
    return loaded, found[0] if complete else None


def index_file(conn: sqlite3.Connection) -> Path | None:
    """The index's file (beside which its snapshot and HNSW graph are kept); None in memory."""
    row = conn.execute("PRAGMA database_list").fetchone()
    return Path(row[2]) if row and row[2] else None


def key(conn: sqlite3.Connection, model: str) -> tuple[str, int]:
    """The digest of the model, its vectors' size and every chunk's rowid, embed hash and
    scope; the number of chunks."""
    digest = hashlib.blake2b(digest_size=12)
    size = conn.execute("SELECT dim FROM chunk_vectors WHERE model = ? LIMIT 1", (model,))
    dim = (size.fetchone() or (0,))[0]  # another model answering under the name: other rows
    digest.update(f"{FORMAT}:{model}:{dim}:".encode())
    chunks = 0
    for column in ("embed_hash", "scope"):  # each read from its own covering index
        row = conn.execute(
            f"SELECT count(*), group_concat(rowid || ' ' || {column}, ',') FROM chunks"
        ).fetchone()
        chunks = int(row[0])
        digest.update(f"{column}:{row[1] or ''};".encode())
    return digest.hexdigest(), chunks


def _read(path: Path) -> Rows | None:
    if not path.is_file():
        return None
    try:
        with path.open("rb") as handle, np.load(handle, allow_pickle=False) as data:
            names = json.loads(str(data["scope_names"]))
            codes = data["scopes"]
            quantized = Quantized(
                data["coarse"], data["fine"], data["coarse_scale"], data["fine_scale"]
            )
            rowids = data["rowids"]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):  # damaged: SQLite
        return None
    count = len(rowids)
    shapes = (len(quantized.fine), len(quantized.coarse_scale), len(quantized.fine_scale))
    if len(codes) != count or len(quantized) != count or shapes != (count,) * 3:
        return None
    if count and (codes.min() < 0 or codes.max() >= len(names)):
        return None
    return rowids.tolist(), [names[int(c)] for c in codes], quantized


def _save(path: Path, loaded: Rows) -> None:
    """Atomically, then drop the snapshots saved for earlier keys of the same index."""
    rowids, scopes, quantized = loaded
    names = sorted(set(scopes))
    codes = {name: i for i, name in enumerate(names)}
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial.npz")
    try:
        np.savez(
            partial,
            rowids=np.asarray(rowids, dtype=np.int64),
            scopes=np.asarray([codes[s] for s in scopes], dtype=np.int32),
            scope_names=np.asarray(json.dumps(names)),
            coarse=quantized.coarse,
            fine=quantized.fine,
            coarse_scale=quantized.coarse_scale,
            fine_scale=quantized.fine_scale,
        )
        partial.replace(path)
        give_back_memory()  # the arrays' byte copies the zip writer made
        base = path.name.split(SUFFIX)[0]
        for stale in path.parent.glob(f"{base}{SUFFIX}*.npz"):
            if stale != path and ".partial" not in stale.name:  # not another process's
                stale.unlink(missing_ok=True)
        sweep_abandoned(path.parent, f"{base}{SUFFIX}*.partial.npz")
    except OSError:
        partial.unlink(missing_ok=True)
