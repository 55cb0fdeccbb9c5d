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
of the score from FTS5, asked only where it can matter (:mod:`briefd.retrieval.phrases`).
``--query-mode advanced`` (phrases, prefixes,
NEAR) and an index whose postings are out of step with its chunks use FTS5.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from briefd.retrieval.lexical import FieldWeights
from briefd.retrieval.phrases import Known, Phrase, PhraseScores, holding
from briefd.retrieval.phrases import StalePostings as StalePostings
from briefd.retrieval.words import Tokenizer as Tokenizer
from briefd.retrieval.words import Word as Word
from briefd.store import postings
from briefd.store.db import content_version

K1, B = 1.2, 0.75  # FTS5's constants
# Porter recognises a suffix in most words of a language it knows (English knowledge: 0.64-0.72
# of the distinct words; Turkish: 0.15-0.19); below half, query words also match by prefix
STEMMER_KNOWS = 0.5

Floats = npt.NDArray[np.float64]
Positions = npt.NDArray[np.signedinteger[Any]]


@dataclass(frozen=True, slots=True)
class PostingsIndex:
    """The per-chunk arrays of one index state: rowids (sorted), BM25 length normalisation,
    scope numbers, and each chunk's place in chunk id order (ties go to the lower id)."""

    rows: npt.NDArray[np.int64]
    norm: Floats  # k1 * (1 - b + b * length / avgdl), per chunk
    scope_codes: npt.NDArray[np.uint16]
    scopes: tuple[str, ...]
    position: npt.NDArray[np.int32]  # rowid → index into rows, -1 for none
    id_order: npt.NDArray[np.int32]  # per chunk: its rank among the chunk ids
    # query words also match by prefix: the stemmer does not know the index's language
    conflate: bool = False
    # the FTS5 phrase scores of this index state, kept for the searches that follow
    phrases: PhraseScores = field(default_factory=PhraseScores, compare=False, repr=False)

    @classmethod
    def build(
        cls, coverage: postings.Coverage, by_id: npt.ArrayLike, conflate: bool = False
    ) -> PostingsIndex:
        """``by_id``: the chunks' rowids in chunk id order (every chunk of ``coverage``)."""
        lengths = coverage.lengths.astype(np.float64)
        avgdl = float(lengths.sum()) / max(len(lengths), 1) or 1.0
        norm = K1 * ((1.0 - B) + (B * lengths) / avgdl)
        top = int(coverage.rows[-1]) + 1 if len(coverage.rows) else 0
        position = np.full(top, -1, dtype=np.int32)
        position[coverage.rows] = np.arange(len(coverage.rows), dtype=np.int32)
        ordered = np.asarray(by_id, dtype=np.int64)
        if len(ordered) != len(coverage.rows) or (
            len(ordered) and (ordered.max() >= top or position[ordered].min() < 0)
        ):
            raise StalePostings
        id_order = np.empty(len(coverage.rows), dtype=np.int32)
        id_order[position[ordered]] = np.arange(len(ordered), dtype=np.int32)
        rows, codes = coverage.rows, coverage.scope_codes
        return cls(rows, norm, codes, coverage.scopes, position, id_order, conflate)

    def allowed(self, scopes: Sequence[str]) -> npt.NDArray[np.bool_]:
        codes = [i for i, s in enumerate(self.scopes) if s in set(scopes)]
        return np.isin(self.scope_codes, np.asarray(codes, dtype=np.uint16))

    def idf(self, hits: int) -> float:
        """FTS5's IDF of a term held by ``hits`` chunks (never below 1e-6, as FTS5 clamps)."""
        idf = math.log((len(self.rows) - hits + 0.5) / (hits + 0.5))
        return idf if idf > 0.0 else 1e-6

    def term_score(
        self, idf: float, freqs: postings.Freqs, at: Positions, weights: FieldWeights
    ) -> Floats:
        """A token's BM25 term score in the chunks at positions ``at`` that hold it ``freqs``
        times per column. Element by element: a chunk's score is the same number whichever
        other chunks are scored with it (a matrix product's rounding may depend on the batch)."""
        counts = freqs.astype(np.float64)
        weighted = (counts[:, 0] * weights.title + counts[:, 1] * weights.heading) + (
            counts[:, 2] * weights.body
        )
        return self.weighted_score(idf, weighted, at)

    def weighted_score(self, idf: float, weighted: Floats, at: Positions) -> Floats:
        """BM25 of a term occurring ``weighted`` times (its column weights summed) in the
        chunks at ``at``: FTS5's formula, in its order of operations."""
        return idf * ((weighted * (K1 + 1.0)) / (weighted + self.norm[at]))

    def contribution(
        self, stored: tuple[postings.Rows, postings.Freqs] | None, weights: FieldWeights
    ) -> tuple[Positions, Floats]:
        """Chunk positions holding one token (ascending), and its BM25 term score in each."""
        if stored is None:
            return np.empty(0, np.intp), np.empty(0, np.float64)
        docs, freqs = stored
        at = self.positions(docs)
        return at, self.term_score(self.idf(len(docs)), freqs, at, weights)

    def positions(self, docs: postings.Rows) -> Positions:
        """The positions of ascending chunk rowids the index holds (StalePostings for one it
        does not)."""
        if len(docs) and (docs[0] < 0 or docs[-1] >= len(self.position)):
            raise StalePostings
        at = self.position[docs]
        if len(at) and at.min() < 0:
            raise StalePostings
        return at


