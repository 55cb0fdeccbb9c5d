"""Gathering candidates for one query: the all-terms, any-term and vector lists (R1, R2), and
for hybrid search the cosine of every candidate, whichever list brought it."""

from __future__ import annotations

import functools
import sqlite3
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from briefd.errors import EmbeddingError
from briefd.model import HitExplain, SearchMode
from briefd.retrieval import bm25
from briefd.retrieval.bm25 import Lexicon
from briefd.retrieval.fusion import Evidence, Fused, RankedList
from briefd.retrieval.lexical import FieldWeights, MatchPlan, is_prefix, run_match
from briefd.retrieval.semantic import SemanticIndex
from briefd.settings import SearchSettings
from briefd.vectors.index import VectorIndex

ALL_TERMS, ANY_TERM, VECTOR = "all-terms", "any-term", "vector"


@dataclass(slots=True)
class Candidates:
    """Each list as (chunk rowid, raw score), best first; ``cosines`` for every candidate that
    has a vector (hybrid only)."""

    lists: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    cosines: dict[int, float] = field(default_factory=dict)
    # the query as typed, where the model read it otherwise (store.surfaces.restored): fusion
    # takes a candidate's closer reading (:meth:`cosine`), the gate the one the index writes
    typed: dict[int, float] = field(default_factory=dict)
    windows: dict[int, float] = field(default_factory=dict)  # closest window's cosine, if any
    postings: bool = False  # the lexical lists came from the stored postings, not FTS5
    # the share of the any-term query's words each chunk holds (from the postings; None: FTS5)
    coverage: bm25.Coverage | None = None
    reads: bm25.Reads | None = None  # what the lexical lists read (the gate's counts reuse it)
    prefixes: tuple[bm25.Word, ...] = ()  # prefix forms the any-term list scored (--explain)
    groups: tuple[tuple[bm25.Word, ...], ...] = ()  # the any-term list's words (proximity)
    # when FTS5 answered (no postings): the AND of the any-term list's words the index holds
    # (None: it holds none), and the candidates holding them all (:meth:`_every_held`)
    held: str | None = None
    holding: frozenset[int] = frozenset()

    def keys(self) -> list[int]:
        """Every candidate once, in order of first appearance (all-terms, any-term, vector)."""
        seen: dict[int, None] = {}
        for rows in self.lists.values():
            for row, _ in rows:
                seen.setdefault(row, None)
        return list(seen)

    def corroborated(self) -> set[int]:
        """Candidates that contain every query term."""
        rows = self.lists.get(ALL_TERMS)
        if rows is None:  # a one-term query: the any-term list is the all-terms list
            rows = self.lists.get(ANY_TERM, [])
        return {row for row, _ in rows}

    def best_lexical(self) -> tuple[int, ...]:
        """The best section of the all-terms list, else of the any-term list (or none)."""
        rows = self.lists.get(ALL_TERMS) or self.lists.get(ANY_TERM) or []
        return (rows[0][0],) if rows else ()

    def ranked(self, settings: SearchSettings) -> list[RankedList[int]]:
        weights = {
            ALL_TERMS: 1.0,
            ANY_TERM: settings.any_term_weight if ALL_TERMS in self.lists else 1.0,
            VECTOR: settings.rrf_vector_weight,
        }
        return [
            RankedList(name, weights[name], [row for row, _ in rows])
            for name, rows in self.lists.items()
        ]

    def evidence(self, coverage: bool = True) -> list[Evidence]:
        """Each candidate's scores, with ``coverage`` also its share of the query's words
        (without: 0.0, unread)."""
        bm25 = dict(self.lists.get(ANY_TERM, []))
        full = self.corroborated()
        return [
            Evidence(
                k,
                self.cosine(k),
                bm25.get(k),
                k in full or self._every_held(k),
                self._share(k, k in full) if coverage else 0.0,
            )
            for k in self.keys()
        ]

    def cosine(self, rowid: int) -> float | None:
        """The candidate's cosine to the closer reading of the query (None: no vector)."""
        own, typed = self.cosines.get(rowid), self.typed.get(rowid)
        return own if typed is None or (own is not None and own >= typed) else typed

    def _every_held(self, rowid: int) -> bool:
        """The chunk holds every query word the index holds: a word no section has ("fix" in
        a TV manual) tells no section from another, so it keeps none from the all-terms bonus.
        From the postings, else from FTS5 (:func:`held_words`, :func:`holding`)."""
        if self.coverage is None:
            return rowid in self.holding
        return self.coverage.every_held(rowid)

    def _share(self, rowid: int, every_word: bool) -> float:
        """From the postings; when FTS5 answered, 1.0 for every word and 0.0 for fewer."""
        if self.coverage is None:
            return 1.0 if every_word else 0.0
        return self.coverage.share(rowid)

    def lookup(self, name: str, rowid: int) -> tuple[int | None, float | None]:
        for rank, (row, score) in enumerate(self.lists.get(name) or [], start=1):
            if row == rowid:
                return rank, score
        return None, None

    def explain(self, item: Fused[int]) -> HitExplain:
        # a one-term query runs no all-terms list: its any-term list is that list (as in
        # corroborated), so its hits show the rank the all-terms bonus came from
        every = ALL_TERMS if ALL_TERMS in self.lists else ANY_TERM
        and_rank, and_bm25 = self.lookup(every, item.key)
        any_rank, any_bm25 = self.lookup(ANY_TERM, item.key)
        vector_rank, cosine = self.lookup(VECTOR, item.key)
        return HitExplain(
            and_rank,
            and_bm25,
            any_rank,
            any_bm25,
            vector_rank,
            self.cosine(item.key) if cosine is None else cosine,
            item.contributions,
            self.windows.get(item.key),
        )


