"""Vectors in memory at half the size of float32, scanned at int8 and re-scored near-exactly (O4).

Each unit-length row ``x`` is kept as two int8 rows and two scales:
``x ≈ coarse * c + fine * f`` with ``c = max|x| / 127`` and ``f = c / 254``. ``coarse`` alone is
the row to within ``c / 2`` per component — enough to pick candidates by a scan that reads a
quarter of the float32 bytes, with the query rounded to int8 as well so the scan is integer dot
products in SIMD (numkong, exact int32 sums: 50K x 384 in ~0.9 ms, against ~3 ms casting blocks
to float32 for BLAS); ``coarse`` and ``fine`` together are the row to within ``c / 508``
per component (cosine error ~1e-6, below float32 noise on the cosines e5 gives), so the
top candidates are re-scored to the ranking the float32 matrix gives. 2 bytes per dimension
instead of 4: 50,000 e5 vectors take 38 MB, not 77 MB.
"""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numkong
import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]
BLOCK = 4096  # rows quantised or dequantised at a time
SPLIT_ROWS = 16_384  # from here on a scan runs in two halves on two threads (~0.25 ms a half)
SCAN_BLOCK = 512  # rows cast to float32 per scan step: the 0.8 MB scratch stays in the L2
# cache: the int8 scan then runs at float32's matrix-vector speed or better (50K x 384: 5.4 vs
# 5.3 ms on the bench replica, 2.7 vs 5.1 ms on random rows); 4096-row steps were slower (9 ms)