class Lexicon:
    """The postings side of lexical search for one store, reloaded when another process
    changes the index's content (:func:`content_version`) or this one re-indexes."""

    def __init__(self) -> None:
        self.tokenizer = Tokenizer()
        self._index: PostingsIndex | None = None
        self._version: tuple[int, int] | None = None

    def invalidate(self) -> None:
        self._version = None

    def close(self) -> None:
        self.tokenizer.close()

    def follow(self, conn: sqlite3.Connection) -> None:
        """Load the postings again now if they were loaded and the index has changed since."""
        if self._version is not None:
            self.index(conn)

    def index(self, conn: sqlite3.Connection) -> PostingsIndex | None:
        """None when the postings do not cover the chunks (FTS5 answers instead)."""
        version = content_version(conn)
        if version != self._version:
            coverage = postings.load_coverage(conn)
            # the chunks' rowids in id order (a covering index scan: ~20 ms at 50K chunks)
            rows = conn.execute("SELECT rowid FROM chunks ORDER BY id")
            by_id = np.fromiter((r[0] for r in rows), dtype=np.int64)  # no list of 1M ints
            usable = coverage is not None and len(coverage.rows) == len(by_id)
            self._index = None
            if coverage is not None and usable:
                conflate = self.tokenizer.stemmed_share(conn) < STEMMER_KNOWS
                try:
                    self._index = PostingsIndex.build(coverage, by_id, conflate)
                except StalePostings:  # the postings name other chunks: FTS5 answers
                    self._index = None
            self._version = version
        return self._index


@dataclass(frozen=True, slots=True)
class Coverage:
    """How many of a query's groups (a word as typed, its correction or its prefix form) each
    chunk of the index holds."""

    index: PostingsIndex
    held: tuple[postings.Rows, ...]  # per group: the rowids of the chunks holding it, ascending

    def share(self, rowid: int) -> float:
        """The share of the groups the chunk holds (1.0: every query word; 0.0: none, or a
        chunk this index does not know)."""
        if not self.held or not 0 <= rowid < len(self.index.position):
            return 0.0
        if self.index.position[rowid] < 0:
            return 0.0
        return sum(_holds(rows, rowid) for rows in self.held) / len(self.held)

    def every_held(self, rowid: int) -> bool:
        """Whether the chunk holds every group the index holds (a query word no chunk has
        tells no chunk from another: it is no word a chunk could hold)."""
        kept = [rows for rows in self.held if len(rows)]
        if not kept or not 0 <= rowid < len(self.index.position):
            return False
        return self.index.position[rowid] >= 0 and all(_holds(rows, rowid) for rows in kept)