@dataclass(slots=True)
class Gathering:
    """A query's candidates under way (:func:`start`): the lexical lists are in ``found``,
    the query's vector is being embedded on the query-embedding worker."""

    found: Candidates
    pending: Future[npt.NDArray[np.float32]] | None
    mode: SearchMode
    scopes: Sequence[str]
    depth: int
    typed: Future[npt.NDArray[np.float32]] | None = None  # the query as typed, when it differs
    # the vector list, searched in the HNSW graph beside the lexical side (:func:`_beside`)
    nearest: Future[list[tuple[int, float]]] | None = None
    deadline: float | None = None  # time.monotonic() the vector must be there by (None: any)
    wait: float = 0.0  # the seconds that deadline gave it, to say so


def start(
    conn: sqlite3.Connection,
    query: str,
    plan: MatchPlan | None,
    mode: SearchMode,
    scopes: Sequence[str],
    settings: SearchSettings,
    semantic: SemanticIndex | None,
    depth: int,
    every_scope: bool = False,
    lexicon: Lexicon | None = None,
    pending: Future[npt.NDArray[np.float32]] | None = None,
    typed: Future[npt.NDArray[np.float32]] | None = None,
) -> Gathering:
    """Start embedding the query (unless ``pending``, from :func:`embedding`, already has), and
    gather the lexical lists meanwhile. What else needs no vector can run between this and
    :func:`finish`, while the model works. ``typed``: the vector of the query as typed, when
    the model reads it otherwise (:func:`briefd.store.surfaces.restored`). With
    :attr:`SemanticIndex.wait` set (a server's), :func:`finish` waits for the vectors that
    long from now, no longer."""
    wait = semantic.wait if semantic is not None else None
    deadline = time.monotonic() + wait if wait else None
    found = Candidates()
    if not scopes:
        return Gathering(found, None, mode, scopes, depth)
    if pending is None:  # embed the query while FTS5 ranks
        pending = embedding(semantic, query, mode)
    nearest = None
    if mode == "hybrid" and plan is not None and pending is not None and semantic is not None:
        wanted = max(depth, settings.vector_candidates)
        nearest = _beside(semantic.index(conn), pending, typed, scopes, wanted)
    if mode != "vector" and plan is not None:
        _lexical(conn, found, plan, mode, scopes, settings, depth, every_scope, lexicon)
    return Gathering(found, pending, mode, scopes, depth, typed, nearest, deadline, wait or 0.0)


