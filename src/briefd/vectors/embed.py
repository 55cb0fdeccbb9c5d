"""Embedding what is missing: sorted by length, in batches, each batch committed on its own.
The batches are embedded spread over the range of lengths (:func:`spread`), not shortest
first: a run's rate then holds from its first batches, and so does the time left that
``briefd index`` prints from it.

Vectors are keyed by the hash of the embedded text, so a batch written before a crash or an
interruption is never computed again, and no reader ever sees a half-written batch. The texts
waiting for their turn are held by :class:`PendingTexts`: past :data:`IN_MEMORY` characters in
an unlinked temporary file beside the index, so a first index of a large repository does not
hold every passage's text (twice) until it is embedded.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import IO

from briefd.embeddings.base import Embedder
from briefd.store.db import Store
from briefd.vectors import store as vector_store

Progress = Callable[[str, int, int], None]


def embed_missing(
    store: Store,
    embedder: Embedder,
    pending: Mapping[str, str],
    batch_size: int,
    progress: Progress,
) -> int:
    """Embed ``pending`` (hash → text) as passages; returns how many vectors were written."""
    if isinstance(pending, PendingTexts):
        order = pending.order()  # without reading the texts back
    else:
        order = sorted(pending, key=lambda h: (len(pending[h]), h))
    size = max(1, batch_size)
    batches = [order[start : start + size] for start in range(0, len(order), size)]
    done = 0
    for hashes in (batches[b] for b in spread(len(batches))):
        vectors = embedder.embed_batch([pending[h] for h in hashes], "passage")
        with store.write() as conn:
            vector_store.save(conn, embedder.model_id, hashes, vectors)
        done += len(hashes)
        progress("embed", done, len(order))
    return done


def spread(count: int) -> list[int]:
    """``range(count)`` in an order whose every prefix samples the whole range about evenly
    (the golden-ratio sequence: the k-th is where k × 0.618… mod 1 falls among them all).

    Batches are cut from the passages sorted by length (little padding in a batch), and a
    batch of long passages takes many times a short one's time: embedded shortest first, a
    first index of 21 files of the Node.js docs said ~79 s left at 240 of 1,310 chunks where
    405 s were left; of the example knowledge, ~48 s at 48 of 338 where 129 s were."""
    keys = [(k * GOLDEN) % 1.0 for k in range(count)]
    rank = {k: r for r, k in enumerate(sorted(range(count), key=keys.__getitem__))}
    return [rank[k] for k in range(count)]


GOLDEN = (5**0.5 - 1) / 2
IN_MEMORY = 8_000_000  # characters of passages kept in memory before any goes to the file


class PendingTexts(Mapping[str, str]):
    """Passages to embed, hash → text, in the order added; a hash added again is kept once.
    The first :data:`IN_MEMORY` characters stay in memory (a run of a few changed files never
    touches the disk), the rest are written to an unlinked temporary file in ``folder`` and
    read back one by one. Where no file can be made or written (a read-only folder, a full
    disk), they are kept in memory, as before."""

    def __init__(self, folder: Path, in_memory: int | None = None) -> None:
        self._folder = folder
        self._limit = IN_MEMORY if in_memory is None else in_memory
        self._lengths: dict[str, int] = {}  # hash → characters: the embedding order
        self._memory: dict[str, str] = {}
        self._on_disk: dict[str, tuple[int, int]] = {}  # hash → (offset, bytes)
        self._held = self._end = 0
        self._file: IO[bytes] | None = None
        self._no_disk = False

    def add(self, digest: str, text: str) -> None:
        if digest in self._lengths:
            return
        self._lengths[digest] = len(text)
        if self._no_disk or self._held + len(text) <= self._limit or not self._write(digest, text):
            self._memory[digest] = text
            self._held += len(text)

    def _write(self, digest: str, text: str) -> bool:
        data = text.encode("utf-8", "surrogatepass")
        try:
            if self._file is None:  # unbuffered: a full disk says so here, not on reading
                self._file = tempfile.TemporaryFile(dir=self._folder, buffering=0)  # noqa: SIM115
            written = os.pwrite(self._file.fileno(), data, self._end)
        except OSError:
            written = -1
        if written != len(data):
            self._no_disk = True
            return False
        self._on_disk[digest] = (self._end, len(data))
        self._end += len(data)
        return True

    def order(self) -> list[str]:
        """The hashes shortest text first (fewer padded tokens per batch), ties by hash."""
        return sorted(self._lengths, key=lambda h: (self._lengths[h], h))

    def __getitem__(self, digest: str) -> str:
        text = self._memory.get(digest)
        if text is not None:
            return text
        offset, size = self._on_disk[digest]
        assert self._file is not None
        return os.pread(self._file.fileno(), size, offset).decode("utf-8", "surrogatepass")

    def __iter__(self) -> Iterator[str]:
        return iter(self._lengths)

    def __len__(self) -> int:
        return len(self._lengths)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
