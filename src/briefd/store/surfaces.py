"""How the index writes its words with diacritics, kept in step with the chunks like the word
list (:mod:`briefd.store.vocabulary`), and a query's words written so for the embedding model.

A question typed without diacritics (Turkish on a phone or an English keyboard: "sifre
sifirlama baglantisi" for "şifre sıfırlama bağlantısı") finds the same sections by BM25, as
the FTS index folds them, but the embedding model reads "sifre" as another word than "şifre":
the vector side of such a question fell (Turkish QA set, nDCG@10 0.715 typed with diacritics,
0.642 without) and pulled hybrid search below BM25 alone. The text the model reads of a query
has each word the index mostly writes with diacritics written that way (:func:`restored`);
BM25 reads the query as typed.
"""

from __future__ import annotations

import itertools
import re
import sqlite3
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence

from briefd.store.vocabulary import normal_word

_WORD = re.compile(r"\w+")
MIN_LETTERS = 3


def written_form(word: str) -> tuple[str, str] | None:
    """``word`` as (folded term, lower-cased spelling) when the spelling has diacritics the
    fold takes off (şifre: sifre), else None: a plain word, one whose fold is no plain word
    (Han, Cyrillic), or one with capitals after its first letter (an acronym, a name)."""
    if word.isascii() or any(c.isupper() for c in word[1:]):
        return None
    spelling = word.replace("İ", "i").lower()  # Python lowers İ to i + a combining dot
    term = normal_word(spelling)
    if spelling.isascii() or not term.isascii() or not term.isalnum():
        return None
    return term, spelling


def chunk_forms(rows: Iterable[Sequence[str]]) -> Counter[tuple[str, str]]:
    """In how many of these chunks (title, aliases, heading path, content) each spelling with
    diacritics occurs, keyed by (folded term, spelling)."""
    counts: Counter[tuple[str, str]] = Counter()
    for row in rows:
        text = unicodedata.normalize("NFC", " ".join(row))
        counts.update({f for f in map(written_form, set(_WORD.findall(text))) if f is not None})
    return counts


def adjust(conn: sqlite3.Connection, counts: Counter[tuple[str, str]], sign: int) -> None:
    if not counts:
        return
    conn.executemany(
        "INSERT INTO surfaces (term, form, chunks) VALUES (?, ?, ?) "
        "ON CONFLICT(term, form) DO UPDATE SET chunks = chunks + excluded.chunks",
        [(term, form, sign * n) for (term, form), n in counts.items()],
    )
    if sign < 0:
        conn.execute("DELETE FROM surfaces WHERE chunks <= 0")


def rebuild(conn: sqlite3.Connection) -> None:
    """Recount from every chunk (after the migration that adds the table)."""
    conn.execute("DELETE FROM surfaces")
    rows = conn.execute("SELECT title, aliases, heading_path, content FROM chunks")
    adjust(conn, chunk_forms((r[0], r[1], r[2], r[3]) for r in rows), +1)


def _restorable(word: str) -> bool:
    """A plain word of three letters or more, not an acronym: a shorter one is as likely a
    word of another language ("is", "in": iş, ın in a Turkish index) as one typed without
    its diacritics."""
    return (
        len(word) >= MIN_LETTERS
        and word.isascii()
        and not word.isdigit()
        and not any(c.isupper() for c in word[1:])
    )


def restored(conn: sqlite3.Connection, text: str) -> str:
    """``text`` with each word typed without diacritics written as the index mostly writes it:
    in more than half of the chunks holding the word, one spelling with diacritics ("sifre":
    şifre). A word the index also writes plain as often (resume, résumé), or never holds, stays
    as typed. So does German typed with ae, oe, ue for ä, ö, ü ("Rueckerstattung"), when the
    index holds no such word and writes one of its readings with umlauts that way
    (:func:`umlaut_readings`)."""
    typed = {normal_word(w) for w in _WORD.findall(text) if _restorable(w)}
    if not typed:
        return text
    readings = {t: umlaut_readings(t) for t in typed}
    terms = sorted(typed | {r for found in readings.values() for r in found})
    best: dict[str, tuple[str, int]] = {}
    for term, form, chunks in conn.execute(
        f"SELECT term, form, chunks FROM surfaces WHERE term IN ({_marks(terms)}) "
        "ORDER BY chunks DESC, form",
        terms,
    ):
        best.setdefault(term, (form, chunks))
    if not best:
        return text
    asked = sorted(set(best) | {t for t in typed if readings[t]})
    holding = dict(
        conn.execute(
            f"SELECT term, chunks FROM vocabulary WHERE term IN ({_marks(asked)})", asked
        ).fetchall()
    )
    mostly = {t: form for t, (form, n) in best.items() if 2 * n > holding.get(t, 0)}
    chosen = {t: mostly[t] for t in typed if t in mostly}
    for term in typed - set(chosen):
        umlauts = [mostly[r] for r in readings[term] if r in mostly and _UMLAUT.search(mostly[r])]
        if umlauts and term not in holding:
            chosen[term] = umlauts[0]
    if not chosen:
        return text

    def written(match: re.Match[str]) -> str:
        word = match.group(0)
        form = chosen.get(normal_word(word)) if _restorable(word) else None
        if form is None:
            return word
        return form[:1].upper() + form[1:] if word[:1].isupper() else form

    return _WORD.sub(written, text)


_UMLAUT = re.compile("[äöü]")
MAX_DIGRAPHS = 3  # readings of a word: 2^3 - 1 at most


def umlaut_readings(term: str) -> list[str]:
    """The readings of a word typed with ae, oe or ue for ä, ö, ü, as the index folds those
    (a, o, u): each such pair of its first ``MAX_DIGRAPHS`` read either way, the readings with
    the most pairs read as umlauts first ("rueckerstattung": ruckerstattung; "steuerrueck…":
    one reading is steuerruck…); none for a word without such a pair."""
    pairs = [m.start() for m in re.finditer("[aou]e", term)][:MAX_DIGRAPHS]
    return [
        "".join(c for i, c in enumerate(term) if i - 1 not in chosen)
        for size in range(len(pairs), 0, -1)
        for chosen in itertools.combinations(pairs, size)
    ]


def _marks(values: Sequence[str]) -> str:
    return ", ".join("?" * len(values))