def _holds(rows: postings.Rows, rowid: int) -> bool:
    at = int(np.searchsorted(rows, rowid))
    return at < len(rows) and int(rows[at]) == rowid


@dataclass(slots=True)
class Reads:
    """What one query has read from the index, kept for its next list (its all-terms and
    any-term lists hold the same words): each token's postings (None: not in the index) and
    each multi-token word's FTS5 phrase scores, which on a large index cost milliseconds."""

    tokens: dict[str, tuple[postings.Rows, postings.Freqs] | None] = field(default_factory=dict)
    phrases: dict[tuple[str, FieldWeights], Known] = field(default_factory=dict)

    def stored(
        self, conn: sqlite3.Connection, tokens: Sequence[str]
    ) -> dict[str, tuple[postings.Rows, postings.Freqs]]:
        """The postings of ``tokens`` that the index has, each read once."""
        new = [t for t in tokens if t not in self.tokens]
        if new:
            read = postings.read(conn, new)
            self.tokens.update((t, read.get(t)) for t in new)
        return {t: held for t in tokens if (held := self.tokens[t]) is not None}


def with_coverage(
    conn: sqlite3.Connection,
    index: PostingsIndex,
    groups: Sequence[Sequence[Word]],
    weights: FieldWeights,
    limit: int,
    scopes: Sequence[str] | None,
    every_group: bool,
    reads: Reads | None = None,
) -> tuple[list[tuple[int, float]], Coverage]:
    """(rowid, bm25) best first as FTS5 reports them (negative, lower is better), ties by
    chunk id: chunks with every group (``every_group``, an AND query) or any of them (OR); and
    the :class:`Coverage` of every chunk for the same groups. A group is one query word and its
    spelling correction; ``scopes`` None: all. The score adds the words' contributions in query
    order, as FTS5 adds its phrases'. ``reads``: what an earlier list of the same query read
    (and what this one reads is added to it).

    Only the chunks that can be among the best are scored (:func:`_any`, :func:`_every`):
    the same list, with the same scores, as scoring every chunk holding a query word."""
    if not groups:
        return [], Coverage(index, ())
    reads = Reads() if reads is None else reads
    single = {w.tokens[0] for g in groups for w in g if len(w.tokens) == 1 and not w.prefix}
    stored = reads.stored(conn, sorted(single))
    terms = [_term(conn, index, group, stored, weights, reads) for group in groups]
    allowed = index.allowed(scopes) if scopes is not None else None
    pick = _every if every_group else _any
    best = pick(index, terms, weights, limit, allowed) if limit > 0 else []
    return best, Coverage(index, tuple(t.rows for t in terms))


DENSE = 64  # chunks looked up at once, as a share of the index, past which a term maps them


