"""What the usage report counts of the query log, kept between reports (T6): the entries
that served each section and document, by surface and UTC day, and the requests and their
latencies per day, added up once and then only for the entries logged since. The dashboard asks for the report every minute; counting 100,000
entries again each time cost 1.2 CPU-s (6-8 s on a loaded machine).

A report of a window sums the days after its first one from the tally and counts its first
day (from the window's start) in SQL; so it equals :func:`briefd.store.reports.
served_by_surface` over the whole window. The tally is checked against the log before use
(the count of entries up to the last one added, and that entry's time): pruned, replaced or
rebuilt, it is counted again from the start."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import cast

from briefd.store import reports

COLUMNS = ("sections", "documents")
Served = list[tuple[str, str, int, str]]  # (chunk id or path, surface, entries, last time)
_Key = tuple[str, str, str | None]  # (UTC day, chunk id or path, surface)
_Days = dict[_Key, tuple[int, str]]  # -> (entries, last time)
Counts = list[tuple[str, str, str, int, int]]  # (UTC day, kind, surface, requests, empty)


@dataclass(frozen=True)
class Counted:
    sections: Served
    documents: Served
    counts: Counts
    latencies: list[tuple[str, float]]  # (UTC day, latency ms) of each entry


class ServedTally:
    """The entries that served each value, by day and surface, up to one query log entry."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._upto = 0
        self._mark: tuple[int, str | None] = (0, None)
        self._days: dict[str, _Days] = {c: {} for c in COLUMNS}
        self._requests: dict[tuple[str, str, str], list[int]] = {}  # -> [requests, empty]
        self._latencies: dict[str, list[float]] = {}  # UTC day -> each entry's ms

    def _reset(self) -> None:
        self._upto, self._mark = 0, (0, None)
        self._days = {c: {} for c in COLUMNS}
        self._requests, self._latencies = {}, {}

    def counted(self, conn: sqlite3.Connection, since: str) -> Counted:
        """What the usage report reads of the log since ``since``, as the SQL of
        :mod:`briefd.store.reports` says it (``served_by_surface`` of sections and documents,
        ``daily_counts``, ``daily_latencies``), on ``conn`` in one read transaction, the tally
        brought up to it first."""
        until = _next_day(since[:10])
        counts = reports.daily_counts(conn, since, until=until)
        latencies = reports.daily_latencies(conn, since, until=until)
        with self._lock:
            self._follow(conn)
            sections, documents = (
                _merged(self._days[c], until, reports.served_between(conn, since, until, c))
                for c in COLUMNS
            )
            counts += [
                (d, k, s, n, e) for (d, k, s), (n, e) in self._requests.items() if d >= until
            ]
            latencies += [
                (d, ms) for d, values in self._latencies.items() if d >= until for ms in values
            ]
        return Counted(sections, documents, counts, latencies)

    def _follow(self, conn: sqlite3.Connection) -> None:
        if self._upto and reports.log_mark(conn, self._upto) != self._mark:
            self._reset()  # pruned, replaced or rebuilt: counted from the start
        if not self._upto:  # the start in SQL, one pass a column
            self._upto = reports.last_entry(conn)
            for column in COLUMNS:
                days = self._days[column]
                for day, value, surface, count, at in reports.served_by_day(
                    conn, self._upto, column
                ):
                    days[(day, value, surface)] = (count, at)
            for day, kind, surface, count, empty, ms in reports.requests_upto(conn, self._upto):
                if count:
                    self._requests[(day, kind, surface)] = [count, empty]
                else:
                    self._latencies.setdefault(day, []).append(ms)
        for rowid, at, surface, sections, documents, kind, results, ms in reports.logged_after(
            conn, self._upto
        ):
            for column, listed in zip(COLUMNS, (sections, documents), strict=True):
                _add(self._days[column], at, surface, _values(listed))
            counted = self._requests.setdefault((at[:10], kind, cast(str, surface)), [0, 0])
            counted[0] += 1
            counted[1] += int(results == 0)
            self._latencies.setdefault(at[:10], []).append(ms)
            self._upto = rowid
        if self._upto:
            self._mark = reports.log_mark(conn, self._upto)


def _values(listed: str) -> Iterable[str]:
    try:
        found = json.loads(listed)
    except ValueError:  # not written by briefd; SQL's json_each would refuse it too
        return ()
    return found if isinstance(found, list) else ()


def _add(days: _Days, at: str, surface: str | None, values: Iterable[str]) -> None:
    for value in values:
        key = (at[:10], value, surface)
        count, last = days.get(key, (0, at))
        days[key] = (count + 1, max(last, at))


def _merged(days: _Days, until: str, first: Served) -> Served:
    """The days from ``until`` on, with the first day's counts added."""
    totals: dict[tuple[str, str | None], tuple[int, str]] = {}
    for (day, value, surface), (count, last) in days.items():
        if day >= until:
            n, at = totals.get((value, surface), (0, last))
            totals[(value, surface)] = (n + count, max(at, last))
    for value, surface, count, last in first:
        n, at = totals.get((value, surface), (0, last))
        totals[(value, surface)] = (n + count, max(at, last))
    # a surface is NULL in entries logged without one, as the SQL gives it
    return [(v, cast(str, s), n, at) for (v, s), (n, at) in sorted(totals.items(), key=_order)]


def _order(item: tuple[tuple[str, str | None], tuple[int, str]]) -> tuple[str, str]:
    (value, surface), _ = item
    return (str(value), surface or "")


_KEPT: dict[Path, ServedTally] = {}  # index file -> its tally in this process
_KEPT_LOCK = threading.Lock()


def tally_for(db: Path) -> ServedTally:
    """This process's tally of the index at ``db``."""
    with _KEPT_LOCK:
        return _KEPT.setdefault(db.resolve(), ServedTally())


def _next_day(day: str) -> str:
    """The UTC day after ``day`` (ISO), as the log's timestamps compare: after the last day a
    date can name (a ``--since`` at the edge of time), a string that sorts after all of it."""
    start = date.fromisoformat(day)
    return (start + timedelta(days=1)).isoformat() if start < date.max else f"{day}~"
