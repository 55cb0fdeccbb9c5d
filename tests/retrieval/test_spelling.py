"""Typo tolerance (R1): the character-set prefilter never changes which indexed word a typo
gets, only how many words the alignment reads."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import OSA

from briefd.retrieval.spelling import Speller, is_subsequence, max_edits, signatures
from briefd.store.db import Store

ALPHABET = "abcdefghijklmnopqrstuvwxyzçğışöü0_"


def _typo(word: str, rng: random.Random) -> str:
    """``word`` with one to three random edits (delete, insert, substitute, transpose)."""
    chars = list(word)
    for _ in range(rng.randint(1, 3)):
        op, at = rng.randrange(4), rng.randrange(len(chars))
        if op == 0 and len(chars) > 4:
            del chars[at]
        elif op == 1:
            chars.insert(at, rng.choice(ALPHABET))
        elif op == 2:
            chars[at] = rng.choice(ALPHABET)
        elif at + 1 < len(chars):
            chars[at], chars[at + 1] = chars[at + 1], chars[at]
    return "".join(chars)


def _words(rng: random.Random, count: int) -> list[str]:
    return sorted({"".join(rng.choices(ALPHABET, k=rng.randint(4, 14))) for _ in range(count)})


def test_an_edit_changes_at_most_two_characters_of_the_set() -> None:
    rng = random.Random(5)
    words = _words(rng, 400)
    typos = [_typo(w, rng) for w in words]
    flips = np.bitwise_count(signatures(words) ^ signatures(typos))
    for word, typo, flipped in zip(words, typos, flips, strict=True):
        assert int(flipped) <= 2 * OSA.distance(word, typo), (word, typo)
    assert signatures(["abc"])[0] == 0b111  # a, b, c: the first three bits
    assert signatures(["abc", "abcabcabc"]).tolist() == [0b111, 0b111]  # padding sets no bit


def test_corrections_are_those_of_aligning_every_word(tmp_path: Path) -> None:
    rng = random.Random(7)
    vocabulary = _words(rng, 3000)
    store = Store.open(tmp_path / "index.db", create=True)
    with store.write() as conn:
        conn.executemany(
            "INSERT INTO vocabulary (term, chunks) VALUES (?, ?)",
            [(w, rng.randint(1, 50)) for w in vocabulary],
        )
    conn = store.conn
    speller = Speller()
    speller._load(conn)
    frequency = dict(conn.execute("SELECT term, chunks FROM vocabulary"))
    corrected = 0
    for word in (_typo(w, rng) for w in rng.sample(vocabulary, 600)):
        edits = max_edits(word)
        pool = [w for w in vocabulary if abs(len(w) - len(word)) <= edits]
        found = process.extract(word, pool, scorer=OSA.distance, score_cutoff=edits, limit=None)
        ranked = sorted(
            found,
            key=lambda m: (m[1], not is_subsequence(word, m[0]), -frequency[m[0]], m[0]),
        )
        want = ranked[0][0] if ranked else None
        assert speller._closest(word) == want, word
        corrected += want is not None
    assert corrected > 300  # most typos are within reach: the comparison is not vacuous
    store.close()


def test_a_left_out_letter_beats_a_more_frequent_word_at_the_same_distance(
    tmp_path: Path,
) -> None:
    store = Store.open(tmp_path / "index.db", create=True)
    with store.write() as conn:
        conn.executemany(
            "INSERT INTO vocabulary (term, chunks) VALUES (?, ?)",
            [("decline", 40), ("deadline", 3), ("destegi", 30), ("meslegini", 2), ("refund", 9)],
        )
    speller = Speller()
    speller._load(store.conn)
    assert speller._closest("dedline") == "deadline"  # not "decline": one edit too, 13× as common
    assert speller._closest("meslegi") == "meslegini"  # the stem, not a word sharing its ending
    assert speller._closest("refnud") == "refund"  # a transposition: nothing to prefer
    assert is_subsequence("dedline", "deadline") and not is_subsequence("dedline", "decline")
    store.close()
