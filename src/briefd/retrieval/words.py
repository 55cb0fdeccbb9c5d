"""Query words as FTS5 tokens (R1): a word's tokens, with the stemmer and without, through a
scratch FTS5 table with chunks_fts's options, and a query's term groups with them."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from briefd.retrieval.lexical import PREFIX, is_prefix
from briefd.store import postings

TOKEN_CACHE = 50_000


class Tokenizer:
    """Query words → FTS5 tokens, through a scratch FTS5 table with chunks_fts's options."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._scratch: sqlite3.Connection | None = None
        # the word's tokens with the stemmer and without (read only for prefix forms)
        self._cache: tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]] = ({}, {})

    def _lookup(self, word: str, stemmed: bool = True) -> tuple[str, ...]:
        with self._lock:
            cache = self._cache[0 if stemmed else 1]
            found = cache.get(word)
            if found is None:
                if self._scratch is None:
                    self._scratch = postings.scratch_tokenizer()
                read = postings.tokens_of if stemmed else postings.unstemmed_tokens_of
                found = read(self._scratch, word)
                if len(cache) >= TOKEN_CACHE:
                    cache.clear()
                cache[word] = found
            return found

    def tokens(self, word: str) -> tuple[str, ...]:
        return self._lookup(word)

    def close(self) -> None:
        """Close the scratch table's in-memory database (opened again if used after): left to
        the garbage collector, Python 3.13 warns of it (ResourceWarning: unclosed database)."""
        with self._lock:
            if self._scratch is not None:
                self._scratch.close()
                self._scratch = None

    def stemmed(self, word: str) -> bool:
        """Porter recognised a suffix of the word ("refunds" → "refund")."""
        return self._lookup(word) != self._lookup(word, stemmed=False)

    def unstemmed(self, word: str) -> tuple[str, ...]:
        return self._lookup(word, stemmed=False)

    def stemmed_share(self, conn: sqlite3.Connection) -> float:
        """:func:`postings.stemmed_share` of the index, through this tokenizer's scratch."""
        with self._lock:
            if self._scratch is None:
                self._scratch = postings.scratch_tokenizer()
            return postings.stemmed_share(conn, self._scratch)

    def groups(
        self, words: Sequence[Sequence[str]], prefixes: bool = False
    ) -> tuple[tuple[Word, ...], ...]:
        """Term groups (a word, its spelling correction, their prefix forms) with their tokens;
        ``prefixes`` False leaves the prefix forms out (:attr:`PostingsIndex.conflate`).

        A prefix form is kept only for a word the stemmer leaves as it is: a word it stems is
        conflated with its other forms already. Its tokens are its letters unstemmed (Porter
        would cut "inste" for "instead" to "inst*")."""
        return tuple(self._group(group, prefixes) for group in words)

    def _group(self, group: Sequence[str], prefixes: bool) -> tuple[Word, ...]:
        exact = [w for w in group if not is_prefix(w)]
        words = [Word(w, self.tokens(w)) for w in exact]
        for form in [w for w in group if is_prefix(w)] if prefixes else []:
            stem = form[: -len(PREFIX)]
            begun = [len(f) for f in exact if f.startswith(stem) and not self.stemmed(f)]
            if begun:
                words.append(Word(form, self.unstemmed(stem), True, len(stem) / max(begun)))
        return tuple(words)


@dataclass(frozen=True, slots=True)
class Word:
    """A query word and its FTS5 tokens: one token is scored from the postings; several are
    a phrase to FTS5 ("snake_case" → "snake case"), which needs positions, so FTS5 scores
    that phrase alone; none (a lone "_") matches nothing. A ``prefix`` word of one token
    matches every token that begins with it, as one FTS5 prefix phrase, its score times
    ``weight``: the share of the typed word's letters the prefix keeps ("bağla*" for
    "bağlantısı": 5/10). A prefix match is weaker evidence than the word itself (it also
    matches other words that begin alike), and the less of the word it keeps, the weaker:
    no constant, the query's own word decides."""

    text: str
    tokens: tuple[str, ...]
    prefix: bool = False
    weight: float = 1.0
