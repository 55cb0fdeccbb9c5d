"""The in-memory vector index (R2): one contiguous float32 matrix, exact cosine top-k.

Rows are L2-normalised, so cosine is a dot product. BLAS threads are capped on the query path:
a matrix-vector product is memory-bound, and extra threads only add jitter on small machines.
Above ``ann_threshold`` rows an HNSW index (usearch) answers instead, behind the same method.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from threadpoolctl import threadpool_limits

from briefd.vectors.store import Matrix


@dataclass(slots=True)
class VectorIndex:
    model: str
    rowids: npt.NDArray[np.int64]
    scopes: npt.NDArray[np.int32]  # index into scope_names per row
    scope_names: tuple[str, ...]
    matrix: Matrix
    blas_threads: int = 1
    ann: Any = field(default=None, repr=False)
    positions: dict[int, int] | None = field(default=None, repr=False)

    @classmethod
    def build(
        cls,
        model: str,
        rowids: Sequence[int],
        scopes: Sequence[str],
        matrix: Matrix,
        blas_threads: int = 1,
        ann_threshold: int = 0,
    ) -> VectorIndex:
        names = tuple(sorted(set(scopes)))
        codes = {name: i for i, name in enumerate(names)}
        index = cls(
            model,
            np.asarray(rowids, dtype=np.int64),
            np.asarray([codes[s] for s in scopes], dtype=np.int32),
            names,
            np.ascontiguousarray(matrix, dtype=np.float32),
            blas_threads,
        )
        if ann_threshold and len(rowids) >= ann_threshold:
            index.ann = _build_ann(index.matrix)
        return index

    def __len__(self) -> int:
        return len(self.rowids)

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1]) if self.matrix.ndim == 2 else 0

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
        if self.positions is None:
            self.positions = {int(r): i for i, r in enumerate(self.rowids)}
        rows = [(r, self.positions[r]) for r in rowids if r in self.positions]
        if not rows:
            return {}
        picked = self.matrix[[i for _, i in rows]] @ query
        return {r: float(c) for (r, _), c in zip(rows, picked, strict=True)}

    def scores(self, query: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Cosine of ``query`` to every row (for calibration and explain)."""
        _cap_blas(self.blas_threads)
        return np.asarray(self.matrix @ query, dtype=np.float32)

    def _top_exact(
        self, query: npt.NDArray[np.float32], wanted: list[int], k: int
    ) -> list[tuple[int, float]]:
        scores = self.scores(query)
        if len(wanted) < len(self.scope_names):
            scores = np.where(np.isin(self.scopes, wanted), scores, -np.inf)
        k = min(k, len(scores))
        best = np.argpartition(-scores, k - 1)[:k]
        best = best[np.lexsort((self.rowids[best], -scores[best]))]
        return [(int(self.rowids[i]), float(scores[i])) for i in best if np.isfinite(scores[i])]

    def _top_ann(
        self, query: npt.NDArray[np.float32], wanted: list[int], k: int
    ) -> list[tuple[int, float]]:
        # Over-fetch so a scope filter applied afterwards still leaves k rows in common cases.
        fetch = k if len(wanted) == len(self.scope_names) else min(len(self), k * 8)
        matches = self.ann.search(query, fetch)
        found = []
        for key, distance in zip(matches.keys, matches.distances, strict=True):
            if self.scopes[int(key)] in wanted:
                found.append((int(self.rowids[int(key)]), 1.0 - float(distance)))
        if len(found) < k and len(wanted) < len(self.scope_names):
            return self._top_exact(query, wanted, k)
        return found[:k]


_BLAS_CAP: list[int] = []


def _cap_blas(threads: int) -> None:
    """Cap BLAS threads for the process once (re-applying per query costs ~0.5 ms)."""
    if [threads] != _BLAS_CAP:
        threadpool_limits(limits=threads, user_api="blas")
        _BLAS_CAP[:] = [threads]


def _build_ann(matrix: Matrix) -> Any:
    from usearch.index import Index

    ann = Index(
        ndim=matrix.shape[1],
        metric="cos",
        dtype="f32",
        connectivity=32,
        expansion_add=128,
        expansion_search=128,
    )
    ann.add(np.arange(len(matrix), dtype=np.uint64), matrix)
    return ann
