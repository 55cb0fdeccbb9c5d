"""The documents an index run parsed, held on disk between parsing and writing (O4).

An index run parses every changed file before its one write transaction (readers see the old
index or the new one, never half), and held each parsed :class:`~briefd.model.Document` (its
body, chunks, headings and links: about three times its text) until the end: at 55,000 files
the BM25-only build peaked at 5 GB. :class:`Spool` keeps the first :data:`IN_MEMORY` characters
of documents in memory, as before (a run of a few changed files never touches the disk), and
writes the rest in batches of about :data:`BATCH` characters to an unlinked temporary file
beside the index (never a tmpfs ``/tmp`` that takes memory itself): a killed run leaves
nothing behind, and reading it back costs a fraction of parsing.
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from briefd.model import Document

IN_MEMORY = 8_000_000  # characters of documents kept in memory before any is spooled
BATCH = 4_000_000  # characters of documents per batch written (and read back) at once


class Spool:
    """Parsed documents in the order added; iterate over them as often as needed."""

    def __init__(self, folder: Path, in_memory: int | None = None, batch: int | None = None):
        self.paths: list[str] = []
        self._folder = folder
        self._limit = IN_MEMORY if in_memory is None else in_memory
        self._batch = BATCH if batch is None else batch
        self._kept: list[Document] = []  # the first documents, never spooled
        self._pending: list[Document] = []  # the next batch to spool
        self._size = self._pending_size = 0
        self._file: IO[bytes] | None = None
        self._batches = 0
        self._no_disk = False  # no temporary file could be made: all are kept in memory

    def __len__(self) -> int:
        return len(self.paths)

    def __bool__(self) -> bool:
        return bool(self.paths)

    def append(self, doc: Document) -> None:
        self.paths.append(doc.path)
        size = len(doc.body) + sum(len(c.content) for c in doc.chunks)
        if self._file is None and not self._no_disk and self._size + size <= self._limit:
            self._kept.append(doc)
            self._size += size
            return
        self._pending.append(doc)
        self._pending_size += size
        if self._pending_size >= self._batch and not self._no_disk:
            self._flush()

    def __iter__(self) -> Iterator[Document]:
        yield from self._kept
        if self._file is not None:
            self._file.seek(0)
            for _ in range(self._batches):
                batch: list[Document] = pickle.load(self._file)  # our own file, this run
                yield from batch
        yield from self._pending

    def __enter__(self) -> Spool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _flush(self) -> None:
        """Write the pending batch; where no file can be made or written (a read-only
        folder, a full disk), keep this and every later document in memory, as before."""
        try:
            if self._file is None:
                self._file = tempfile.TemporaryFile(dir=self._folder)  # noqa: SIM115 (kept open)
            pickle.dump(self._pending, self._file, protocol=pickle.HIGHEST_PROTOCOL)
            self._file.flush()  # a full disk says so here, not when the batches are read
        except OSError:  # what was written of this batch is never read: batches count
            self._no_disk = True
            return
        self._batches += 1
        self._pending, self._pending_size = [], 0
