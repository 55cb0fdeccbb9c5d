"""The HNSW path (usearch, real) against the exact scan it replaces above ``ann_threshold``."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from briefd.vectors.index import VectorIndex, search_breadth


def _clustered(rows: int, dim: int, seed: int) -> npt.NDArray[np.float32]:
    """Unit rows around 40 centres in a shared cone, as text embeddings sit (all cosines > 0)."""
    rng = np.random.default_rng(seed)
    common = rng.normal(size=dim)
    centres = common + 0.8 * rng.normal(size=(40, dim))
    matrix = centres[rng.integers(0, 40, rows)] + 0.5 * rng.normal(size=(rows, dim))
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix.astype(np.float32)


def _pair(rows: int = 3000, dim: int = 48) -> tuple[VectorIndex, VectorIndex]:
    matrix = _clustered(rows + 40, dim, seed=11)
    rowids = [1000 + 3 * i for i in range(rows)]
    scopes = ["a" if i % 3 else "b" for i in range(rows)]
    exact = VectorIndex.build("m", rowids, scopes, matrix[:rows])
    approx = VectorIndex.build("m", rowids, scopes, matrix[:rows], ann_threshold=rows)
    assert exact.ann is None and approx.ann is not None
    return exact, approx


def test_hnsw_recall_at_10_against_exact_on_unseen_queries() -> None:
    exact, approx = _pair()
    queries = _clustered(3040, 48, seed=11)[3000:]  # drawn like the rows, not among them
    recalls = []
    for query in queries:
        want = [r for r, _ in exact.top(query, ["a", "b"], 10)]
        got = [r for r, _ in approx.top(query, ["a", "b"], 10)]
        assert len(got) == 10 and len(set(got)) == 10
        recalls.append(len(set(want) & set(got)) / 10)
    assert np.mean(recalls) >= 0.95 and min(recalls) >= 0.7


def test_hnsw_hits_are_rescored_to_the_exact_order_and_cosines() -> None:
    exact, approx = _pair()
    for query in _clustered(3040, 48, seed=11)[3000:3020]:
        want = dict(exact.top(query, ["a", "b"], 10))
        got = approx.top(query, ["a", "b"], 10)
        assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)
        common = [r for r, _ in got if r in want]
        assert common == [r for r in want if r in set(common)]  # same relative order
        assert common[:3] == list(want)[:3]  # the best hits themselves
        for rowid, score in got:
            assert abs(score - exact.cosines([rowid], query)[rowid]) < 1e-6


def test_hnsw_respects_scopes_and_falls_back_when_a_scope_is_rare() -> None:
    exact, approx = _pair()
    query = _clustered(3040, 48, seed=11)[3001]
    got = approx.top(query, ["b"], 10)
    assert len(got) == 10 and all((r - 1000) // 3 % 3 == 0 for r, _ in got)
    assert len({r for r, _ in got} & {r for r, _ in exact.top(query, ["b"], 10)}) >= 8
    assert approx.top(query, ["nowhere"], 10) == []


def test_search_breadth_grows_with_the_index_not_with_k() -> None:
    small, large = search_breadth(100_000, 10, 40), search_breadth(1_000_000, 10, 40)
    assert 40 < small < large < 2 * small
    assert search_breadth(1_000_000, 50, 200) - 200 == large - 40
    assert search_breadth(2, 10, 2) >= 10