def finish(
    conn: sqlite3.Connection,
    started: Gathering,
    settings: SearchSettings,
    semantic: SemanticIndex | None,
) -> Candidates:
    """The vector list (and for hybrid every candidate's cosine), once the query's vector is
    there: by the gathering's deadline, else EmbeddingError (:func:`awaited`)."""
    found, mode = started.found, started.mode
    if started.pending is not None and semantic is not None:
        index = semantic.index(conn)
        try:
            vector = awaited(started.pending, started.deadline, started.wait)
        except EmbeddingError:
            if started.typed is not None:  # the second reading's, not begun: for no one now
                started.typed.cancel()
            raise
        wanted = max(started.depth, settings.vector_candidates)
        reading = started.typed
        typed = awaited(reading, started.deadline, started.wait) if reading is not None else None
        if started.nearest is not None:
            found.lists[VECTOR] = started.nearest.result()
        else:
            found.lists[VECTOR] = _nearest(index, vector, typed, started.scopes, wanted)
        if mode == "hybrid":
            found.cosines = index.cosines(found.keys(), vector)
            if typed is not None:
                found.typed = index.cosines(found.keys(), typed)
        _rescore_with_windows(conn, found, semantic, vector, mode)
    if found.held is not None:
        found.holding = holding(conn, found.held, found.keys())
    return found


def _nearest(
    index: VectorIndex,
    vector: npt.NDArray[np.float32],
    typed: npt.NDArray[np.float32] | None,
    scopes: Sequence[str],
    wanted: int,
) -> list[tuple[int, float]]:
    """The vector list: the ``wanted`` rows nearest the query (with ``typed``, the closer of
    its two readings: a section is as close as the closer one)."""
    rows = index.top(vector, scopes, wanted)
    if typed is not None:
        rows = _closer(rows, index.top(typed, scopes, wanted))[:wanted]
    return rows


def _beside(
    index: VectorIndex,
    pending: Future[npt.NDArray[np.float32]],
    typed: Future[npt.NDArray[np.float32]] | None,
    scopes: Sequence[str],
    wanted: int,
) -> Future[list[tuple[int, float]]] | None:
    """On an index large enough for the HNSW graph (milliseconds a search at a million rows),
    the vector list under way on a worker as soon as the query's vector is there, so the
    graph search runs beside the lexical side, not after it (usearch, like SQLite's reads,
    releases the GIL). None below the graph's size: the exact scan runs in :func:`finish`."""
    if index.ann is None:
        return None
    out: Future[list[tuple[int, float]]] = Future()

    def search() -> None:
        try:
            second = typed.result() if typed is not None else None
            out.set_result(_nearest(index, pending.result(), second, scopes, wanted))
        except BaseException as exc:  # the search's to raise, from finish()
            out.set_exception(exc)

    pending.add_done_callback(lambda _: _nearest_pool().submit(search))
    return out


def awaited(
    pending: Future[npt.NDArray[np.float32]], deadline: float | None, wait: float = 0.0
) -> npt.NDArray[np.float32]:
    """The query's vector, waited for until ``deadline`` at most (None: for as long as the
    model takes). Past it, EmbeddingError (the search answers by keywords, as when the model
    fails): on a busy machine, or behind other searches' queries on the one query worker, a
    server's search waited seconds for it. One that has not started yet is dropped, so the
    worker's line does not grow with searches that stopped waiting; one under way is finished
    and kept for the next ask of the same query."""
    if deadline is None:
        return pending.result()
    try:
        return pending.result(timeout=max(0.0, deadline - time.monotonic()))
    except TimeoutError:
        pending.cancel()
        raise EmbeddingError(
            f"the model had not embedded the query within the {wait:g} s a server's search "
            "waits for it: the machine is busy"
        ) from None


