"""Section windows at query time (R2, ``embeddings.window_words``): the cosine of a query to a
candidate's closest window.

Windows are not in the scanned index: a query re-scores only its candidates, whose window
vectors are read from the index file. Reading costs ~9 µs a window (a B-tree lookup and an
overflow page per vector), ~4 ms for the ~450 windows of a hybrid query's candidates, so the
vectors read are kept in a bounded least-recently-used cache: a knowledge base of a few thousand
sections, where windows pay off most, fits whole after its first queries. The cache is emptied
when the index's content changes (the owner calls :meth:`WindowCache.clear`).
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from briefd.vectors import store as vector_store

Matrix = npt.NDArray[np.float32]
CACHE_ROWS = 16_384  # window vectors kept (e5-small: 1.5 KB each, ~25 MB at most)


class WindowCache:
    def __init__(self, model: str, words: int, capacity: int = CACHE_ROWS) -> None:
        self.model = model
        self.words = words
        self.capacity = capacity
        self._rows: OrderedDict[int, Matrix] = OrderedDict()  # chunk rowid → its windows
        self._held = 0  # window vectors held
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._held

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()
            self._held = 0

    def cosines(
        self, conn: sqlite3.Connection, rowids: Sequence[int], query: Matrix
    ) -> dict[int, float]:
        """Per chunk among ``rowids`` that has windows, the cosine of ``query`` to the closest."""
        if self.words <= 0 or not rowids:
            return {}
        windows = self._windows(conn, rowids)
        return {rowid: float(np.max(rows @ query)) for rowid, rows in windows.items() if len(rows)}

    def _windows(self, conn: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, Matrix]:
        """Each chunk's window vectors (none: an empty matrix), from the cache or the file."""
        found: dict[int, Matrix] = {}
        with self._lock:
            for rowid in dict.fromkeys(int(r) for r in rowids):
                rows = self._rows.get(rowid)
                if rows is not None:
                    self._rows.move_to_end(rowid)
                    found[rowid] = rows
        missing = [int(r) for r in rowids if int(r) not in found]
        if not missing:
            return found
        owners, matrix = vector_store.window_vectors(conn, self.model, self.words, missing)
        order = np.argsort(owners, kind="stable")
        owners, matrix = owners[order], matrix[order]
        starts = np.searchsorted(owners, missing, side="left")
        ends = np.searchsorted(owners, missing, side="right")
        # copies: a view would keep the whole read alive for as long as one chunk stays cached
        fresh = {r: matrix[a:b].copy() for r, a, b in zip(missing, starts, ends, strict=True)}
        found.update(fresh)
        with self._lock:
            for rowid, rows in fresh.items():
                if rowid not in self._rows:
                    self._rows[rowid] = rows
                    self._held += len(rows)
            while self._held > self.capacity and self._rows:
                _, dropped = self._rows.popitem(last=False)
                self._held -= len(dropped)
        return found
