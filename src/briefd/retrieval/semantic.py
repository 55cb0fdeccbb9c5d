"""Semantic retrieval (R2): the query embedding and the loaded vector index of one store.

The vector matrix (one row per chunk) is loaded once and kept until the index's content changes
(:func:`briefd.store.db.content_version`); query embeddings are memoised, so the same query
costs one model call, and bounded: only a query's first window is embedded. Section windows
(``embeddings.window_words``) stay in the index file and re-score a query's candidates only.
"""

from __future__ import annotations

import functools
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Protocol

import numpy as np
import numpy.typing as npt

from briefd.embeddings.base import Embedder
from briefd.errors import EmbeddingError
from briefd.retrieval import calibration
from briefd.retrieval.gate import Calibration
from briefd.settings import Settings
from briefd.store.db import Store, content_version
from briefd.vectors import snapshot
from briefd.vectors import store as vector_store
from briefd.vectors.index import VectorIndex
from briefd.vectors.windows import WindowCache

QUERY_CACHE = 256
QUERY_CHARS = 2000  # embedded of a query; the rest only goes to BM25


class SemanticIndex:
    # when set (a monotonic time): a query the model has not embedded by then raises
    # EmbeddingError (its caller answers by keywords) and is finished in the background for
    # the next ask; what that time ends is said in the error (the recall daemon's answer time)
    deadline: float | None = None
    within = "the time given"
    # when set (seconds): a search whose query vector is not there this long after it began
    # answers by keywords, as a failing model leaves it (a running server's searches: see
    # :func:`briefd.retrieval.candidates.finish`)
    wait: float | None = None

    def __init__(
        self,
        embedder: Embedder,
        blas_threads: int = 1,
        ann_threshold: int = 0,
        window_words: int = 0,
    ) -> None:
        self.embedder = embedder
        self.window_words = window_words
        self.blas_threads = blas_threads
        self.ann_threshold = ann_threshold
        self._index: VectorIndex | None = None
        self.calibration: Calibration | None = None
        self.to_embed = 0  # chunks still to embed with this model, some done, another's kept
        self._version: tuple[int, int] | None = None
        self._queries: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._primed: dict[str, npt.NDArray[np.float32]] = {}
        self._cache_lock = threading.Lock()
        self._running: dict[str, Future[npt.NDArray[np.float32]]] = {}  # past a deadline
        self._windows = WindowCache(embedder.model_id, window_words)

    def invalidate(self) -> None:
        self._index = None

    def follow(self, conn: sqlite3.Connection) -> None:
        """Load the vectors again now if they were loaded and the index has changed since."""
        if self._index is not None:
            self.index(conn)

    def index(self, conn: sqlite3.Connection) -> VectorIndex:
        version = content_version(conn)
        if self._index is None or version != self._version:
            (rowids, scopes, matrix), key = snapshot.keyed_rows(
                conn, self.embedder.model_id, snapshot.index_file(conn)
            )
            self._windows.clear()
            self._index = VectorIndex.build(
                self.embedder.model_id,
                rowids,
                scopes,
                matrix,
                self.blas_threads,
                self.ann_threshold,
                snapshot.index_file(conn),
                key,
            )
            self.calibration = calibration.load(conn, self.embedder.model_id)
            model, loaded = self.embedder.model_id, len(self._index)
            self.to_embed = vector_store.partly_embedded(conn, model) if loaded else 0
            self._version = version
        return self._index

    def window_cosines(
        self, conn: sqlite3.Connection, rowids: Sequence[int], query: npt.NDArray[np.float32]
    ) -> dict[int, float]:
        """Per chunk among ``rowids`` that has section windows (``embeddings.window_words``),
        the cosine of ``query`` to its closest window; {} without windows. Only these
        candidates' windows are read (:mod:`briefd.vectors.windows`): the index in memory and
        its scan stay one row per chunk. Call after :meth:`index` on the same snapshot."""
        return self._windows.cosines(conn, rowids, query)

    def vector(self, rowid: int) -> npt.NDArray[np.float32] | None:
        """A chunk's row in the loaded index (None: not loaded, or no vector for it). Call
        after :meth:`index`, as a search does."""
        index = self._index
        return index.vector(rowid) if index is not None else None

    def prime(self, texts: list[str], batch_size: int = 32) -> None:
        """Embed many queries at once (evaluation, tuning); kept for this object's lifetime."""
        todo = [t for t in dict.fromkeys(map(query_text, texts)) if t not in self._primed]
        for start in range(0, len(todo), batch_size):
            part = todo[start : start + batch_size]
            vectors = self.embedder.embed_batch(part, "query")
            for text, vector in zip(part, vectors, strict=True):
                self._primed[text] = vector

    def query_vector(self, text: str, deadline: float | None = None) -> npt.NDArray[np.float32]:
        """The query's vector, of its first window only (:func:`query_text`). Safe to call
        from several threads: two new queries are embedded side by side, as an index run's
        passages already are next to queries. ``deadline`` (else :attr:`deadline`): see
        :meth:`_by`. A query the model is still finishing past a deadline is not embedded
        again: EmbeddingError, so the search asking next (a server's, for the long prompt it
        began embedding before its lock) does not wait a second time."""
        text = query_text(text)
        cached = self._cached(text)
        if cached is not None:
            return cached
        deadline = self.deadline if deadline is None else deadline
        if deadline is not None:
            return self._by(deadline, text)
        with self._cache_lock:
            late = text in self._running
        if late:
            raise EmbeddingError(
                f"the model had not embedded the query within {self.within}; it goes on, for "
                "the next ask"
            )
        return self._embedded(text)

    def _embedded(self, text: str) -> npt.NDArray[np.float32]:
        try:
            vector: npt.NDArray[np.float32] = self.embedder.embed_query(text)[0]
        finally:
            with self._cache_lock:
                self._running.pop(text, None)
        with self._cache_lock:
            self._queries[text] = vector
            if len(self._queries) > QUERY_CACHE:
                self._queries.popitem(last=False)
        return vector

    def _by(self, deadline: float, text: str) -> npt.NDArray[np.float32]:
        """The query's vector if the model has it by ``deadline``, else EmbeddingError: on a
        loaded machine a long prompt's one window (~0.26 CPU-s) took 1.0-1.5 s, past the 1 s
        the hook waits for the daemon, so the prompt got nothing. The model goes on in the
        background (once per text, however many callers wait) and its vector is cached, so the
        same prompt asked again is answered with it."""
        with self._cache_lock:  # held while submitting: the job's own pop comes after this
            running = self._running.get(text)
            if running is None:
                running = self._running[text] = _model_pool().submit(self._embedded, text)
        try:
            return running.result(timeout=max(0.0, deadline - time.monotonic()))
        except TimeoutError:
            raise EmbeddingError(
                f"the model had not embedded the prompt within {self.within}; it goes on, "
                "for the next prompt"
            ) from None

    def cached_vector(self, text: str) -> npt.NDArray[np.float32] | None:
        """The query's vector if it is at hand (primed, or embedded recently), else None."""
        return self._cached(query_text(text))

    def _cached(self, text: str) -> npt.NDArray[np.float32] | None:
        primed = self._primed.get(text)
        if primed is not None:
            return primed
        with self._cache_lock:
            cached = self._queries.get(text)
            if cached is not None:
                self._queries.move_to_end(text)
            return cached


