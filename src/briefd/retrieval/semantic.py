"""Semantic retrieval (R2): the query embedding and the loaded vector index of one store.

The vector matrix is loaded once and kept until another process commits to the database
(``PRAGMA data_version``) or this process re-indexes; query embeddings are memoised, so the
same query costs one model call.
"""

from __future__ import annotations

import sqlite3
from collections import OrderedDict

import numpy as np
import numpy.typing as npt

from briefd.embeddings.base import Embedder
from briefd.retrieval import calibration
from briefd.retrieval.gate import Calibration
from briefd.store.db import data_version
from briefd.vectors import store as vector_store
from briefd.vectors.index import VectorIndex

QUERY_CACHE = 256


class SemanticIndex:
    def __init__(self, embedder: Embedder, blas_threads: int = 1, ann_threshold: int = 0) -> None:
        self.embedder = embedder
        self.blas_threads = blas_threads
        self.ann_threshold = ann_threshold
        self._index: VectorIndex | None = None
        self.calibration: Calibration | None = None
        self._version: tuple[int, int] | None = None
        self._queries: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._primed: dict[str, npt.NDArray[np.float32]] = {}

    def invalidate(self) -> None:
        self._index = None

    def index(self, conn: sqlite3.Connection) -> VectorIndex:
        version = data_version(conn)
        if self._index is None or version != self._version:
            rowids, scopes, matrix = vector_store.load(conn, self.embedder.model_id)
            self._index = VectorIndex.build(
                self.embedder.model_id,
                rowids,
                scopes,
                matrix,
                self.blas_threads,
                self.ann_threshold,
            )
            self.calibration = calibration.load(conn, self.embedder.model_id)
            self._version = version
        return self._index

    def prime(self, texts: list[str], batch_size: int = 32) -> None:
        """Embed many queries at once (evaluation, tuning); kept for this object's lifetime."""
        todo = [t for t in dict.fromkeys(texts) if t not in self._primed]
        for start in range(0, len(todo), batch_size):
            part = todo[start : start + batch_size]
            for text, vector in zip(part, self.embedder.embed_batch(part, "query"), strict=True):
                self._primed[text] = vector

    def query_vector(self, text: str) -> npt.NDArray[np.float32]:
        primed = self._primed.get(text)
        if primed is not None:
            return primed
        cached = self._queries.get(text)
        if cached is None:
            cached = self.embedder.embed_batch([text], "query")[0]
            self._queries[text] = cached
            if len(self._queries) > QUERY_CACHE:
                self._queries.popitem(last=False)
        else:
            self._queries.move_to_end(text)
        return cached
