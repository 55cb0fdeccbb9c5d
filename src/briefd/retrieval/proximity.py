"""Term proximity (R1 hybrid): query words close together in a section add to its BM25.

Textbook BM25TP (Rasolofo & Savoy): each pair of neighbouring occurrences of two different
query words, ``d`` tokens apart, adds ``idf(other) / d²`` to both words' proximity
frequency, which is saturated as BM25 saturates a term frequency (k1, b and the section's
length norm) and weighted by ``min(1, idf)``; the sum is added to the section's BM25. Only
the first pass's top candidates are re-scored (``TOP``), from the token streams stored at
index time (:mod:`briefd.store.streams`), so the cost does not grow with the index.

Distance is measured in the section's own structure, not only in reading order:

- body text: consecutive occurrences in reading order, tokens apart (the textbook);
- a table: a header cell is next to every cell of its column (``| Group | ... |`` over
  ``| Jewellery | ... |``): each header word pairs with the nearest word of its column,
  one token plus its place in the cell away;
- the heading path: its own neighbouring words (weighted as BM25 weighs the heading
  column), and each heading word with the first body word of another query word, as the
  heading leads into it.

The same numbers whichever side answered the lexical lists: the postings (each group's
chunk count from their coverage) or FTS5 when the postings are out of step (counted by
FTS5). An index whose streams were never written (built before them) is not re-scored.
"""

from __future__ import annotations

import bisect
import math
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from briefd.retrieval.bm25 import K1, B, Word
from briefd.retrieval.candidates import Candidates
from briefd.retrieval.fusion import Evidence, Fused
from briefd.store import streams

TOP = 20  # first-pass candidates re-scored
_PREFIX_TERMS = 5000  # tokens a prefix word is looked for as, at most


Stored = dict[int, tuple[int, bytes, bytes]]  # :func:`streams.read`
Ints = npt.NDArray[np.intp]
Floats = npt.NDArray[np.float64]


@dataclass(slots=True)
class Pairs:
    """Pairs of occurrences (indexes into a query's hits), their distance and weight."""

    a: list[Ints] = field(default_factory=list)
    b: list[Ints] = field(default_factory=list)
    d: list[Floats] = field(default_factory=list)
    w: list[Floats] = field(default_factory=list)

    def add(self, a: Ints, b: Ints, d: npt.ArrayLike, w: npt.ArrayLike) -> None:
        self.a.append(a)
        self.b.append(b)
        self.d.append(np.broadcast_to(np.asarray(d, np.float64), a.shape))
        self.w.append(np.broadcast_to(np.asarray(w, np.float64), a.shape))


@dataclass(frozen=True, slots=True)
class Hits:
    """Every occurrence of a query word in the re-scored sections, in stream order: the
    section it is in (``owner``), its group and weight, whether it is in the heading path,
    and its offset there or in the body."""

    owner: Ints
    local: Ints  # its place in its section's stream
    group: Ints
    weight: Floats
    head: npt.NDArray[np.bool_]
    offset: Ints


