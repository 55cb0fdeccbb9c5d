"""The index's word list with chunk frequencies, kept in step with the chunks.

It lets the query side tell a misspelt word ("merchnat") from a rare real one, and propose the
indexed word it most likely meant. Words are folded the way the FTS index folds them (case,
diacritics, Turkish dotless ı), but not stemmed: typos are judged on what people type.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from collections import Counter
from collections.abc import Iterable

from briefd.text import fold

_WORD = re.compile(r"\w+")


def normal_word(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", fold(word).lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def words(text: str) -> set[str]:
    """The words of ``text`` as the FTS index splits it (a Han or kana character is one)."""
    return {normal_word(w) for w in _WORD.findall(fold(text)) if not w.isdigit()}


def chunk_words(rows: Iterable[tuple[str, str, str, str]]) -> Counter[str]:
    """In how many of these chunks (title, aliases, heading path, content) each word occurs."""
    counts: Counter[str] = Counter()
    for row in rows:
        counts.update(words(" ".join(row)))
    return counts


def adjust(conn: sqlite3.Connection, counts: Counter[str], sign: int) -> None:
    if not counts:
        return
    conn.executemany(
        "INSERT INTO vocabulary (term, chunks) VALUES (?, ?) "
        "ON CONFLICT(term) DO UPDATE SET chunks = chunks + excluded.chunks",
        [(term, sign * n) for term, n in counts.items()],
    )
    if sign < 0:
        conn.execute("DELETE FROM vocabulary WHERE chunks <= 0")


def chunk_rows(conn: sqlite3.Connection, doc_id: int) -> list[tuple[str, str, str, str]]:
    return [
        (r[0], r[1], r[2], r[3])
        for r in conn.execute(
            "SELECT title, aliases, heading_path, content FROM chunks WHERE doc_id = ?", (doc_id,)
        )
    ]


def rebuild(conn: sqlite3.Connection) -> None:
    """Recount from every chunk (after the migration that adds the table)."""
    conn.execute("DELETE FROM vocabulary")
    rows = conn.execute("SELECT title, aliases, heading_path, content FROM chunks")
    adjust(conn, chunk_words((r[0], r[1], r[2], r[3]) for r in rows), +1)