@dataclass(frozen=True, slots=True)
class _Term:
    """One query group as the scoring reads it: the chunks holding it (rowids, ascending),
    the most it adds to any chunk's score, and either one token's postings, scored only
    where asked (``stored``), or its score in every chunk holding it (``at``, ``values``)."""

    rows: postings.Rows
    bound: float
    stored: tuple[postings.Rows, postings.Freqs] | None = None
    at: Positions | None = None
    values: Floats | None = None
    phrase: Phrase | None = None  # a phrase word, its score asked only where it can matter
    slots: list[npt.NDArray[np.int32]] = field(default_factory=list, compare=False, repr=False)

    def spread(self, index: PostingsIndex) -> Positions:
        """The positions of every chunk holding it, ascending."""
        return self.at if self.at is not None else index.positions(self.rows)

    def where(self, index: PostingsIndex, at: Positions, rowids: postings.Rows) -> Positions:
        """Where each chunk (positions ``at``, rowids ``rowids``) is in its lists, -1 where it
        is not: a binary search each, or past 1/DENSE of the index a map of every position,
        built once per term (at a million chunks, 70,000 binary searches in a list of
        290,000 took ~6 ms, the map ~1 ms)."""
        if not self.slots and len(at) * DENSE < len(index.rows):
            return _find(self.at, at) if self.at is not None else _find(self.rows, rowids)
        if not self.slots:
            spread = self.spread(index)
            slot = np.full(len(index.rows), -1, dtype=np.int32)
            slot[spread] = np.arange(len(spread), dtype=np.int32)
            self.slots.append(slot)
        return self.slots[0][at]

    def score(
        self, index: PostingsIndex, weights: FieldWeights, at: Positions, rowids: postings.Rows
    ) -> Floats:
        """Its score in the chunks at positions ``at`` (rowids ``rowids``), 0.0 where absent:
        the same numbers as scoring every chunk holding it."""
        if self.phrase is not None:
            return self.phrase.exact(self.where(index, at, rowids), at)
        out = np.zeros(len(at), dtype=np.float64)
        if self.values is not None and self.at is not None:
            found = self.where(index, at, rowids)
            out[found >= 0] = self.values[found[found >= 0]]
        elif self.stored is not None:
            docs, freqs = self.stored
            found = self.where(index, at, rowids)
            hit = found >= 0
            out[hit] = index.term_score(index.idf(len(docs)), freqs[found[hit]], at[hit], weights)
        return out


def _find(sorted_keys: npt.NDArray[Any], keys: npt.NDArray[Any]) -> npt.NDArray[np.intp]:
    """Where each of ``keys`` is in the ascending ``sorted_keys``, -1 where it is not."""
    if not len(sorted_keys):
        return np.full(len(keys), -1, dtype=np.intp)
    at = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return np.where(sorted_keys[at] == keys, at, -1)


def _term(
    conn: sqlite3.Connection,
    index: PostingsIndex,
    group: Sequence[Word],
    stored: dict[str, tuple[postings.Rows, postings.Freqs]],
    weights: FieldWeights,
    reads: Reads,
) -> _Term:
    """A one-token word keeps its postings, to be scored where needed: no term score reaches
    ``idf × (k1 + 1)``; so does a phrase word (:class:`Phrase`). A group of several words is
    scored in full first."""
    if len(group) == 1 and not group[0].prefix and len(group[0].tokens) == 1:
        held = stored.get(group[0].tokens[0])
        if held is None:
            return _Term(np.empty(0, np.int64), 0.0)
        return _Term(held[0], index.idf(len(held[0])) * (K1 + 1.0), stored=held)
    if len(group) == 1 and not group[0].prefix and len(group[0].tokens) > 1 and _bounded(weights):
        phrase = _phrase_of(conn, index, group[0], weights, reads)
        bound = phrase.idf * (K1 + 1.0) if len(phrase.known.at) else 0.0
        return _Term(index.rows[phrase.known.at], bound, at=phrase.known.at, phrase=phrase)
    if len(group) == 1 and not group[0].prefix:
        at, values = _word_score(conn, index, group[0], stored, weights, reads)
    else:
        exact, prefixed, holds = _group_score(conn, index, group, stored, weights, reads)
        at = np.flatnonzero(holds)
        values = (np.maximum(exact, prefixed) if prefixed is not None else exact)[at]
    order = np.argsort(at, kind="stable")
    at, values = at[order], values[order]
    bound = float(values.max()) if len(values) else 0.0
    return _Term(index.rows[at], bound, at=at, values=values)


def _scores(
    index: PostingsIndex, terms: Sequence[_Term], weights: FieldWeights, at: Positions
) -> Floats:
    """The chunks' scores: the terms' added in query order, as every chunk's are."""
    rowids = index.rows[at]
    total = np.zeros(len(at), dtype=np.float64)
    for term in terms:
        total += term.score(index, weights, at, rowids)
    return total


