"""The in-memory vector index (R2): the rows quantised to two int8 matrices, exact cosine top-k.

Rows are L2-normalised, so cosine is a dot product. The scan reads the coarse int8 rows (a
quarter of float32's bytes) to pick ``RESCORE`` × k candidates, which are re-scored with both
int8 rows — to within ~1e-6 of the float32 cosine, so the ranking is the float32 one at half
its memory (:mod:`briefd.vectors.quantized`). BLAS threads are capped on the query path:
a matrix-vector product is memory-bound, and extra threads only add jitter on small machines.
Above ``ann_threshold`` rows an HNSW index (usearch) answers instead, behind the same method:
the graph links the coarse int8 rows themselves (no copy, full int8 range per row), searches as
wide as the index size and ``k`` call for (:func:`search_breadth`), and its candidates are
re-scored exactly like the scan's, so what it returns is ordered as the exact path would.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from threadpoolctl import threadpool_limits

from briefd.vectors.quantized import Quantized
from briefd.vectors.store import Matrix

RESCORE = 4  # candidates per wanted row re-scored after the coarse scan (and at least 64)
CONNECTIVITY = 16  # HNSW links per node (M); M=32 doubled the build for +0.01 recall at 200K
EXPANSION_ADD = 128  # candidates kept while linking a new node (efConstruction)
BREADTH_PER_LEVEL = 24  # graph candidates kept beyond those fetched, per doubling of the rows


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
    ) -> VectorIndex:
        """``matrix``: float rows, or rows already quantised (as :func:`store.load` gives)."""
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
            index.ann = _build_ann(vectors)
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
        """Cosine of ``query`` to the given chunks (those without a vector are left out)."""
        wanted = np.asarray(list(rowids), dtype=np.int64)
        at = np.searchsorted(self.rowids, wanted) if self.ordered else None
        if at is None:  # rows not in rowid order: a lookup table, built once
            if self.positions is None:
                self.positions = {int(r): i for i, r in enumerate(self.rowids)}
            found = [(int(r), self.positions[int(r)]) for r in wanted if int(r) in self.positions]
        else:
            at = np.minimum(at, max(len(self.rowids) - 1, 0))
            hit = self.rowids[at] == wanted if len(self.rowids) else np.zeros(0, dtype=bool)
            found = [(int(r), int(i)) for r, i in zip(wanted[hit], at[hit], strict=True)]
        if not found:
            return {}
        picked = self.vectors.rescore(np.asarray([i for _, i in found], dtype=np.intp), query)
        return {r: float(c) for (r, _), c in zip(found, picked, strict=True)}

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
        fetch = min(len(coarse), max(k * RESCORE, k + 64))
        picked = np.argpartition(-coarse, fetch - 1)[:fetch] if fetch < len(coarse) else None
        rows = np.arange(len(coarse)) if picked is None else picked
        rows = rows[np.isfinite(coarse[rows])]
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
        matches = self.ann.search(_int8(query), fetch, threads=1)
        keys = np.asarray(matches.keys, dtype=np.intp)
        keys = keys[np.isin(self.scopes[keys], wanted)]
        exact = self.vectors.rescore(keys, query)
        order = np.lexsort((self.rowids[keys], -exact))[:k]
        if len(order) < k and len(wanted) < len(self.scope_names):
            return self._top_exact(query, wanted, k)
        return [(int(self.rowids[keys[i]]), float(exact[i])) for i in order]


def search_breadth(rows: int, k: int, fetch: int) -> int:
    """usearch's ``expansion_search`` (HNSW's ef) to fetch ``fetch`` ≥ ``k`` candidates from
    ``rows``: those plus ``BREADTH_PER_LEVEL`` per doubling of the rows (the graph's depth), so
    the search widens as the index grows but not with ``k`` (k=50 would not need 5× k=10's
    margin: recall@50 was 0.997 at 100K with ef 1661, at 3× the time of ef 466)."""
    levels = float(np.log2(max(rows, 2)))
    return int(max(fetch, k) + np.ceil(BREADTH_PER_LEVEL * levels))


def _int8(query: npt.NDArray[np.float32]) -> npt.NDArray[np.int8]:
    """The query scaled to the full int8 range, as the rows are (cosine ignores the scale)."""
    peak = float(np.abs(query).max()) if query.size else 0.0
    scaled = query * (127 / peak) if peak > 0 else query
    return np.clip(np.rint(scaled), -127, 127).astype(np.int8)


_BLAS_CAP: list[int] = []


def _cap_blas(threads: int) -> None:
    """Cap BLAS threads for the process once (re-applying per query costs ~0.5 ms)."""
    if [threads] != _BLAS_CAP:
        threadpool_limits(limits=threads, user_api="blas")
        _BLAS_CAP[:] = [threads]


def _build_ann(vectors: Quantized) -> Any:
    """The HNSW graph over the coarse int8 rows, on every core. The rows are handed over without
    a copy (the index keeps them alive): each is already scaled to the full int8 range, where
    usearch's own float-to-int8 cast would leave ~5 bits for e5's small components."""
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
