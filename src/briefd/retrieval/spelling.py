"""Typo tolerance for lexical search: a query word the index has never seen is matched to the
closest indexed word (optimal string alignment: Damerau-Levenshtein where no substring is edited
twice, ten times faster to compute; at most 1 edit for short words, 2 for longer ones). Ties go
first to a word that holds the typed one with letters added — a left-out letter is the most
common slip ("dedline": deadline, not decline), and in an agglutinative language the typed word
is often a stem of it ("meslegi": meslegini, not destegi) — then to the more frequent word.
The original word stays in the query, so nothing is lost when the "typo" was a real but
unindexed word.

Before any alignment, the indexed words of the right lengths are narrowed by which characters
they contain (:func:`signatures`): one edit adds or removes at most two characters from a word's
set of characters, so a word whose set differs from the query word's in more than twice the
allowed edits cannot be within them. The bound is exact — the same words come out — and leaves
the alignment a tenth of the words (scifact's unknown words in a 60K-chunk index: 0.18 ms a
word instead of 1.6 ms).
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from rapidfuzz import process
from rapidfuzz.distance import OSA

from briefd.store.db import content_version
from briefd.store.surfaces import umlaut_readings
from briefd.store.vocabulary import normal_word

MIN_LENGTH = 4
Signatures = npt.NDArray[np.uint64]


def signatures(words: Sequence[str]) -> Signatures:
    """Each word's set of characters as 64 bits: a-z one bit each, any other character one of
    the 37 remaining bits (by code point; two characters may share a bit, which only lowers the
    count of differing bits, so the bound in the module doc stays a bound)."""
    if not words:
        return np.zeros(0, dtype=np.uint64)
    width = max(len(w) for w in words)
    points = np.array(words, dtype=f"U{width}").view(np.uint32).reshape(len(words), width)
    bits = np.where((points >= 97) & (points <= 122), points - 97, 26 + points % 37)
    flags = np.left_shift(np.uint64(1), bits.astype(np.uint64))
    flags[points == 0] = 0  # the padding of shorter words
    out: Signatures = np.bitwise_or.reduce(flags, axis=1)
    return out


def is_subsequence(word: str, other: str) -> bool:
    """Every letter of ``word`` is in ``other`` in order: ``other`` is ``word`` with letters
    added ("dedline" in "deadline"; "meslegi" in "meslegini")."""
    letters = iter(other)
    return all(letter in letters for letter in word)


def max_edits(word: str) -> int:
    return 1 if len(word) <= 5 else 2


def _stem_known(conn: sqlite3.Connection, term: str) -> bool:
    """The FTS index knows the word in another form ("shoppers" → shopper): not a typo."""
    match = '"' + term.replace('"', '""') + '"'
    row = conn.execute("SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT 1", (match,))
    return row.fetchone() is not None


@dataclass(frozen=True, slots=True)
class _Vocabulary:
    """One loaded vocabulary: its index's content version, its words by length and their chunk
    counts, and the candidate pools made from it (filled on need)."""

    version: tuple[int, int]
    by_length: dict[int, list[str]]
    frequency: dict[str, int]
    pools: dict[tuple[int, int], tuple[list[str], Signatures]] = field(default_factory=dict)

    def pool(self, shortest: int, longest: int) -> tuple[list[str], Signatures]:
        """The indexed words of these lengths and their signatures (kept: queries mostly repeat
        a few windows)."""
        key = (shortest, longest)
        if key not in self.pools:
            lengths = range(shortest, longest + 1)
            pool = [w for n in lengths for w in self.by_length.get(n, ())]
            self.pools[key] = (pool, signatures(pool))
        return self.pools[key]


class Speller:
    """The vocabulary of one index, loaded on first need and kept until the database changes.
    It is one :class:`_Vocabulary` swapped whole: a search reads the one it started with while
    an index run beside it (a sync, the server's warm-up) invalidates or loads another — its
    words and their counts apart, a word of the old pool was looked up in the new counts
    (KeyError: 'harm', and the server's warm-up task ended the server)."""

    def __init__(self) -> None:
        self._vocabulary: _Vocabulary | None = None

    def _load(self, conn: sqlite3.Connection) -> _Vocabulary:
        version = content_version(conn)
        held = self._vocabulary
        if held is not None and held.version == version and held.frequency:
            return held
        by_length: dict[int, list[str]] = defaultdict(list)
        frequency: dict[str, int] = {}
        for term, chunks in conn.execute("SELECT term, chunks FROM vocabulary"):
            frequency[term] = chunks
            by_length[len(term)].append(term)
        self._vocabulary = _Vocabulary(version, dict(by_length), frequency)
        return self._vocabulary

    def invalidate(self) -> None:
        self._vocabulary = None

    def follow(self, conn: sqlite3.Connection) -> None:
        """Load the vocabulary again now if it was loaded and the index has changed since."""
        if self._vocabulary is not None:
            self._load(conn)

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
        found = _umlauts_typed(conn, unknown)
        vocabulary = self._load(conn)
        for term in unknown:
            best = None if term in found else _closest(vocabulary, normal_word(term))
            if best is not None:
                found[term] = best
        return found


def _umlauts_typed(conn: sqlite3.Connection, unknown: Sequence[str]) -> dict[str, str]:
    """term → the reading of it with ä, ö, ü for ae, oe, ue (as the index folds them) that the
    index holds, for German typed without umlauts ("zurueckschicken": zuruckschicken, the
    index's zurückschicken); the closest word by edits could be another."""
    readings = {t: umlaut_readings(normal_word(t)) for t in unknown}
    asked = sorted({r for found in readings.values() for r in found})
    if not asked:
        return {}
    marks = ", ".join("?" * len(asked))
    held = {
        r[0] for r in conn.execute(f"SELECT term FROM vocabulary WHERE term IN ({marks})", asked)
    }
    return {
        t: next(r for r in found if r in held) for t, found in readings.items() if held & set(found)
    }


def _closest(vocabulary: _Vocabulary, word: str) -> str | None:
    edits = max_edits(word)
    pool, marks = vocabulary.pool(len(word) - edits, len(word) + edits)
    if not pool:
        return None
    near = np.flatnonzero(np.bitwise_count(marks ^ signatures([word])[0]) <= 2 * edits)
    pool = [pool[i] for i in near]  # in pool order: ties among 20+ matches fall alike
    matches = process.extract(word, pool, scorer=OSA.distance, score_cutoff=edits, limit=20)
    if not matches:
        return None
    counts = vocabulary.frequency
    best = min(
        matches,
        key=lambda m: (m[1], not is_subsequence(word, m[0]), -counts[m[0]], m[0]),
    )
    return str(best[0])