def _every(
    index: PostingsIndex,
    terms: Sequence[_Term],
    weights: FieldWeights,
    limit: int,
    allowed: npt.NDArray[np.bool_] | None,
) -> list[tuple[int, float]]:
    """The best chunks holding every term: the shortest list, kept where each other holds it
    too (a binary search each), scored there and nowhere else (:func:`_scored`)."""
    by_length = sorted(terms, key=lambda t: len(t.rows))
    rows = by_length[0].rows
    for term in by_length[1:]:
        rows = rows[_find(term.rows, rows) >= 0]
    at = index.positions(rows)
    if allowed is not None:
        at = at[allowed[at]]
    at, scores = _scored(index, terms, weights, at, limit, ())
    return _best(index, scores, at, limit)


PRUNE_MARGIN = 1e-9  # relative: a score is a float sum of at most a few dozen terms


def _any(
    index: PostingsIndex,
    terms: Sequence[_Term],
    weights: FieldWeights,
    limit: int,
    allowed: npt.NDArray[np.bool_] | None,
) -> list[tuple[int, float]]:
    """The best chunks holding any term, by MaxScore: the terms that can add most come first,
    and every chunk holding one of them is scored in full (the others' postings searched for
    it); once the terms left could not lift a chunk holding none of the first to the
    ``limit``-th score even together (``bound``, strictly below, so no tie either), no other
    chunk can be among the best and none is scored. A query of common words alone scores
    every chunk holding any, as before."""
    order = sorted(terms, key=lambda t: (-t.bound, len(t.rows)))
    prune = min(weights.title, weights.heading, weights.body) >= 0.0
    seen = np.zeros(len(index.rows), dtype=np.bool_)
    found: list[Positions] = []
    scores: list[Floats] = []
    for n, term in enumerate(order):
        at = term.spread(index)
        at = at[~seen[at]]
        if allowed is not None:
            at = at[allowed[at]]
        seen[at] = True
        at, score = _scored(index, terms, weights, at, limit, scores)
        found.append(at)
        scores.append(score)
        rest = sum(t.bound for t in order[n + 1 :])
        if rest <= 0.0 or not prune:
            continue
        held = sum(len(a) for a in found)
        if held >= limit:
            score = np.concatenate(scores)
            cut = -float(np.partition(-score, limit - 1)[limit - 1])
            if rest * (1.0 + PRUNE_MARGIN) < cut:
                break
    if not found:
        return []
    return _best(index, np.concatenate(scores), np.concatenate(found), limit)


def _group_score(
    conn: sqlite3.Connection,
    index: PostingsIndex,
    group: Sequence[Word],
    stored: dict[str, tuple[postings.Rows, postings.Freqs]],
    weights: FieldWeights,
    reads: Reads,
) -> tuple[Floats, Floats | None, npt.NDArray[np.bool_]]:
    """One group's BM25 per chunk: its words as typed (summed, as FTS5 sums phrases), its
    prefix forms (None without), and which chunks hold any of them. The caller takes the
    larger of the two, so a chunk with the word as typed is not also counted for its prefix
    (which would weigh long words double) and a chunk with another form of it scores as the
    prefix's phrase would in FTS5 (its IDF over every word it begins)."""
    exact = np.zeros(len(index.rows), dtype=np.float64)
    prefixed: Floats | None = None
    covered = np.zeros(len(index.rows), dtype=np.bool_)
    for word in group:
        if word.prefix:
            merged = postings.read_prefix(conn, word.tokens[0]) if len(word.tokens) == 1 else None
            at, value = index.contribution(merged, weights)
            value = value * word.weight
            if prefixed is None:
                prefixed = np.zeros(len(index.rows), dtype=np.float64)
            prefixed[at] = np.maximum(prefixed[at], value)
        else:
            at, value = _word_score(conn, index, word, stored, weights, reads)
            exact[at] += value
        covered[at] = True
    return exact, prefixed, covered


