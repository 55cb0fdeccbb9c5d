"""The postings' lexical lists score only the chunks that can be among the best (R1 at scale):
the all-terms list only the chunks holding every word, the any-term list by MaxScore. The
lists are the same, scores to the last bit, as scoring every chunk holding a query word."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
import yaml

from briefd.api import Briefd
from briefd.retrieval.bm25 import (
    Floats,
    Lexicon,
    Positions,
    PostingsIndex,
    Reads,
    Word,
    with_coverage,
)
from briefd.retrieval.lexical import FieldWeights
from briefd.settings import Settings
from briefd.store import postings
from briefd.store.scopes import known_scopes
from briefd.text import query_terms
from tests.conftest import EXAMPLE, REPO, WriteFiles

EVERY = 10**9  # a limit no list reaches: every chunk holding a word is scored and ordered
# a vocabulary from very common to rare, so that the rare words decide the best chunks
WORDS = [f"w{n:03d}" for n in range(120)]


def _corpus(seed: int = 7) -> dict[str, str]:
    rng = random.Random(seed)
    weights = [1 / (n + 1) ** 1.1 for n in range(len(WORDS))]
    files = {}
    for n in range(240):
        scope = ("domain", "conventions")[n % 2]
        title = " ".join(rng.choices(WORDS, weights, k=2))
        body = " ".join(rng.choices(WORDS, weights, k=rng.randint(5, 60)))
        heading = " ".join(rng.choices(WORDS, weights, k=3))
        files[f"{scope}/p{n:03d}.md"] = f"# {title}\n\n## {heading}\n\n{body}\n"
    return files


def _queries(seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    golden = yaml.safe_load((REPO / "eval" / "golden" / "queries.yaml").read_text())["queries"]
    made = [" ".join(rng.sample(WORDS, rng.randint(1, 7))) for _ in range(40)]
    made += [" ".join(rng.sample(WORDS[:15], rng.randint(2, 5))) for _ in range(10)]  # common
    return [q["query"] for q in golden[::3]] + made + ["w001 snake_case w090", "zzzz w003"]


def _groups(lexicon: Lexicon, query: str) -> tuple[tuple[Word, ...], ...]:
    return lexicon.tokenizer.groups([(t,) for t in query_terms(query)])


@pytest.mark.parametrize("every_group", [False, True], ids=["any-term", "all-terms"])
def test_the_best_chunks_are_those_of_scoring_every_chunk(
    settings: Settings, write_files: WriteFiles, every_group: bool
) -> None:
    source = write_files(_corpus())
    for path in EXAMPLE.rglob("*.md"):
        write_files({f"domain/example/{path.relative_to(EXAMPLE)}": path.read_text()})
    tuned = FieldWeights(1.7, 0.3, 1.1)  # not binary fractions: rounding must agree too
    lexicon = Lexicon()
    with Briefd(settings, embedder=None) as api:
        api.index(source)
        with api.store.read() as conn:
            index = lexicon.index(conn)
            assert index is not None
            scopes = tuple(known_scopes(conn))
            for query in _queries():
                groups = _groups(lexicon, query)
                for weights in (FieldWeights(), tuned):
                    for within in (None, scopes[:1]):
                        reads = Reads()
                        full = with_coverage(
                            conn, index, groups, weights, EVERY, within, every_group, reads
                        )[0]
                        for limit in (1, 3, 8, 50):
                            got = with_coverage(
                                conn, index, groups, weights, limit, within, every_group, reads
                            )[0]
                            assert got == full[:limit], (query, weights, within, limit)


def _synthetic(chunks: int, common: int, rare: int) -> tuple[PostingsIndex, Reads]:
    """An index of ``chunks`` chunks (no SQLite behind it: every token's postings are already
    in ``Reads``) where "common" is in ``common`` of them and "rare" in ``rare``."""
    rng = np.random.default_rng(3)
    rows = np.arange(1, chunks + 1, dtype=np.int64)
    lengths = rng.integers(20, 400, chunks).astype(np.int32)
    coverage = postings.Coverage(rows, lengths, np.zeros(chunks, np.uint16), ("domain",))
    index = _Counting.build(coverage, rows)
    reads = Reads()
    for token, held in (("common", common), ("rare", rare)):
        docs = np.sort(rng.choice(rows, held, replace=False))
        freqs = rng.integers(0, 4, (held, 3)).astype(np.uint16)
        freqs[:, 2] += 1
        reads.tokens[token] = (docs, freqs)
    return index, reads


class _Counting(PostingsIndex):
    """A postings index that counts the chunk term scores it computes (the work scoring does)."""

    scored: ClassVar[list[int]] = []

    def term_score(
        self, idf: float, freqs: postings.Freqs, at: Positions, weights: FieldWeights
    ) -> Floats:
        _Counting.scored.append(len(at))
        return super().term_score(idf, freqs, at, weights)


def _scored(call: Callable[[], object]) -> int:
    _Counting.scored.clear()
    call()
    return sum(_Counting.scored)


def test_a_common_word_beside_a_rare_one_is_not_scored_in_every_chunk(tmp_path: Path) -> None:
    """A word in a fifth of a million chunks beside one in 30: the best 10 holding either are
    decided by the rare word, and those holding both are among its 30; neither list scores the
    200,000 (counted: the chunk term scores each list computes)."""
    index, reads = _synthetic(1_000_000, 200_000, 30)
    groups = [(Word("common", ("common",)),), (Word("rare", ("rare",)),)]
    conn = sqlite3.connect(tmp_path / "unused.db")  # every token is read already

    def top(limit: int, every_group: bool) -> list[tuple[int, float]]:
        return with_coverage(conn, index, groups, FieldWeights(), limit, None, every_group, reads)[
            0
        ]

    try:
        everything = top(EVERY, False)
        assert len(everything) > 200_000
        assert top(10, False) == everything[:10]
        both = top(10, True)
        assert 0 < len(both) < 30 and {r for r, _ in both} <= {r for r, _ in everything[:30]}
        every_chunk = _scored(lambda: top(EVERY, False))
        any_term, all_terms = _scored(lambda: top(10, False)), _scored(lambda: top(10, True))
    finally:
        conn.close()
    assert every_chunk > 200_000
    # the rare word's 30 chunks, each scored for both words: nowhere near the common word's
    assert any_term <= 2 * 30 and all_terms <= 2 * 30, (any_term, all_terms)


def test_a_word_in_much_of_the_index_scores_as_summing_every_posting(tmp_path: Path) -> None:
    """Chunks looked up in a word's postings past 1/64 of the index go through a map of every
    chunk position (built once per word) instead of a binary search each: the scores are the
    ones summing each word's term score over its postings gives, bit for bit."""
    index, reads = _synthetic(200_000, 60_000, 20_000)
    groups = [(Word("common", ("common",)),), (Word("rare", ("rare",)),)]
    conn = sqlite3.connect(tmp_path / "unused.db")  # every token is read already
    try:
        got = with_coverage(conn, index, groups, FieldWeights(), EVERY, None, False, reads)[0]
    finally:
        conn.close()
    total = np.zeros(len(index.rows))
    for token in ("common", "rare"):  # in query order, as the lists add them
        docs, freqs = reads.tokens[token] or (np.empty(0, np.int64), np.empty((0, 3)))
        at = index.positions(docs)
        add = np.zeros(len(index.rows))
        add[at] = index.term_score(index.idf(len(docs)), freqs, at, FieldWeights())
        total += add
    held = np.flatnonzero(total > 0)
    expected = sorted(
        ((int(index.rows[p]), -float(total[p])) for p in held), key=lambda r: (r[1], r[0])
    )
    assert got == expected
