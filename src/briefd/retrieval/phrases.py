"""The FTS5 phrase scores of one index state, kept for the searches that follow (R1 at scale).

A query word FTS5 reads as a phrase ("node.js", "payments.events.v1", "snake_case") is scored
by a one-phrase FTS5 query (:func:`briefd.retrieval.bm25._phrase`): FTS5 walks the position
lists of every token of it, counts the phrase in the whole index for its IDF and reads each
matching row's length, 200 ms for "node.js" on a million chunks, however often it is asked.
Its scores change only with the index, so they are kept with the postings of that index state
(a new state starts empty), the most recently used first, up to :data:`KEPT` chunk scores.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
import numpy.typing as npt

KEPT = 1_000_000  # chunk scores kept in all (a position and a float each: ~12 MB)

Scores = tuple[npt.NDArray[np.signedinteger[Any]], npt.NDArray[np.float64]]


class PhraseScores:
    """Phrase → (chunk positions, scores), computed once per index state."""

    def __init__(self, kept: int = KEPT) -> None:
        self._kept = kept
        self._held: OrderedDict[Hashable, Scores] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable, compute: Callable[[], Scores]) -> Scores:
        """The scores of ``key``, from ``compute`` the first time (outside the lock: two
        searches asking at once may both compute the same numbers)."""
        with self._lock:
            found = self._held.get(key)
            if found is not None:
                self._held.move_to_end(key)
                return found
        found = compute()
        with self._lock:
            if key not in self._held and len(found[0]) <= self._kept:
                self._held[key] = found
                self._size += len(found[0])
                while self._size > self._kept:
                    _, dropped = self._held.popitem(last=False)
                    self._size -= len(dropped[0])
        return found

    def __len__(self) -> int:
        return len(self._held)