def serving(semantic: SemanticIndex | None, settings: Settings) -> None:
    """Set ``semantic`` up for a server's searches (``briefd serve``, ``briefd mcp``): each
    waits ``serve.query_wait_seconds`` at most (1 s; a query takes the model 6-15 ms on a
    quiet machine) for a local model's query vector. On a busy machine (an index run embedding beside the
    server, other processes) one took seconds, while every other request waited for the
    server's lock behind it and the prompt hook asking the server gave up after its 2 s
    (``recall.server_timeout``): the prompt got nothing. A remote service's query has its own
    timeout (``embeddings.query_timeout_seconds``), which a server keeps."""
    if semantic is not None and settings.embeddings.adapter == "local":
        semantic.wait = settings.serve.query_wait_seconds
        semantic.within = f"the {semantic.wait:g} s a server's search waits for it"


def query_text(text: str) -> str:
    """What the model reads of a query: at most :data:`QUERY_CHARS` characters, cut at a word
    boundary, about one model window (e5: 510 tokens). A pasted page or a long task costs one
    window, not one per 510 tokens; BM25 still gets the whole query."""
    if len(text) <= QUERY_CHARS:
        return text
    cut = text[:QUERY_CHARS]
    space = max(cut.rfind(" "), cut.rfind("\n"))
    return cut[:space] if space > QUERY_CHARS // 2 else cut


class Follows(Protocol):
    def follow(self, conn: sqlite3.Connection) -> None: ...


def follow(store: Store, *caches: Follows | None) -> None:
    """After another connection changed the index (a sync's or a rebuild's), load now what
    this process's searches had loaded (vectors, postings, vocabulary): on a 50K-chunk index
    the first search after a sync otherwise waits ~0.5 s for it. What was never loaded (a
    command-line process that searched nothing) stays unloaded."""
    with store.read() as conn:
        for cache in caches:
            if cache is not None:
                cache.follow(conn)


@functools.cache
def _model_pool() -> ThreadPoolExecutor:
    """The model's worker for queries embedded against a deadline: it finishes one its caller
    stopped waiting for (see :meth:`SemanticIndex._by`)."""
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="briefd-query-model")
