"""Phrase words scored as FTS5 scores them, and kept per index state (R1 at scale).

A query word FTS5 reads as a phrase ("node.js", "payments.events.v1", "snake_case") needs
token positions, which only FTS5 holds. A one-phrase FTS5 query scoring every chunk holding
it (:func:`briefd.retrieval.bm25._phrase`) walks the position lists of every token of it
twice (the second time to count the phrase for its IDF) and reads each matching row's length:
~190 ms for "node.js" on a million chunks. :class:`Phrase` asks FTS5 which chunks hold the
phrase (one walk) and for its score only in those chunks that can still be among the best.
What it learns changes only with the index, so it is kept with the postings of that index
state (a new state starts empty), the most recently used first, up to :data:`KEPT` chunks.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

KEPT = 1_000_000  # chunks kept in all (a position and a float each: ~12 MB)
ASK_BATCH = 20_000  # chunks checked per FTS5 query (SQLite allows 32,766 variables)
ASK_ALL = 256  # unscored chunks of a phrase asked for all at once (~1 µs each to FTS5)


class PostingsIndex(Protocol):
    """What a phrase reads of :class:`briefd.retrieval.bm25.PostingsIndex`."""

    @property
    def rows(self) -> npt.NDArray[np.int64]: ...

    def idf(self, hits: int) -> float: ...

    def weighted_score(self, idf: float, weighted: Floats, at: Positions) -> Floats: ...

    def positions(self, docs: npt.NDArray[np.int64]) -> Positions: ...


class StalePostings(Exception):
    """A posting names a chunk the loaded coverage does not have (FTS5 answers instead)."""


Positions = npt.NDArray[np.signedinteger[Any]]
Floats = npt.NDArray[np.float64]
Freqs = npt.NDArray[np.uint16]


class PhraseScores:
    """Phrase → what is known of it (:class:`Known`), found once per index state."""

    def __init__(self, kept: int = KEPT) -> None:
        self._kept = kept
        self._held: OrderedDict[Hashable, Known] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable, compute: Callable[[], Known]) -> Known:
        """The scores of ``key``, from ``compute`` the first time (outside the lock: two
        searches asking at once may both compute the same numbers)."""
        with self._lock:
            found = self._held.get(key)
            if found is not None:
                self._held.move_to_end(key)
                return found
        found = compute()
        with self._lock:
            if key not in self._held and len(found.at) <= self._kept:
                self._held[key] = found
                self._size += len(found.at)
                while self._size > self._kept:
                    _, dropped = self._held.popitem(last=False)
                    self._size -= len(dropped.at)
        return found

    def __len__(self) -> int:
        return len(self._held)


@dataclass(frozen=True, slots=True)
class Known:
    """A phrase word's chunks in one index state (positions, ascending) and FTS5's score in
    each where found so far (NaN: not asked yet; filled in by later searches too)."""

    at: Positions
    scores: Floats


def holding(conn: sqlite3.Connection, text: str, index: PostingsIndex) -> Known:
    """The chunks holding the phrase ``text``: one FTS5 walk of its position lists."""
    cursor = conn.cursor()
    cursor.row_factory = None  # plain tuples: a sqlite3.Row each costs ~0.3 µs more
    found = cursor.execute("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?", (quoted(text),))
    docs = np.fromiter((row[0] for row in found), dtype=np.int64)
    docs.sort()
    at = index.positions(docs)
    return Known(at, np.full(len(at), np.nan))


def quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


class Phrase:
    """A phrase word of one query ("node.js": the tokens "node js" adjacent), scored exactly
    as FTS5's ``bm25()`` scores it, only where that can change the list.

    In a chunk holding it (:attr:`known`) the phrase occurs at most as often per column as
    its rarest token there (the postings say), and at least once in a column holding them
    all: bounds on its score (:meth:`bounds`). Where they meet (one such column, once) that
    is the score; in the chunks still in the running FTS5 scores the rest (:meth:`exact`)."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        index: PostingsIndex,
        text: str,
        weights: tuple[float, float, float],
        known: Known,
        tokens: Sequence[tuple[npt.NDArray[np.int64], Freqs]],
    ) -> None:
        self._conn, self._index, self._text, self._weights = conn, index, text, weights
        self.known = known
        self.idf = index.idf(len(known.at))
        self._rowids = index.rows[known.at]
        self._tokens = tokens  # each token's postings (every chunk holding the phrase has it)

    def bounds(self, found: npt.NDArray[np.intp], at: Positions) -> tuple[Floats, Floats]:
        """The lowest and highest score the phrase can have in the chunks at positions ``at``
        (``found``: where each is in :attr:`known`, -1 for a chunk without it: 0.0)."""
        low, high = np.zeros(len(at)), np.zeros(len(at))
        hit = found >= 0
        where = found[hit]
        most = self._most(where)
        least = np.where(most >= 1, np.asarray(self._weights), np.inf).min(axis=1)
        done = self.known.scores[where]
        fresh = np.isnan(done)
        low[hit] = np.where(fresh, self._index.weighted_score(self.idf, least, at[hit]), done)
        most_score = self._index.weighted_score(self.idf, _weighted(most, self._weights), at[hit])
        high[hit] = np.where(fresh, most_score, done)
        return low, high

    def exact(self, found: npt.NDArray[np.intp], at: Positions) -> Floats:
        """FTS5's score of the phrase in the chunks at positions ``at`` (0.0 where absent)."""
        out = np.zeros(len(at))
        hit = found >= 0
        where = found[hit]
        missing = np.unique(where[np.isnan(self.known.scores[where])])
        if len(missing):
            most = self._most(missing)
            once = (most.max(axis=1) == 1) & ((most >= 1).sum(axis=1) == 1)
            single = missing[once]  # one column can hold it, once: FTS5 sums that one weight
            self.known.scores[single] = self._index.weighted_score(
                self.idf, _weighted(most[once], self._weights), self.known.at[single]
            )
            self._ask(self._asked(missing[~once]))
        out[hit] = self.known.scores[where]
        return out

    def _asked(self, needed: npt.NDArray[np.intp]) -> npt.NDArray[np.intp]:
        """The chunks to ask FTS5 about: ``needed``, and with them every other chunk of the
        phrase whose score is not known yet when they are few (:data:`ASK_ALL`), so the
        searches that follow ask no more (a query costs two walks of the position lists)."""
        if not len(needed):
            return needed
        unknown = np.flatnonzero(np.isnan(self.known.scores))
        return unknown if len(unknown) <= ASK_ALL else needed

    def _most(self, where: npt.NDArray[np.intp]) -> npt.NDArray[np.int64]:
        """Per chunk (``where`` in :attr:`known`) and column: the fewest times any token of
        the phrase occurs there."""
        rowids = self._rowids[where]
        most = np.zeros((len(where), 3), dtype=np.int64)  # a phrase no chunk holds: none
        for n, (docs, freqs) in enumerate(self._tokens):
            at = np.minimum(np.searchsorted(docs, rowids), len(docs) - 1)
            if len(at) and (docs[at] != rowids).any():
                raise StalePostings  # a chunk FTS5 says holds the phrase lacks a token of it
            counts = freqs[at].astype(np.int64)
            most = counts if n == 0 else np.minimum(most, counts)
        return most

    def _ask(self, where: npt.NDArray[np.intp]) -> None:
        """FTS5's score in the chunks at ``where`` in :attr:`known`: one walk of the phrase,
        each chunk checked against the list (``+rowid``: a ``rowid IN`` FTS5 answers itself
        costs a walk per chunk), and the IDF's walk."""
        t, h, b = self._weights
        if len(where) > ASK_BATCH:  # most of them: every chunk holding it, in one query
            where = np.arange(len(self.known.at))
            place = {int(r): int(p) for r, p in zip(self._rowids, where, strict=True)}
            sql = (
                f"SELECT rowid, bm25(chunks_fts, {t!r}, {h!r}, {b!r}) FROM chunks_fts "
                "WHERE chunks_fts MATCH ?"
            )
            cursor = self._conn.cursor()
            cursor.row_factory = None
            for row, score in cursor.execute(sql, (quoted(self._text),)):
                self.known.scores[place[row]] = -score
            return
        for start in range(0, len(where), ASK_BATCH):
            part = where[start : start + ASK_BATCH]
            place = {int(r): int(p) for r, p in zip(self._rowids[part], part, strict=True)}
            sql = (
                f"SELECT rowid, bm25(chunks_fts, {t!r}, {h!r}, {b!r}) FROM chunks_fts "
                f"WHERE chunks_fts MATCH ? AND +rowid IN ({', '.join('?' * len(part))})"
            )
            cursor = self._conn.cursor()
            cursor.row_factory = None
            for row, score in cursor.execute(sql, (quoted(self._text), *place)):
                self.known.scores[place[row]] = -score


def _weighted(counts: npt.NDArray[np.int64], weights: tuple[float, float, float]) -> Floats:
    """Column counts times their weights, summed as bm25.PostingsIndex.term_score does."""
    floats = counts.astype(np.float64)
    return (floats[:, 0] * weights[0] + floats[:, 1] * weights[1]) + floats[:, 2] * weights[2]