def _closer(
    first: list[tuple[int, float]], second: list[tuple[int, float]]
) -> list[tuple[int, float]]:
    """Each chunk of either list once, at the higher of its cosines, closest first."""
    best = dict(first)
    for rowid, cosine in second:
        best[rowid] = max(cosine, best.get(rowid, cosine))
    return sorted(best.items(), key=lambda item: -item[1])


def _rescore_with_windows(
    conn: sqlite3.Connection,
    found: Candidates,
    semantic: SemanticIndex,
    vector: npt.NDArray[np.float32],
    mode: SearchMode,
) -> None:
    """With section windows, a candidate's cosine is the best of its own and its windows': the
    vector list is re-ordered by it, and hybrid fusion and the gate read it. Only candidates
    are re-scored, so a chunk that only a window would bring into the vector list stays out."""
    if semantic.window_words <= 0:
        return
    keys = found.keys() if mode == "hybrid" else [rowid for rowid, _ in found.lists[VECTOR]]
    windows = semantic.window_cosines(conn, keys, vector)
    if not windows:
        return
    found.windows = windows
    listed = [
        (rowid, max(cosine, windows.get(rowid, cosine))) for rowid, cosine in found.lists[VECTOR]
    ]
    found.lists[VECTOR] = sorted(listed, key=lambda item: -item[1])
    found.cosines = {k: max(c, windows.get(k, c)) for k, c in found.cosines.items()}


def _lexical(
    conn: sqlite3.Connection,
    found: Candidates,
    plan: MatchPlan,
    mode: SearchMode,
    scopes: Sequence[str],
    settings: SearchSettings,
    depth: int,
    every: bool,
    lexicon: Lexicon | None,
) -> None:
    """The all-terms and any-term lists: from the postings when they can answer, else FTS5."""
    weights = FieldWeights(settings.title_weight, settings.heading_weight, settings.body_weight)
    index = lexicon.index(conn) if lexicon is not None and plan.groups else None
    if index is None or lexicon is None:
        if plan.all_terms:
            found.lists[ALL_TERMS] = run_match(conn, plan.all_terms, scopes, weights, depth, every)
        if not _all_terms_decide(found, mode, settings, depth):
            found.lists[ANY_TERM] = run_match(conn, plan.any_term, scopes, weights, depth, every)
        if mode == "hybrid":  # the all-terms bonus's words, as the postings would count them
            found.held = held_words(conn, plan.any_groups)
            found.groups = _tokenizer(lexicon).groups(plan.any_groups)
        return
    # every word as typed for the all-terms list; prefix forms widen the any-term list only
    every_groups = lexicon.tokenizer.groups(plan.groups)
    any_groups = lexicon.tokenizer.groups(plan.any_groups, index.conflate)
    within, reads = None if every else scopes, bm25.Reads()  # read once for both lists
    found.reads = reads
    try:
        if plan.all_terms:
            found.lists[ALL_TERMS] = bm25.with_coverage(
                conn, index, every_groups, weights, depth, within, True, reads
            )[0]
        if not _all_terms_decide(found, mode, settings, depth):
            found.lists[ANY_TERM], found.coverage = bm25.with_coverage(
                conn, index, any_groups, weights, depth, within, False, reads
            )
            found.prefixes = tuple(w for group in any_groups for w in group if w.prefix)
            found.groups = any_groups
    except bm25.StalePostings:
        if lexicon is not None:
            lexicon.invalidate()
        found.lists.clear()
        found.coverage, found.reads, found.prefixes, found.groups = None, None, (), ()
        _lexical(conn, found, plan, mode, scopes, settings, depth, every, None)
        return
    found.postings = True


@functools.cache
def _own_tokenizer() -> bm25.Tokenizer:
    return bm25.Tokenizer()


def _tokenizer(lexicon: Lexicon | None) -> bm25.Tokenizer:
    """The lexicon's query tokenizer, else one of this module's (FTS5 answering)."""
    return lexicon.tokenizer if lexicon is not None else _own_tokenizer()


