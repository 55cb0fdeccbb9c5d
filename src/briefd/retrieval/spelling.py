"""Typo tolerance for lexical search: a query word the index has never seen is matched to the
closest indexed word (optimal string alignment: Damerau-Levenshtein where no substring is edited
twice, ten times faster to compute; at most 1 edit for short words, 2 for longer ones; ties go
to the more frequent word). The original word stays in the query, so nothing is lost
when the "typo" was a real but unindexed word.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict

from rapidfuzz import process
from rapidfuzz.distance import OSA

from briefd.store.db import content_version
from briefd.store.vocabulary import normal_word

MIN_LENGTH = 4


def max_edits(word: str) -> int:
    return 1 if len(word) <= 5 else 2


def _stem_known(conn: sqlite3.Connection, term: str) -> bool:
    """The FTS index knows the word in another form ("shoppers" → shopper): not a typo."""
    match = '"' + term.replace('"', '""') + '"'
    row = conn.execute("SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT 1", (match,))
    return row.fetchone() is not None


class Speller:
    """The vocabulary of one index, loaded on first need and kept until the database changes."""

    def __init__(self) -> None:
        self._version: tuple[int, int] | None = None
        self._by_length: dict[int, list[str]] = {}
        self._frequency: dict[str, int] = {}
        self._pools: dict[tuple[int, int], list[str]] = {}

    def _load(self, conn: sqlite3.Connection) -> None:
        version = content_version(conn)
        if self._version == version and self._frequency:
            return
        by_length: dict[int, list[str]] = defaultdict(list)
        frequency: dict[str, int] = {}
        for term, chunks in conn.execute("SELECT term, chunks FROM vocabulary"):
            frequency[term] = chunks
            by_length[len(term)].append(term)
        self._by_length, self._frequency, self._version = dict(by_length), frequency, version
        self._pools = {}

    def invalidate(self) -> None:
        self._frequency = {}

    def corrections(self, conn: sqlite3.Connection, terms: tuple[str, ...]) -> dict[str, str]:
        """term → indexed word, for the terms the index does not contain."""
        unknown = [t for t in terms if len(t) >= MIN_LENGTH and not t.isdigit()]
        if not unknown:
            return {}
        marks = ", ".join("?" * len(unknown))
        known = {
            r[0]
            for r in conn.execute(
                f"SELECT term FROM vocabulary WHERE term IN ({marks})",
                [normal_word(t) for t in unknown],
            )
        }
        unknown = [t for t in unknown if normal_word(t) not in known and not _stem_known(conn, t)]
        if not unknown:
            return {}
        self._load(conn)
        found = {}
        for term in unknown:
            best = self._closest(normal_word(term))
            if best is not None:
                found[term] = best
        return found

    def _pool(self, shortest: int, longest: int) -> list[str]:
        """The indexed words of these lengths (kept: queries mostly repeat a few windows)."""
        key = (shortest, longest)
        if key not in self._pools:
            lengths = range(shortest, longest + 1)
            self._pools[key] = [w for n in lengths for w in self._by_length.get(n, ())]
        return self._pools[key]

    def _closest(self, word: str) -> str | None:
        edits = max_edits(word)
        pool = self._pool(len(word) - edits, len(word) + edits)
        if not pool:
            return None
        matches = process.extract(word, pool, scorer=OSA.distance, score_cutoff=edits, limit=20)
        if not matches:
            return None
        best = min(matches, key=lambda m: (m[1], -self._frequency[m[0]], m[0]))
        return str(best[0])