def _word_score(
    conn: sqlite3.Connection,
    index: PostingsIndex,
    word: Word,
    stored: dict[str, tuple[postings.Rows, postings.Freqs]],
    weights: FieldWeights,
    reads: Reads,
) -> tuple[Positions, Floats]:
    """A word's BM25 as typed: (unique positions of the chunks holding it, its score there)."""
    if len(word.tokens) == 1:
        return index.contribution(stored.get(word.tokens[0]), weights)
    if not word.tokens:
        return np.empty(0, np.intp), np.empty(0, np.float64)
    phrase = _phrase_of(conn, index, word, weights, reads)
    every = np.arange(len(phrase.known.at))
    return phrase.known.at, phrase.exact(every, phrase.known.at)


def _phrase_of(
    conn: sqlite3.Connection, index: PostingsIndex, word: Word, weights: FieldWeights, reads: Reads
) -> Phrase:
    """A multi-token word's :class:`Phrase`: the chunks holding it found once per index state
    (FTS5), its scores as they are asked for (:mod:`briefd.retrieval.phrases`)."""
    key = (word.text, weights)
    known = reads.phrases.get(key)
    if known is None:
        known = index.phrases.get(key, partial(holding, conn, word.text, index))
        reads.phrases[key] = known
    tokens = reads.stored(conn, sorted(set(word.tokens)))
    if len(known.at) and len(tokens) < len(set(word.tokens)):
        raise StalePostings  # FTS5 finds the phrase, the postings lack a token of it
    held = [tokens[t] for t in dict.fromkeys(word.tokens) if t in tokens]
    columns = (weights.title, weights.heading, weights.body)
    return Phrase(conn, index, word.text, columns, known, held)


def _bounded(weights: FieldWeights) -> bool:
    """No column weight below 0: a phrase's score grows with its count (its bounds hold)."""
    return min(weights.title, weights.heading, weights.body) >= 0.0


def _scored(
    index: PostingsIndex,
    terms: Sequence[_Term],
    weights: FieldWeights,
    at: Positions,
    limit: int,
    before: Sequence[Floats],
) -> tuple[Positions, Floats]:
    """The chunks at ``at`` and their scores (:func:`_scores`), less those that cannot be
    among the best ``limit`` with the ``before`` scores found already: a phrase word's score
    is bounded from the postings (:meth:`Phrase.bounds`), and FTS5 asked for it only in the
    chunks whose highest possible score reaches the ``limit``-th of the lowest."""
    if limit < 1 or not len(at) or all(t.phrase is None for t in terms):
        return at, _scores(index, terms, weights, at)
    rowids = index.rows[at]
    low, high = np.zeros(len(at)), np.zeros(len(at))
    plain: list[Floats | None] = []  # each word's scores, kept: a long query's are most of it
    for term in terms:
        if term.phrase is not None:
            least, most = term.phrase.bounds(term.where(index, at, rowids), at)
            plain.append(None)
        else:
            least = most = term.score(index, weights, at, rowids)
            plain.append(least)
        low += least
        high += most
    known = np.concatenate([*before, low])
    if len(known) >= limit:
        cut = -float(np.partition(-known, limit - 1)[limit - 1])
        keep = high * (1.0 + PRUNE_MARGIN) >= cut * (1.0 - PRUNE_MARGIN)
        at, rowids = at[keep], rowids[keep]
    else:
        keep = np.ones(len(at), dtype=bool)
    total = np.zeros(len(at), dtype=np.float64)
    for term, scores in zip(terms, plain, strict=True):  # in query order, as _scores adds
        total += term.score(index, weights, at, rowids) if scores is None else scores[keep]
    return at, total


def _best(
    index: PostingsIndex, score: Floats, found: Positions, limit: int
) -> list[tuple[int, float]]:
    """The best ``limit`` of the chunks at ``found`` (their scores ``score``) as (rowid, bm25),
    equal scores in chunk id order: every chunk that scores at least the ``limit``-th best is
    ordered, not an arbitrary few."""
    if len(found) > limit:
        cut = np.partition(-score, limit - 1)[limit - 1]
        keep = -score <= cut
        found, score = found[keep], score[keep]
    order = np.lexsort((index.id_order[found], -score))[:limit]
    found, score = found[order], score[order]
    return list(zip(index.rows[found].tolist(), (-score).tolist(), strict=True))
