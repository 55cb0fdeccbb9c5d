"""Writes the index could not take when they were made (another process's long write, a full
disk), kept in memory for a later flush: bundle rows (a cache), usage reports and proposal
records (what a client was told is stored, ``said``). Those are never dropped for cache rows
while others wait; on a full disk they go first, each in its own transaction, so a large bundle
row never keeps a small proposal record out; what is still here when the process stops is
named (:meth:`Deferred.unsaved`)."""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

from briefd.errors import StoreError

MAX_DEFERRED = 2_000  # writes kept in memory while the index cannot take them
Write = Callable[[sqlite3.Connection], None]
Transaction = Callable[[], AbstractContextManager[sqlite3.Connection]]


@dataclass(frozen=True, slots=True)
class Held:
    """One write waiting: ``payload`` answers :meth:`Deferred.payload` meanwhile; ``said``
    names it when it is lost (None: a cache row, which the next request makes again)."""

    payload: object
    write: Write
    said: str | None


class Deferred:
    """The writes waiting, oldest first (at most :data:`MAX_DEFERRED`: the oldest go first,
    cache rows before those a client was told are stored)."""

    def __init__(self) -> None:
        self._held: OrderedDict[str, Held] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, key: str, write: Write, payload: object, said: str | None) -> None:
        with self._lock:
            self._held[key] = Held(payload, write, said)
            while len(self._held) > MAX_DEFERRED:
                cache = next((k for k, h in self._held.items() if h.said is None), None)
                if cache is None:
                    self._held.popitem(last=False)
                else:
                    del self._held[cache]

    def payload(self, key: str) -> object | None:
        with self._lock:
            held = self._held.get(key)
        return held.payload if held is not None else None

    def payloads(self, prefix: str) -> list[object]:
        """The payloads of the writes waiting under keys that start with ``prefix``, oldest
        first."""
        with self._lock:
            return [h.payload for k, h in self._held.items() if k.startswith(prefix)]

    def unsaved(self) -> list[str]:
        """What a client was told is stored and is still waiting, as :class:`Held` names it."""
        with self._lock:
            return [h.said for h in self._held.values() if h.said is not None]

    def flush(self, transaction: Transaction) -> int:
        """Write what waits, in one transaction; how many. When the index refuses it for a
        full disk, one transaction per write, those a client was told are stored first: as
        many as fit are saved. A :class:`StoreError` (raised when none is) leaves the rest
        waiting."""
        with self._lock:
            pending = list(self._held.items())
        if not pending:
            return 0
        try:
            with transaction() as conn:
                for _, held in pending:
                    held.write(conn)
        except StoreError as exc:
            if not _disk_full(exc):
                raise
            pending.sort(key=lambda item: item[1].said is None)  # stable: oldest first in each
            return self._one_by_one(pending, transaction)
        self._forget(pending)
        return len(pending)

    def _one_by_one(self, pending: list[tuple[str, Held]], transaction: Transaction) -> int:
        failed: StoreError | None = None
        written = 0
        for item in pending:
            if failed is not None and item[1].said is None:
                break  # cache rows: the next request makes them again
            try:
                with transaction() as conn:
                    item[1].write(conn)
            except StoreError as exc:
                failed = failed or exc
                continue
            self._forget([item])
            written += 1
        if failed is not None and not written:
            raise failed
        return written

    def _forget(self, written: list[tuple[str, Held]]) -> None:
        with self._lock:
            for key, held in written:
                if self._held.get(key) is held:
                    del self._held[key]


def _disk_full(exc: StoreError) -> bool:
    return "disk is full" in str(exc) or "disk I/O" in str(exc)
