"""The HNSW graph of a large vector index (O4): usearch over briefd's own coarse int8 rows.

The rows are handed over without a copy: each is already scaled to the full int8 range, where
usearch's own float-to-int8 cast would leave e5's small components ~5 bits. The graph is built
on every core and, when the index lives in a file, saved next to it under a digest of the
rows it links (``index.db.hnsw-<digest>.usearch``): a restart, or a reload after an index run
that changed no vector, memory-maps it instead of rebuilding (minutes at a million rows). The
digest is of the key that names the rows when there is one (the snapshot's, of every chunk's
rowid, embed hash and scope: :mod:`briefd.vectors.snapshot`), else of the rows' bytes. A
file that cannot be read is rebuilt; one that cannot be written only costs the next build.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from briefd.folders import sweep_abandoned
from briefd.vectors.quantized import Quantized

CONNECTIVITY = 16  # links per node (M); 32 doubled the build for +0.01 recall@10 at 100K
EXPANSION_ADD = 128  # candidates kept while linking a new node (efConstruction)
BREADTH = 2.0  # graph candidates kept beyond those fetched, per square root of the rows
FORMAT = 1  # part of the file's digest: bump when the graph's build parameters change


def search_breadth(rows: int, k: int, fetch: int) -> int:
    """usearch's ``expansion_search`` (HNSW's ef) to fetch ``fetch`` ≥ ``k`` candidates from
    ``rows``: those plus ``BREADTH`` × √rows, so the search widens with the index but not with
    ``k``. A margin growing with log(rows) was not enough: recall@10 0.98 at 200K but 0.87–0.90
    at 1M with ef 519; the same 1M graph gave 0.938 / 0.952 / 0.964 at ef 1000 / 1500 / 2500."""
    return int(max(fetch, k) + np.ceil(BREADTH * np.sqrt(max(rows, 1))))


def to_int8(query: npt.NDArray[np.float32]) -> npt.NDArray[np.int8]:
    """The query scaled to the full int8 range, as the rows are (cosine ignores the scale)."""
    peak = float(np.abs(query).max()) if query.size else 0.0
    scaled = query * (127 / peak) if peak > 0 else query
    return np.clip(np.rint(scaled), -127, 127).astype(np.int8)


def graph(vectors: Quantized, beside: Path | None = None, key: str | None = None) -> Any:
    """The graph over ``vectors``: mapped from its file beside ``beside`` when one was saved
    for these very rows, else built (and saved there). ``key``: what names the rows already
    (:func:`briefd.vectors.snapshot.keyed_rows`), so they need no hashing (0.3 CPU-s for a
    million rows, on every load after an index run); without it their bytes are hashed."""
    if beside is None:
        return _build(vectors)
    path = _path(beside, _digest(vectors) if key is None else _named(vectors, key))
    mapped = _mapped(path, len(vectors), vectors.dim)
    if mapped is None and key is not None:  # saved under the rows' hash (by an earlier briefd)
        earlier = _path(beside, _digest(vectors))
        mapped = _mapped(earlier, len(vectors), vectors.dim)
        if mapped is not None:  # linked under the key too: an earlier briefd still finds it
            with contextlib.suppress(OSError):  # else found the same way next time
                os.link(earlier, path)
    if mapped is not None:
        return mapped
    ann = _build(vectors)
    _save(ann, path)
    return ann


def _build(vectors: Quantized) -> Any:
    from usearch.index import Index

    ann = Index(
        ndim=vectors.dim,
        metric="cos",
        dtype="i8",
        connectivity=CONNECTIVITY,
        expansion_add=EXPANSION_ADD,
    )
    coarse = vectors.coarse
    shared = bool(coarse.flags.c_contiguous)  # else usearch keeps a copy of its own
    ann.add(np.arange(len(coarse), dtype=np.uint64), coarse, copy=not shared, threads=0)
    return ann


def _digest(vectors: Quantized) -> str:
    digest = hashlib.blake2b(digest_size=12)
    digest.update(f"{FORMAT}:{CONNECTIVITY}:{EXPANSION_ADD}:{vectors.coarse.shape}".encode())
    digest.update(np.ascontiguousarray(vectors.coarse).data)
    return digest.hexdigest()


def _path(beside: Path, digest: str) -> Path:
    return beside.with_name(f"{beside.name}.hnsw-{digest}.usearch")


def _named(vectors: Quantized, key: str) -> str:
    """The digest of the graph of the rows ``key`` names (never one of :func:`_digest`)."""
    digest = hashlib.blake2b(digest_size=12)
    digest.update(f"{FORMAT}:{CONNECTIVITY}:{EXPANSION_ADD}:{vectors.coarse.shape}".encode())
    digest.update(f"rows named {key}".encode())
    return digest.hexdigest()


def _mapped(path: Path, rows: int, dim: int) -> Any:
    from usearch.index import Index

    if not path.is_file():
        return None
    try:
        ann = Index.restore(str(path), view=True)
    except (OSError, RuntimeError, ValueError):
        return None
    if ann is None or len(ann) != rows or ann.ndim != dim:
        return None
    return ann


def _save(ann: Any, path: Path) -> None:
    """Atomically, then drop the graphs saved for earlier rows of the same index (and what
    processes killed while saving one left)."""
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    try:
        ann.save(str(partial))
        partial.replace(path)
        base = path.name.split(".hnsw-")[0]
        for stale in path.parent.glob(f"{base}.hnsw-*.usearch"):
            if stale != path:
                stale.unlink(missing_ok=True)
        sweep_abandoned(path.parent, f"{base}.hnsw-*.usearch.*.partial")
    except (OSError, RuntimeError):
        partial.unlink(missing_ok=True)
