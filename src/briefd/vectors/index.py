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

from briefd.errors import EmbeddingError
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
    positions: dict[int, int] | None = field(default=None, repr=False)
    ordered: bool = field(default=False, repr=False)  # rowids ascending: binary search

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
        ann_key: str | None = None,
    ) -> VectorIndex:
        """``matrix``: float rows, or rows already quantised (as :func:`store.load` gives);
        ``ann_beside``: the index file whose HNSW graph may be saved and mapped next to it;
        ``ann_key``: the key naming these rows (:func:`briefd.vectors.snapshot.keyed_rows`)."""
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
        index.ordered = bool(np.all(np.diff(index.rowids) > 0))
        if ann_threshold and len(rowids) >= ann_threshold:
            index.ann = graph(vectors, ann_beside, ann_key)
        return index

    def __len__(self) -> int:
        return len(self.rowids)

    @property
    def dim(self) -> int:
        return self.vectors.dim

    def top(
        self, query: npt.NDArray[np.float32], scopes: Sequence[str], k: int
    ) -> list[tuple[int, float]]:
        """(chunk rowid, cosine) of the ``k`` nearest rows within ``scopes``, best first."""
        if not len(self) or k <= 0:
            return []
        self.check_size(query)
        wanted = [i for i, name in enumerate(self.scope_names) if name in set(scopes)]
        if not wanted:
            return []
        if self.ann is not None:
            return self._top_ann(query, wanted, k)
        return self._top_exact(query, wanted, k)

    def cosines(self, rowids: Sequence[int], query: npt.NDArray[np.float32]) -> dict[int, float]:
        """Cosine of ``query`` to the given chunks (those without a vector are left out)."""
        wanted = np.asarray(list(rowids), dtype=np.int64)
        at = np.searchsorted(self.rowids, wanted) if self.ordered else None
        if at is None:  # rows not in rowid order: a lookup table, built once
            if self.positions is None:
                self.positions = {int(r): i for i, r in enumerate(self.rowids)}
            found = [(int(r), self.positions[int(r)]) for r in wanted if int(r) in self.positions]
            keys = [r for r, _ in found]
            rows = np.asarray([i for _, i in found], dtype=np.intp)
        else:
            at = np.minimum(at, max(len(self.rowids) - 1, 0))
            hit = self.rowids[at] == wanted if len(self.rowids) else np.zeros(0, dtype=bool)
            keys, rows = wanted[hit].tolist(), at[hit].astype(np.intp)
        if not len(rows):
            return {}
        self.check_size(query)
        return dict(zip(keys, self.vectors.rescore(rows, query).tolist(), strict=True))

    def vector(self, rowid: int) -> npt.NDArray[np.float32] | None:
        """The chunk's row as float32 (None: it has no vector here)."""
        if self.ordered:
            at = int(np.searchsorted(self.rowids, rowid))
            found = at < len(self.rowids) and int(self.rowids[at]) == rowid
            return self.vectors.row(at) if found else None
        if self.positions is None:
            self.positions = {int(r): i for i, r in enumerate(self.rowids)}
        where = self.positions.get(rowid)
        return None if where is None else self.vectors.row(where)

    def scores(self, query: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Cosine of ``query`` to every row (for calibration and explain)."""
        _cap_blas(self.blas_threads)
        self.check_size(query)
        return self.vectors.scores(np.asarray(query, dtype=np.float32))

    def check_size(self, query: npt.NDArray[np.float32]) -> None:
        """A query vector of another size than the rows: another model answers under this
        one's name (a remote service's tag pulled again), and no cosine can be taken."""
        if len(self) and query.shape[-1] != self.dim:
            raise EmbeddingError(
                f"{self.model} now gives {query.shape[-1]}-dim vectors, and this index holds "
                f"{self.dim}-dim ones: another model answers under that name; run `briefd index "
                "--rebuild` to embed the index with it"
            )

    def _top_exact(
        self, query: npt.NDArray[np.float32], wanted: list[int], k: int
    ) -> list[tuple[int, float]]:
        _cap_blas(self.blas_threads)
        query = np.asarray(query, dtype=np.float32)
        keep = np.isin(self.scopes, wanted) if len(wanted) < len(self.scope_names) else None
        fetch = min(len(self.rowids), max(k * RESCORE, k + 64))
        rows = self.vectors.candidates(query, fetch, keep) if fetch else self.rowids[:0]
        scores = self.vectors.rescore(rows, query)
        order = np.lexsort((self.rowids[rows], -scores))[: min(k, len(rows))]
        return [(int(self.rowids[rows[i]]), float(scores[i])) for i in order]

    def _top_ann(
        self, query: npt.NDArray[np.float32], wanted: list[int], k: int
    ) -> list[tuple[int, float]]:
        # Over-fetch: the graph's int8 distances only pick candidates, re-scored below; a scope
        # filter applied afterwards still leaves k rows in common cases.
        fetch = max(k * RESCORE, 40)
        if len(wanted) < len(self.scope_names):
            fetch = max(fetch, k * 8)
        fetch = min(len(self), fetch)
        breadth = search_breadth(len(self), k, fetch)
        if self.ann.expansion_search != breadth:
            self.ann.expansion_search = breadth
        query = np.asarray(query, dtype=np.float32)
        matches = self.ann.search(to_int8(query), fetch, threads=1)
        keys = np.asarray(matches.keys, dtype=np.intp)
        keys = keys[np.isin(self.scopes[keys], wanted)]
        exact = self.vectors.rescore(keys, query)
        order = np.lexsort((self.rowids[keys], -exact))[:k]
        if len(order) < k and len(wanted) < len(self.scope_names):
            return self._top_exact(query, wanted, k)
        return [(int(self.rowids[keys[i]]), float(exact[i])) for i in order]


_BLAS_CAP: list[int] = []


def _cap_blas(threads: int) -> None:
    """Cap BLAS threads for the process once (re-applying per query costs ~0.5 ms)."""
    if [threads] != _BLAS_CAP:
        threadpool_limits(limits=threads, user_api="blas")
        _BLAS_CAP[:] = [threads]
