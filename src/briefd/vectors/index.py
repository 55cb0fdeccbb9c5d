"""The in-memory vector index (R2): the rows quantised to two int8 matrices, exact cosine top-k.

Rows are L2-normalised, so cosine is a dot product. The scan reads the coarse int8 rows (a
quarter of float32's bytes) to pick ``RESCORE`` × k candidates, which are re-scored with both
int8 rows — to within ~1e-6 of the float32 cosine, so the ranking is the float32 one at half
its memory (:mod:`briefd.vectors.quantized`). BLAS threads are capped on the query path:
a matrix-vector product is memory-bound, and extra threads only add jitter on small machines.
Above ``ann_threshold`` rows an HNSW index (usearch) answers instead, behind the same method:
the graph links the coarse int8 rows themselves (:mod:`briefd.vectors.graph`), searches as
wide as the index size calls for, and its candidates are re-scored like the scan's, so what it
returns is ordered as the exact path would order it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from threadpoolctl import threadpool_limits

from briefd.vectors.graph import graph, search_breadth, to_int8
from briefd.vectors.quantized import Quantized
from briefd.vectors.store import Matrix

RESCORE = 4  # candidates per wanted row re-scored after the coarse scan (and at least 64)


@dataclass(slots=True)
class VectorIndex:
    model: str
    rowids: npt.NDArray[np.int64]
    scopes: npt.NDArray[np.int32]  # index into scope_names per row
    scope_names: tuple[str, ...]
    vectors: Quantized
    blas_threads: int = 1
    ann: Any = field(default=None, repr=False)
    # row positions in rowid order, and those rowids: a chunk's rows are one run (built once,
    # and only when the rows are not already in strictly ascending rowid order)
    by_rowid: npt.NDArray[np.intp] | None = field(default=None, repr=False)
    sorted_rowids: npt.NDArray[np.int64] | None = field(default=None, repr=False)
    per_chunk: float = field(default=1.0, repr=False)  # rows per chunk (windows: > 1)

    @classmethod
    def build(
        cls,
        model: str,
        rowids: Sequence[int],
        scopes: Sequence[str],
        matrix: Matrix | Quantized,
        blas_threads: int = 1,
        ann_threshold: int = 0,
        ann_beside: Path | None = None,
    ) -> VectorIndex:
        """``matrix``: float rows, or rows already quantised (as :func:`store.load` gives);
        ``ann_beside``: the index file whose HNSW graph may be saved and mapped next to it."""
        names = tuple(sorted(set(scopes)))
        codes = {name: i for i, name in enumerate(names)}
        vectors = matrix if isinstance(matrix, Quantized) else Quantized.of(matrix)
        index = cls(
            model,
            np.asarray(rowids, dtype=np.int64),
            np.asarray([codes[s] for s in scopes], dtype=np.int32),
            names,
            vectors,
            blas_threads,
        )
        if not bool(np.all(np.diff(index.rowids) > 0)):  # windows repeat their chunk's rowid
            index.by_rowid = np.argsort(index.rowids, kind="stable")
            index.sorted_rowids = index.rowids[index.by_rowid]
            chunks = len(np.unique(index.sorted_rowids))
            index.per_chunk = len(index.rowids) / max(1, chunks)
        if ann_threshold and len(rowids) >= ann_threshold:
            index.ann = graph(vectors, ann_beside)
        return index

    def __len__(self) -> int:
        return len(self.rowids)

    @property
    def dim(self) -> int:
        return self.vectors.dim

    @property
    def matrix(self) -> Matrix:
        """Every row as float32: a transient copy for calibration (the index keeps int8)."""
        return self.vectors.matrix()

    def top(
        self, query: npt.NDArray[np.float32], scopes: Sequence[str], k: int
    ) -> list[tuple[int, float]]:
        """(chunk rowid, cosine) of the ``k`` nearest rows within ``scopes``, best first."""
        if not len(self) or k <= 0:
            return []
        wanted = [i for i, name in enumerate(self.scope_names) if name in set(scopes)]
        if not wanted:
            return []
        if self.ann is not None:
            return self._top_ann(query, wanted, k)
        return self._top_exact(query, wanted, k)

    def cosines(self, rowids: Sequence[int], query: npt.NDArray[np.float32]) -> dict[int, float]:
        """Cosine of ``query`` to the given chunks, the best of a chunk's rows (its own vector
        and its windows'); chunks without a vector are left out."""
        wanted = np.asarray(list(rowids), dtype=np.int64)
        keys = self.rowids if self.sorted_rowids is None else self.sorted_rowids
        if not len(keys) or not len(wanted):
            return {}
        start = np.searchsorted(keys, wanted, side="left")
        counts = np.searchsorted(keys, wanted, side="right") - start
        found = counts > 0
        if not found.any():
            return {}
        wanted, start, counts = wanted[found], start[found], counts[found]
        if self.by_rowid is None:  # one row per chunk, in rowid order
            best = self.vectors.rescore(start, query)
        else:  # a chunk's rows are one run of ``by_rowid``: the best of each run
            firsts = np.cumsum(counts) - counts  # where each chunk's run starts in ``at``
            at = np.repeat(start - firsts, counts) + np.arange(int(counts.sum()))
            best = np.maximum.reduceat(self.vectors.rescore(self.by_rowid[at], query), firsts)
        return {int(r): float(c) for r, c in zip(wanted, best, strict=True)}

    def scores(self, query: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Cosine of ``query`` to every row (for calibration and explain)."""
        _cap_blas(self.blas_threads)
        return self.vectors.scores(np.asarray(query, dtype=np.float32))

    def _top_exact(
        self, query: npt.NDArray[np.float32], wanted: list[int], k: int
    ) -> list[tuple[int, float]]:
        _cap_blas(self.blas_threads)
        query = np.asarray(query, dtype=np.float32)
        coarse = self.vectors.coarse_scores(query)
        if len(wanted) < len(self.scope_names):
            coarse = np.where(np.isin(self.scopes, wanted), coarse, -np.inf)
        fetch = min(len(coarse), int(max(k * RESCORE, k + 64) * self.per_chunk))
        picked = np.argpartition(-coarse, fetch - 1)[:fetch] if fetch < len(coarse) else None
        rows = np.arange(len(coarse)) if picked is None else picked
        rows = rows[np.isfinite(coarse[rows])]
        return self._best_per_chunk(rows, self.vectors.rescore(rows, query), k)

    def _best_per_chunk(
        self, rows: npt.NDArray[np.intp], scores: npt.NDArray[np.float32], k: int
    ) -> list[tuple[int, float]]:
        """The ``k`` best chunks among re-scored ``rows``, each at its best row's score."""
        owners = self.rowids[rows]
        order = np.lexsort((owners, -scores))
        if self.by_rowid is not None:  # a chunk's later (lower) rows are not another hit
            _, first = np.unique(owners[order], return_index=True)
            order = order[np.sort(first)]
        return [(int(owners[i]), float(scores[i])) for i in order[:k]]

    def _top_ann(
        self, query: npt.NDArray[np.float32], wanted: list[int], k: int
    ) -> list[tuple[int, float]]:
        # Over-fetch: the graph's int8 distances only pick candidates, re-scored below; a scope
        # filter applied afterwards still leaves k rows in common cases.
        fetch = max(k * RESCORE, 40)
        if len(wanted) < len(self.scope_names):
            fetch = max(fetch, k * 8)
        fetch = min(len(self), int(fetch * self.per_chunk))
        breadth = search_breadth(len(self), k, fetch)
        if self.ann.expansion_search != breadth:
            self.ann.expansion_search = breadth
        query = np.asarray(query, dtype=np.float32)
        matches = self.ann.search(to_int8(query), fetch, threads=1)
        keys = np.asarray(matches.keys, dtype=np.intp)
        keys = keys[np.isin(self.scopes[keys], wanted)]
        found = self._best_per_chunk(keys, self.vectors.rescore(keys, query), k)
        if len(found) < k and len(wanted) < len(self.scope_names):
            return self._top_exact(query, wanted, k)
        return found


_BLAS_CAP: list[int] = []


def _cap_blas(threads: int) -> None:
    """Cap BLAS threads for the process once (re-applying per query costs ~0.5 ms)."""
    if [threads] != _BLAS_CAP:
        threadpool_limits(limits=threads, user_api="blas")
        _BLAS_CAP[:] = [threads]
