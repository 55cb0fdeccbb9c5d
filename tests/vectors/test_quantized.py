"""Vectors at half the memory (O4): the int8 scan picks candidates, the two-level re-score
gives the float32 ranking."""

from __future__ import annotations

import numpy as np

from briefd.vectors.index import VectorIndex
from briefd.vectors.quantized import SPLIT_ROWS, Quantized


def clustered(rows: int, dim: int, seed: int) -> np.ndarray:
    """Unit rows around one direction, like e5's cosines (all high, close together)."""
    rng = np.random.default_rng(seed)
    centre = rng.normal(size=dim)
    matrix = (centre + 0.8 * rng.normal(size=(rows, dim))).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def test_half_the_bytes_and_cosines_within_1e5() -> None:
    matrix = clustered(5000, 384, seed=3)
    quantized = Quantized.of(matrix)
    query = matrix[17]
    assert quantized.nbytes <= 0.51 * matrix.nbytes
    assert np.abs(quantized.scores(query) - matrix @ query).max() < 1e-5
    assert np.abs(quantized.coarse_scores(query) - matrix @ query).max() < 5e-3
    assert np.abs(quantized.matrix() - matrix).max() < 1e-5
    rows = np.arange(0, 5000, 7)  # re-scored from the int8 parts as the float rows would be
    assert np.abs(quantized.rescore(rows, query) - quantized.matrix()[rows] @ query).max() < 1e-6
    assert np.abs(quantized.rescore(rows, query) - matrix[rows] @ query).max() < 1e-5


def test_top_k_is_the_float32_ranking_with_and_without_scopes() -> None:
    matrix = clustered(8000, 384, seed=5)
    rowids = list(range(100, 8100))
    scopes = ["a" if i % 3 else "b" for i in range(8000)]
    index = VectorIndex.build("m", rowids, scopes, matrix)
    for query in matrix[:25]:
        exact = matrix @ query
        for wanted in (["a", "b"], ["b"]):
            mask = np.isin(np.array(scopes), wanted)
            best = np.flatnonzero(mask)[np.argsort(-exact[mask], kind="stable")][:10]
            assert [r for r, _ in index.top(query, wanted, 10)] == [rowids[i] for i in best]


def test_cosines_of_chunks_by_rowid_in_any_order() -> None:
    matrix = clustered(50, 16, seed=1)
    index = VectorIndex.build("m", list(range(0, 100, 2)), ["a"] * 50, matrix)
    found = index.cosines([8, 3, 0, 98, 200], matrix[4])
    assert sorted(found) == [0, 8, 98]
    assert abs(found[8] - 1.0) < 1e-5 and abs(found[98] - float(matrix[49] @ matrix[4])) < 1e-5
    shuffled = VectorIndex.build("m", [5, 1, 9], ["a"] * 3, matrix[:3])
    assert sorted(shuffled.cosines([9, 1, 7], matrix[0])) == [1, 9]


def test_the_coarse_scan_is_integer_dots_of_the_rounded_query() -> None:
    matrix = clustered(3000, 384, seed=9)
    quantized = Quantized.of(matrix)
    query = matrix[5] + 0.01
    scale = np.abs(query).max() / 127
    codes = np.clip(np.rint(query / scale), -127, 127).astype(np.int64)
    dots = quantized.coarse.astype(np.int64) @ codes  # exact integers
    expected = dots.astype(np.float32) * (quantized.coarse_scale * np.float32(scale))
    assert np.allclose(quantized.coarse_scores(query.astype(np.float32)), expected, rtol=1e-6)
    assert not np.any(quantized.coarse_scores(np.zeros(384, dtype=np.float32)))  # no NaN
    assert quantized.head(0).coarse_scores(query).shape == (0,)


def test_a_large_scan_in_two_halves_picks_the_single_scans_candidates() -> None:
    rows = SPLIT_ROWS + 1001  # two halves of different content, above the split threshold
    quantized = Quantized.of(clustered(rows, 64, seed=11))
    rng = np.random.default_rng(2)
    keep = rng.random(rows) < 0.3  # a scope filter: only some rows may be picked
    for query in quantized.matrix()[[5, rows - 3, SPLIT_ROWS // 2]]:
        coarse = quantized.coarse_scores(query)
        for fetch, mask in ((64, None), (200, keep), (rows, None), (rows, keep)):
            allowed = np.where(mask, coarse, -np.inf) if mask is not None else coarse
            expected = np.argsort(-allowed, kind="stable")[: min(fetch, len(coarse))]
            expected = expected[np.isfinite(allowed[expected])]
            picked = quantized.candidates(query, fetch, mask)
            assert len(picked) == len(expected)
            # the same set of scores (a tie at the boundary may pick another row of equal score)
            assert np.array_equal(np.sort(allowed[picked]), np.sort(allowed[expected]))
            assert mask is None or bool(mask[picked].all())


def test_nearest_is_each_querys_best_row_block_by_block() -> None:
    """The calibrations' best cosines and rows, without a float copy of the matrix: as the
    float rows give them, across blocks, the first of equal rows winning."""
    matrix = clustered(9000, 64, seed=11)  # more than two blocks of rows
    matrix[8500] = matrix[100]  # an equal row in a later block
    quantized = Quantized.of(matrix)
    queries = np.vstack([matrix[[100, 4200, 8999]], clustered(40, 64, seed=12)])
    best, rows = quantized.nearest(queries)
    cosines = quantized.matrix() @ queries.T
    assert np.abs(best - cosines.max(axis=0)).max() < 1e-6
    assert rows.tolist() == cosines.argmax(axis=0).tolist()
    assert rows[:3].tolist() == [100, 4200, 8999]
    one_hot = np.eye(64, dtype=np.float32)[np.arange(9000) % 64]  # exact ties in every block
    best, rows = Quantized.of(one_hot).nearest(np.eye(64, dtype=np.float32)[[5, 63]])
    assert rows.tolist() == [5, 63] and np.abs(best - 1.0).max() < 1e-6
