"""FTS5's ``bm25()``, computed from the stored postings (R1 on large indexes).

FTS5 finds every row that matches any query term and runs ``bm25()`` on each before it can
sort, ~20 ms for a long query on a 60K-chunk index. Here each query token costs one blob read
and a few array operations over the chunks that contain it, and the score is the same number
FTS5 returns (same IDF, average length, k1 = 1.2, b = 0.75, per-column weights), so the
rankings agree; ``tests/retrieval/test_bm25.py`` compares both on every golden query. One
difference in the last bit: FTS5 adds a column weight once per occurrence, this multiplies
(``count × weight``); with weights that are not exact binary fractions (1.7) two sections can
tie here that FTS5 separates by one rounding step, and the tie goes to the chunk id.

Free-text queries take this path; a word FTS5 reads as a phrase ("snake_case") has its share
of the score from a one-phrase FTS5 query. ``--query-mode advanced`` (phrases, prefixes,
NEAR) and an index whose postings are out of step with its chunks use FTS5.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from briefd.retrieval.lexical import FieldWeights
from briefd.store import postings
from briefd.store.db import data_version

K1, B = 1.2, 0.75  # FTS5's constants
TOKEN_CACHE = 50_000
MAX_TIED = 2_000

Floats = npt.NDArray[np.float64]
Positions = npt.NDArray[np.signedinteger[Any]]


class StalePostings(Exception):
    """A posting names a chunk the loaded coverage does not have (FTS5 answers instead)."""


class Tokenizer:
    """Query words → FTS5 tokens, through a scratch FTS5 table with chunks_fts's options."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._scratch: sqlite3.Connection | None = None
        self._cache: dict[str, tuple[str, ...]] = {}

    def tokens(self, word: str) -> tuple[str, ...]:
        with self._lock:
            found = self._cache.get(word)
            if found is None:
                if self._scratch is None:
                    self._scratch = postings.scratch_tokenizer()
                found = postings.tokens_of(self._scratch, word)
                if len(self._cache) >= TOKEN_CACHE:
                    self._cache.clear()
                self._cache[word] = found
            return found

    def groups(self, words: Sequence[Sequence[str]]) -> tuple[tuple[Word, ...], ...]:
        """Term groups (a word and its spelling correction) with their tokens."""
        return tuple(tuple(Word(w, self.tokens(w)) for w in group) for group in words)


@dataclass(frozen=True, slots=True)
class Word:
    """A query word and its FTS5 tokens: one token is scored from the postings; several are
    a phrase to FTS5 ("snake_case" → "snake case"), which needs positions, so FTS5 scores
    that phrase alone; none (a lone "_") matches nothing."""

    text: str
    tokens: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PostingsIndex:
    """The per-chunk arrays of one index state: rowids (sorted), BM25 length normalisation,
    scope numbers."""

    rows: npt.NDArray[np.int64]
    norm: Floats  # k1 * (1 - b + b * length / avgdl), per chunk
    scope_codes: npt.NDArray[np.uint16]
    scopes: tuple[str, ...]
    position: npt.NDArray[np.int32]  # rowid → index into rows, -1 for none

    @classmethod
    def build(cls, coverage: postings.Coverage) -> PostingsIndex:
        lengths = coverage.lengths.astype(np.float64)
        avgdl = float(lengths.sum()) / max(len(lengths), 1) or 1.0
        norm = K1 * ((1.0 - B) + (B * lengths) / avgdl)
        top = int(coverage.rows[-1]) + 1 if len(coverage.rows) else 0
        position = np.full(top, -1, dtype=np.int32)
        position[coverage.rows] = np.arange(len(coverage.rows), dtype=np.int32)
        return cls(coverage.rows, norm, coverage.scope_codes, coverage.scopes, position)

    def allowed(self, scopes: Sequence[str]) -> npt.NDArray[np.bool_]:
        codes = [i for i, s in enumerate(self.scopes) if s in set(scopes)]
        return np.isin(self.scope_codes, np.asarray(codes, dtype=np.uint16))

    def contribution(
        self, stored: tuple[postings.Rows, postings.Freqs] | None, weights: FieldWeights
    ) -> tuple[Positions, Floats]:
        """Chunk positions holding one token, and its BM25 term score in each."""
        if stored is None:
            return np.empty(0, np.intp), np.empty(0, np.float64)
        docs, freqs = stored
        total, hits = len(self.rows), len(docs)
        idf = math.log((total - hits + 0.5) / (hits + 0.5))
        idf = idf if idf > 0.0 else 1e-6
        column = np.asarray([weights.title, weights.heading, weights.body], dtype=np.float64)
        weighted = freqs @ column
        if len(docs) and docs[-1] >= len(self.position):
            raise StalePostings
        at = self.position[docs]
        if len(at) and at.min() < 0:
            raise StalePostings
        return at, idf * ((weighted * (K1 + 1.0)) / (weighted + self.norm[at]))