def held_words(conn: sqlite3.Connection, groups: Sequence[Sequence[str]]) -> str | None:
    """The FTS5 AND of the query words (each in the forms the FTS5 any-term list matches: as
    typed, or its spelling correction) that some chunk of the index holds; None for none.
    Without the postings, this is how the all-terms bonus knows the words the index holds,
    as :meth:`bm25.Coverage.every_held` does with them."""
    held = []
    for group in groups:
        words = [w for w in group if not is_prefix(w)]
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        if not match:
            continue
        expression = f"({match})" if len(words) > 1 else match
        sql = "SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT 1"
        if conn.execute(sql, (expression,)).fetchone() is not None:
            held.append(expression)
    return " AND ".join(held) if held else None


HOLDING_BATCH = 500  # candidate rowids looked up per FTS5 query


def holding(conn: sqlite3.Connection, held: str, rowids: Sequence[int]) -> frozenset[int]:
    """Which of ``rowids`` match the FTS5 expression ``held`` (:func:`held_words`)."""
    found: set[int] = set()
    for start in range(0, len(rowids), HOLDING_BATCH):
        batch = list(rowids[start : start + HOLDING_BATCH])
        marks = ", ".join("?" * len(batch))
        sql = f"SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid IN ({marks})"
        found.update(int(row[0]) for row in conn.execute(sql, (held, *batch)))
    return frozenset(found)


def _all_terms_decide(
    found: Candidates, mode: SearchMode, settings: SearchSettings, depth: int
) -> bool:
    """In BM25 mode, a full all-terms list leaves the any-term list nothing to decide: under RRF
    a chunk missing a term (at best ``any_term_weight / (k + 1)``) cannot outrank the last of
    ``depth`` chunks that have them all (``1 / (k + depth)``), and for chunks with every term
    the any-term order follows the all-terms order (the same BM25 sum, less any common terms
    left out of it). The any-term query is the slow one on large indexes, so it is skipped."""
    rows = found.lists.get(ALL_TERMS)
    if mode != "bm25" or rows is None or len(rows) < depth:
        return False
    k = settings.rrf_k
    return settings.any_term_weight / (k + 1) < 1 / (k + depth)


def embedding(
    semantic: SemanticIndex | None, query: str, mode: SearchMode, beside: bool = False
) -> Future[npt.NDArray[np.float32]] | None:
    """The query's vector under way on the query-embedding worker (None: ``mode`` needs none).
    A search starts it before anything else, so the model runs beside the reads that follow.
    ``beside``: on a second worker, for a query's second reading (the words restored with their
    diacritics, :func:`briefd.retrieval.search._model_text`): the two run at once, not one
    after the other (onnxruntime runs two calls on one session side by side, the same bits).
    A vector at hand (the same query earlier, a prefetch done, primed queries) is returned
    done: the search neither hands it to the worker and back nor waits there behind another
    query being embedded (a long one takes ~0.1 s)."""
    if mode == "bm25" or semantic is None:
        return None
    cached = semantic.cached_vector(query)
    if cached is not None:
        done: Future[npt.NDArray[np.float32]] = Future()
        done.set_result(cached)
        return done
    return (_second_pool() if beside else _embedding_pool()).submit(semantic.query_vector, query)


def prefetch(semantic: SemanticIndex | None, query: str) -> None:
    """Start embedding ``query`` on the query-embedding worker and return at once: the search
    that follows runs its lexical part meanwhile and finds the vector cached (its own call
    queues behind this one on the same worker). An error is the search's to report."""
    if semantic is not None and query.strip():
        _embedding_pool().submit(semantic.query_vector, query)


@functools.cache
def _embedding_pool() -> ThreadPoolExecutor:
    """One worker: the model call releases the GIL, so it overlaps the lexical queries."""
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="briefd-query-embed")


@functools.cache
def _nearest_pool() -> ThreadPoolExecutor:
    """Graph searches beside the lexical side (see :func:`_beside`): a few workers, so one
    search waiting for its query's second reading holds up no other."""
    return ThreadPoolExecutor(max_workers=4, thread_name_prefix="briefd-nearest")


@functools.cache
def _second_pool() -> ThreadPoolExecutor:
    """The worker for a query's second reading (see :func:`embedding`)."""
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="briefd-query-embed-2")