@dataclass(frozen=True, slots=True)
class Quantized:
    coarse: npt.NDArray[np.int8]
    fine: npt.NDArray[np.int8]
    coarse_scale: npt.NDArray[np.float32]
    fine_scale: npt.NDArray[np.float32]

    @classmethod
    def empty(cls, rows: int, dim: int) -> Quantized:
        return cls(
            np.zeros((rows, dim), dtype=np.int8),
            np.zeros((rows, dim), dtype=np.int8),
            np.zeros(rows, dtype=np.float32),
            np.zeros(rows, dtype=np.float32),
        )

    @classmethod
    def of(cls, matrix: Matrix) -> Quantized:
        rows, dim = matrix.shape if matrix.ndim == 2 else (0, 0)
        quantized = cls.empty(rows, dim)
        for start in range(0, rows, BLOCK):
            quantized.put(start, matrix[start : start + BLOCK])
        return quantized

    def copy(self) -> Quantized:
        """Rows of its own (``head`` gives views that keep the whole allocation alive)."""
        return Quantized(
            self.coarse.copy(), self.fine.copy(), self.coarse_scale.copy(), self.fine_scale.copy()
        )

    def head(self, rows: int) -> Quantized:
        """The first ``rows`` rows (views, no copy)."""
        if rows == len(self):
            return self
        return Quantized(
            self.coarse[:rows], self.fine[:rows], self.coarse_scale[:rows], self.fine_scale[:rows]
        )

    def __len__(self) -> int:
        return len(self.coarse)

    @property
    def dim(self) -> int:
        return int(self.coarse.shape[1])

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.coarse, self.fine, self.coarse_scale, self.fine_scale))

    def put(self, start: int, block: Matrix) -> None:
        """Quantise ``block`` (float rows) into rows ``start…`` (filled in place)."""
        block = np.asarray(block, dtype=np.float32)
        end = start + len(block)
        peak = np.abs(block).max(axis=1) if block.size else np.zeros(len(block), np.float32)
        coarse_scale = np.where(peak > 0, peak / 127, 1).astype(np.float32)
        coarse = np.rint(block / coarse_scale[:, None])
        fine_scale = coarse_scale / 254
        fine = np.rint((block - coarse * coarse_scale[:, None]) / fine_scale[:, None])
        self.coarse[start:end] = np.clip(coarse, -127, 127)
        self.fine[start:end] = np.clip(fine, -127, 127)
        self.coarse_scale[start:end] = coarse_scale
        self.fine_scale[start:end] = fine_scale

    def coarse_scores(self, query: Matrix, start: int = 0, end: int | None = None) -> Matrix:
        """Approximate cosine of ``query`` to every row (the candidate scan), or to rows
        ``start:end``: the coarse rows against ``query`` rounded to int8, each row's scale
        applied to the integer dot."""
        coarse, scales = self.coarse[start:end], self.coarse_scale[start:end]
        if not len(coarse):
            return np.zeros(0, dtype=np.float32)
        peak = float(np.abs(query).max())
        scale = peak / 127 if peak > 0 else 1.0
        codes = np.clip(np.rint(query / scale), -127, 127).astype(np.int8)
        dots = numkong.cdist(codes[None], coarse, metric="dot", out_dtype="float32")
        out: Matrix = np.asarray(dots, dtype=np.float32)[0]
        out *= scales * np.float32(scale)
        return out

    def candidates(
        self, query: Matrix, fetch: int, keep: npt.NDArray[np.bool_] | None = None
    ) -> npt.NDArray[np.intp]:
        """The ``fetch`` rows of the best coarse scores (only rows where ``keep``), in no
        order. From ``SPLIT_ROWS`` rows on, the second half is scanned on a worker thread while
        this one scans the first (numkong releases the GIL): 50K rows in ~0.45 ms instead of
        ~0.8, each half keeping its own best ``fetch``, which hold the best ``fetch`` overall."""
        if len(self) < SPLIT_ROWS:
            return _best(self.coarse_scores(query), 0, fetch, keep)[0]
        middle = len(self) // 2
        later = _scan_pool().submit(self._best_of, query, middle, len(self), fetch, keep)
        first = self._best_of(query, 0, middle, fetch, keep)
        second = later.result()
        rows, scores = np.concatenate([first[0], second[0]]), np.concatenate([first[1], second[1]])
        if len(rows) <= fetch:
            return rows
        picked: npt.NDArray[np.intp] = rows[np.argpartition(-scores, fetch - 1)[:fetch]]
        return picked

    def _best_of(
        self,
        query: Matrix,
        start: int,
        end: int,
        fetch: int,
        keep: npt.NDArray[np.bool_] | None,
    ) -> tuple[npt.NDArray[np.intp], Matrix]:
        part = None if keep is None else keep[start:end]
        return _best(self.coarse_scores(query, start, end), start, fetch, part)

    def scores(self, query: Matrix) -> Matrix:
        """Cosine of ``query`` to every row, near-exact (two float scans)."""
        coarse = self._scan(self.coarse, self.coarse_scale, query)
        return coarse + self._scan(self.fine, self.fine_scale, query)

    def rescore(self, rows: npt.NDArray[np.intp], query: Matrix) -> Matrix:
        """Near-exact cosine of ``query`` to the given rows: each int8 part's dot with the
        query, scaled (the rows are never built as floats: 200 rows in ~0.03 ms, not ~0.3)."""
        if not len(rows):
            return np.zeros(0, dtype=np.float32)
        query = np.asarray(query, dtype=np.float32)
        coarse = (self.coarse[rows] @ query) * self.coarse_scale[rows]
        scores: Matrix = (coarse + (self.fine[rows] @ query) * self.fine_scale[rows]).astype(
            np.float32, copy=False
        )
        return scores

    def nearest(self, queries: Matrix) -> tuple[Matrix, npt.NDArray[np.intp]]:
        """Per query (a row of ``queries``): its best cosine among the rows and that row (the
        first of equals), the rows taken as float32 a block at a time: calibrating the gate on
        50K vectors held a 77 MB float copy of them and a 32 MB table of every cosine."""
        queries = np.asarray(queries, dtype=np.float32)
        best = np.full(len(queries), -np.inf, dtype=np.float32)
        where = np.zeros(len(queries), dtype=np.intp)
        columns = np.arange(len(queries))
        for start in range(0, len(self), BLOCK):
            scores = self._rows_between(start, min(start + BLOCK, len(self))) @ queries.T
            top = scores.argmax(axis=0)
            value = scores[top, columns]
            better = value > best  # strictly: an earlier block keeps its equal
            best[better], where[better] = value[better], top[better] + start
        return best, where

    def row(self, at: int) -> Matrix:
        """Row ``at`` as float32."""
        row: Matrix = self._rows_between(at, at + 1)[0]
        return row

    def _rows_between(self, start: int, end: int) -> Matrix:
        """Rows ``start:end`` as float32."""
        coarse = self.coarse[start:end].astype(np.float32) * self.coarse_scale[start:end, None]
        fine = self.fine[start:end].astype(np.float32) * self.fine_scale[start:end, None]
        rows: Matrix = coarse + fine
        return rows

    def matrix(self) -> Matrix:
        """Every row as float32 (a transient copy, for calibration and explain)."""
        out = np.empty((len(self), self.dim), dtype=np.float32)
        for start in range(0, len(self), BLOCK):
            out[start : start + BLOCK] = self._rows_between(start, min(start + BLOCK, len(self)))
        return out

    def _scan(
        self, codes: npt.NDArray[np.int8], scale: npt.NDArray[np.float32], query: Matrix
    ) -> Matrix:
        out = np.empty(len(codes), dtype=np.float32)
        scratch = np.empty((min(SCAN_BLOCK, len(codes)), codes.shape[1]), dtype=np.float32)
        for start in range(0, len(codes), SCAN_BLOCK):
            block = codes[start : start + SCAN_BLOCK]
            buffer = scratch[: len(block)]
            np.copyto(buffer, block, casting="unsafe")
            np.matmul(buffer, query, out=out[start : start + len(block)])
        out *= scale
        return out


def _best(
    scores: Matrix, offset: int, fetch: int, keep: npt.NDArray[np.bool_] | None
) -> tuple[npt.NDArray[np.intp], Matrix]:
    """The rows (``offset`` added) of the ``fetch`` best ``scores`` where ``keep``, and their
    scores."""
    if keep is not None:
        scores = np.where(keep, scores, -np.inf)
    if fetch < len(scores):
        rows = np.argpartition(-scores, fetch - 1)[:fetch]
    else:
        rows = np.arange(len(scores))
    rows = rows[np.isfinite(scores[rows])]
    return rows + offset, scores[rows]


@functools.cache
def _scan_pool() -> ThreadPoolExecutor:
    """One worker for the second half of a large scan (see :meth:`Quantized.candidates`)."""
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="briefd-scan")