class Lexicon:
    """The postings side of lexical search for one store, reloaded when another process
    commits (``PRAGMA data_version``) or this one re-indexes."""

    def __init__(self) -> None:
        self.tokenizer = Tokenizer()
        self._index: PostingsIndex | None = None
        self._version: tuple[int, int] | None = None

    def invalidate(self) -> None:
        self._version = None

    def index(self, conn: sqlite3.Connection) -> PostingsIndex | None:
        """None when the postings do not cover the chunks (FTS5 answers instead)."""
        version = data_version(conn)
        if version != self._version:
            coverage = postings.load_coverage(conn)
            total = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
            usable = coverage is not None and len(coverage.rows) == total
            self._index = PostingsIndex.build(coverage) if coverage and usable else None
            self._version = version
        return self._index


def ranked(
    conn: sqlite3.Connection,
    index: PostingsIndex,
    groups: Sequence[Sequence[Word]],
    weights: FieldWeights,
    limit: int,
    scopes: Sequence[str] | None,
    every_group: bool,
) -> list[tuple[int, float]]:
    """(rowid, bm25) best first as FTS5 reports them (negative, lower is better), ties by
    chunk id: chunks with every group (``every_group``, an AND query) or any of them (OR).
    A group is one query word and its spelling correction; ``scopes`` None: all. The score
    adds the words' contributions in query order, as FTS5 adds its phrases'."""
    if not groups:
        return []
    single = {w.tokens[0] for g in groups for w in g if len(w.tokens) == 1}
    stored = postings.read(conn, sorted(single))
    score = np.zeros(len(index.rows), dtype=np.float64)
    present = np.zeros(len(index.rows), dtype=np.int32)
    for group in groups:
        covered: Positions | None = None
        for word in group:
            if len(word.tokens) == 1:
                at, value = index.contribution(stored.get(word.tokens[0]), weights)
            else:
                at, value = _phrase(conn, index, word, weights)
            score[at] += value
            covered = at if covered is None else np.union1d(covered, at)
        if covered is not None:
            present[covered] += 1
    hit = present == len(groups) if every_group else present > 0
    if scopes is not None:
        hit &= index.allowed(scopes)
    return _best(conn, index, score, np.flatnonzero(hit), limit)


def _phrase(
    conn: sqlite3.Connection, index: PostingsIndex, word: Word, weights: FieldWeights
) -> tuple[Positions, Floats]:
    """A multi-token word's BM25 term score in each chunk holding the phrase, from FTS5: a
    one-phrase query's bm25() is exactly that phrase's share of a longer query's."""
    if not word.tokens:
        return np.empty(0, np.intp), np.empty(0, np.float64)
    sql = (
        f"SELECT rowid, bm25(chunks_fts, {weights.title!r}, {weights.heading!r}, "
        f"{weights.body!r}) FROM chunks_fts WHERE chunks_fts MATCH ?"
    )
    rows = conn.execute(sql, ('"' + word.text.replace('"', '""') + '"',)).fetchall()
    docs = np.asarray([r[0] for r in rows], dtype=np.int64)
    if len(docs) and (docs.max() >= len(index.position) or index.position[docs].min() < 0):
        raise StalePostings
    return index.position[docs], -np.asarray([r[1] for r in rows], dtype=np.float64)


def _best(
    conn: sqlite3.Connection, index: PostingsIndex, score: Floats, found: Positions, limit: int
) -> list[tuple[int, float]]:
    """The best ``limit`` of ``found``, ties at the cut decided by chunk id: every chunk that
    scores at least the ``limit``-th best is read (up to ``MAX_TIED``), not an arbitrary few."""
    if len(found) > limit:
        cut = np.partition(-score[found], limit - 1)[limit - 1]
        found = found[-score[found] <= cut]
        if len(found) > MAX_TIED:  # thousands of identical sections: rowid order decides
            found = found[np.lexsort((index.rows[found], -score[found]))[:MAX_TIED]]
    rowids = index.rows[found].tolist()
    if not rowids:
        return []
    marks = ", ".join("?" * len(rowids))
    ids = dict(conn.execute(f"SELECT rowid, id FROM chunks WHERE rowid IN ({marks})", rowids))
    rows = [(r, -float(s)) for r, s in zip(rowids, score[found].tolist(), strict=True)]
    rows.sort(key=lambda row: (row[1], ids.get(row[0], "")))
    return rows[:limit]
