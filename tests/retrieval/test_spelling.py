"""Typo tolerance (R1): the character-set prefilter never changes which indexed word a typo
gets, only how many words the alignment reads."""

from __future__ import annotations

import random
import threading
from pathlib import Path

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import OSA

from briefd.retrieval.spelling import (
    Speller,
    _closest,
    is_subsequence,
    max_edits,
    signatures,
)
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
    loaded = Speller()._load(conn)
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
        assert _closest(loaded, word) == want, word
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
    loaded = Speller()._load(store.conn)
    assert _closest(loaded, "dedline") == "deadline"  # not "decline": one edit too, 13× as common
    assert _closest(loaded, "meslegi") == "meslegini"  # the stem, not a word sharing its ending
    assert _closest(loaded, "refnud") == "refund"  # a transposition: nothing to prefer
    assert is_subsequence("dedline", "deadline") and not is_subsequence("dedline", "decline")
    store.close()


def test_german_typed_with_ae_oe_ue_is_corrected_to_the_word_with_umlauts(
    tmp_path: Path,
) -> None:
    """ "gruen" (grün) is one edit from the index's grun and one from green, 15x as common:
    the closest word by edits and frequency was green."""
    store = Store.open(tmp_path / "index.db", create=True)
    with store.write() as conn:
        conn.executemany(
            "INSERT INTO vocabulary (term, chunks) VALUES (?, ?)",
            [("grun", 2), ("green", 30), ("ruckgangig", 2), ("queue", 5)],
        )
    found = Speller().corrections(store.conn, ("gruen", "rueckgaengig", "queeu"))
    assert found == {
        "gruen": "grun",
        "rueckgaengig": "ruckgangig",
        "queeu": "queue",  # no reading with umlauts held: the closest word, as before
    }
    store.close()


def test_a_search_beside_an_index_run_reads_one_vocabulary(tmp_path: Path) -> None:
    """The server's warm-up search corrected a typo while an index run beside it invalidated
    the speller: the words came from the pool it had loaded, their counts from the emptied
    one, and KeyError: 'harm' ended the warm-up task and with it the server (clean-clone CI,
    test_a_delta_says_what_changed_over_mcp). A search now reads the vocabulary it started
    with."""
    rng = random.Random(11)
    vocabulary = _words(rng, 3000)
    store = Store.open(tmp_path / "index.db", create=True)
    with store.write() as conn:
        conn.executemany(
            "INSERT INTO vocabulary (term, chunks) VALUES (?, ?)",
            [(w, rng.randint(1, 50)) for w in vocabulary],
        )
    typos = tuple(_typo(w, rng) for w in rng.sample(vocabulary, 12))
    speller, done, failed = Speller(), threading.Event(), []

    def index_runs() -> None:
        while not done.is_set():
            speller.invalidate()

    beside = threading.Thread(target=index_runs)
    beside.start()
    try:
        with Store.open(tmp_path / "index.db").read() as reader:
            for _ in range(8):
                try:
                    speller.corrections(reader, typos)
                except KeyError as exc:
                    failed.append(exc)
    finally:
        done.set()
        beside.join()
        store.close()
    assert failed == []