class Proximity:
    """Per query: which token ids are which group's, and each group's IDF."""

    def __init__(self, tokens: dict[str, tuple[int, float]], idf: list[float]) -> None:
        self.idf = np.asarray(idf, dtype=np.float64)
        hashed = {streams.term_hash(t): m for t, m in tokens.items()}
        order = sorted(hashed)
        self.keys = np.asarray(order, dtype=np.uint32)
        self.group = np.asarray([hashed[k][0] for k in order], dtype=np.intp)
        self.weight = np.asarray([hashed[k][1] for k in order], dtype=np.float64)

    def scores(
        self, stored: Stored, state: streams.State, heading_weight: float
    ) -> dict[int, float]:
        """Each section's proximity score (sections with no pair are left out). The query
        words are found in all the sections' streams at once, and the pairs summed as arrays."""
        rowids = list(stored)
        hits = self._hits(stored, rowids)
        if hits is None:
            return {}
        pairs = Pairs()
        body = _neighbours(hits, ~hits.head[:-1])
        pairs.add(body, body + 1, hits.offset[body + 1] - hits.offset[body], 1.0)
        self._columns(stored, rowids, hits, pairs)
        heading = _neighbours(hits, hits.head[:-1])
        pairs.add(
            heading, heading + 1, hits.offset[heading + 1] - hits.offset[heading], heading_weight
        )
        _lead(hits, len(rowids), pairs)
        a, b = np.concatenate(pairs.a), np.concatenate(pairs.b)
        if not len(a):
            return {}
        d2, w = np.concatenate(pairs.d) ** 2, np.concatenate(pairs.w)
        n, g = len(rowids), len(self.idf)
        where = np.stack([hits.owner[a] * g + hits.group[a], hits.owner[b] * g + hits.group[b]])
        value = np.stack(
            [
                w * hits.weight[b] * self.idf[hits.group[b]] / d2,
                w * hits.weight[a] * self.idf[hits.group[a]] / d2,
            ]
        )
        acc = np.zeros(n * g, dtype=np.float64)
        np.add.at(acc, where.T.ravel(), value.T.ravel())  # pair by pair, as read
        x = acc.reshape(n, g)
        lengths = np.asarray([stored[k][0] for k in rowids], dtype=np.float64)
        norm = K1 * ((1.0 - B) + (B * lengths) / state.avgdl())
        score = (np.minimum(1.0, self.idf) * x * (K1 + 1.0) / (x + norm[:, None])).sum(axis=1)
        return {rowids[k]: float(score[k]) for k in np.flatnonzero(score > 0.0).tolist()}

    def _hits(self, stored: Stored, rowids: list[int]) -> Hits | None:
        terms = np.frombuffer(b"".join(stored[k][1] for k in rowids), "<u4")
        sizes = np.asarray([len(stored[k][1]) // 4 for k in rowids], dtype=np.intp)
        ends = np.cumsum(sizes)
        at = np.flatnonzero(np.isin(terms, self.keys))
        if len(at) < 2:
            return None
        which = np.searchsorted(self.keys, terms[at])
        owner = np.searchsorted(ends, at, side="right")
        local = at - (ends - sizes)[owner]
        heads = np.asarray(
            [int.from_bytes(stored[k][2][:4], "little", signed=True) for k in rowids],
            dtype=np.intp,
        )[owner]
        head = local < heads
        offset = np.where(head, local, local - heads)
        return Hits(owner, local, self.group[which], self.weight[which], head, offset)

    def _columns(self, stored: Stored, rowids: list[int], hits: Hits, pairs: Pairs) -> None:
        """Each word of a table's header cell with the nearest word of another query word in
        its column (1 + its place in the cell away); a pair already next to each other in
        reading order counts once."""
        for k, rowid in enumerate(rowids):
            cells = stored[rowid][2]
            if len(cells) <= 4:
                continue
            flat = np.frombuffer(cells, "<i4")[1:].tolist()
            table = [flat[j : j + 5] for j in range(0, len(flat), 5)]
            starts = [c[0] for c in table]
            mine = np.flatnonzero((hits.owner == k) & ~hits.head).tolist()
            placed = [(j, _cell(starts, table, int(hits.local[j]))) for j in mine]
            inside = [(j, c) for j, c in placed if c is not None]
            for j, head in inside:
                if head[3] != 0:
                    continue
                best: tuple[int, int, int] | None = None
                for i, cell in inside:
                    if cell[3] == 0 or cell[2] != head[2] or cell[4] != head[4]:
                        continue
                    if hits.group[i] == hits.group[j]:
                        continue
                    place = (1 + int(hits.local[i]) - cell[0], int(hits.offset[i]), i)
                    if best is None or place[:2] < best[:2]:
                        best = place
                if best is not None and best[2] != j + 1:
                    pairs.add(np.asarray([j]), np.asarray([best[2]]), best[0], 1.0)


def _neighbours(hits: Hits, part: npt.NDArray[np.bool_]) -> Ints:
    """Consecutive occurrences of different words in one section's part (heading path or
    body, ``part`` True), in reading order: the first's index."""
    same = (hits.owner[1:] == hits.owner[:-1]) & (hits.head[1:] == hits.head[:-1])
    return np.flatnonzero(same & part & (hits.group[1:] != hits.group[:-1]))


def _lead(hits: Hits, sections: int, pairs: Pairs) -> None:
    """Each heading word with the first body word of another query word (1 + its offset)."""
    body = np.flatnonzero(~hits.head)
    heading = np.flatnonzero(hits.head)
    if not len(body) or not len(heading):
        return
    first = np.full(sections, -1, dtype=np.intp)
    found, at = np.unique(hits.owner[body], return_index=True)
    first[found] = body[at]
    other = body[hits.group[body] != hits.group[first[hits.owner[body]]]]
    second = np.full(sections, -1, dtype=np.intp)
    found, at = np.unique(hits.owner[other], return_index=True)
    second[found] = other[at]
    f, s = first[hits.owner[heading]], second[hits.owner[heading]]
    b = np.where((f >= 0) & (hits.group[f] != hits.group[heading]), f, s)
    keep = b >= 0
    pairs.add(heading[keep], b[keep], 1 + hits.offset[b[keep]], 1.0)


def _cell(starts: list[int], table: list[list[int]], offset: int) -> list[int] | None:
    """The table cell (start, end, table, row, column) holding the token at ``offset``."""
    k = bisect.bisect_right(starts, offset) - 1
    if k >= 0 and table[k][0] <= offset < table[k][1]:
        return table[k]
    return None


def idf(chunks: int, hits: int) -> float:
    """FTS5's IDF of a term held by ``hits`` of ``chunks`` chunks (as :class:`bm25.
    PostingsIndex` computes it)."""
    value = math.log((chunks - hits + 0.5) / (hits + 0.5))
    return value if value > 0.0 else 1e-6


def _tokens(
    conn: sqlite3.Connection, groups: Sequence[Sequence[Word]]
) -> dict[str, tuple[int, float]]:
    """Each token a query word matches: its group and weight (a word's own token before a
    prefix's, the earlier group's prefix before a later one's)."""
    exact: dict[str, tuple[int, float]] = {}
    prefixes: list[tuple[str, int, float]] = []
    for g, group in enumerate(groups):
        for word in group:
            if len(word.tokens) != 1:
                continue
            if word.prefix:
                prefixes.append((word.tokens[0], g, word.weight))
            else:
                exact.setdefault(word.tokens[0], (g, word.weight))
    found = dict(exact)
    for stem, g, weight in prefixes:
        for (term,) in conn.execute(
            "SELECT term FROM postings WHERE term >= ? AND term < ? LIMIT ?",
            (stem, stem + "\U0010ffff", _PREFIX_TERMS),
        ):
            had = found.get(term)
            if had is None or g < had[0]:
                found[term] = (g, weight)
    return found


def _held(conn: sqlite3.Connection, found: Candidates) -> list[int] | None:
    """Each group's chunk count: from the postings' coverage, else counted by FTS5."""
    if found.coverage is not None:
        return [len(rows) for rows in found.coverage.held]
    counts = []
    for group in found.groups:
        words = [w.text for w in group if not w.prefix]
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        if not match:
            counts.append(0)
            continue
        sql = "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?"
        counts.append(int(conn.execute(sql, (match,)).fetchone()[0]))
    return counts


def rescored(
    conn: sqlite3.Connection,
    found: Candidates,
    evidence: list[Evidence],
    fused: list[Fused[int]],
    rescore: Callable[[list[Evidence]], list[Fused[int]]],
    heading_weight: float,
    chunks: int | None,
) -> list[Fused[int]]:
    """Fusion again, the first pass's top ``TOP`` with their proximity added to their BM25
    (the any-term list's, FTS5's sign: lower is better). ``chunks``: the index's chunk count
    when known (the postings'), else counted; streams not in step with it: no re-score."""
    if len(found.groups) < 2 or not fused:
        return fused
    state = streams.state(conn)
    if state is None:
        return fused
    if chunks is None:
        chunks = int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
    if state.chunks != chunks:
        return fused
    lexical = {e.key for e in evidence if e.bm25 is not None}
    top = [f.key for f in fused[:TOP] if f.key in lexical]
    stored = streams.read(conn, top)
    held = _held(conn, found) if stored else None
    if not held:
        return fused
    near = Proximity(_tokens(conn, found.groups), [idf(state.chunks, n) for n in held]).scores(
        stored, state, heading_weight
    )
    if not near:
        return fused
    return rescore(
        [
            Evidence(e.key, e.cosine, e.bm25 - near[e.key], e.all_terms, e.coverage)
            if e.bm25 is not None and e.key in near
            else e
            for e in evidence
        ]
    )
