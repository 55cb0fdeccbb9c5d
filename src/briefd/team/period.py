"""The time windows of the team's reports: ``--since 30d`` and its kin."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from briefd.errors import QueryError

_SPAN = re.compile(r"^\s*(\d{1,9})\s*([hdw])\s*$")
_UNITS = {"h": "hours", "d": "days", "w": "weeks"}
# a time whose offset's "+" arrived as a space: a URL's query string decodes "+" as one
# (``/api/gaps?since=2026-01-31T09:00+01:00``); nothing else reads as a time, a space, hh:mm
_PLUS_AS_SPACE = re.compile(
    r"^(\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?) (\d\d(?::?\d\d)?)$"
)


def since_cutoff(since: str, now: datetime | None = None) -> datetime:
    """The start of the window ``since`` names: a span back from now (``12h``, ``30d``,
    ``2w``) or a date (``2026-01-31``), in UTC."""
    now = now or datetime.now(UTC)
    span = _SPAN.match(since)
    if span:
        try:
            return now - timedelta(**{_UNITS[span[2]]: int(span[1])})
        except OverflowError:  # further back than datetime reaches: everything
            return datetime.min.replace(tzinfo=UTC)
    try:
        day = datetime.fromisoformat(_PLUS_AS_SPACE.sub(r"\1+\2", since.strip()))
    except ValueError:
        raise QueryError(
            f"since must be a span such as 30d, 12h or 2w, or a date such as 2026-01-31; "
            f"got '{since}'"
        ) from None
    return in_utc(day if day.tzinfo else day.replace(tzinfo=UTC))


def in_utc(moment: datetime) -> datetime:
    """``moment`` in UTC; one whose offset takes it past the years datetime reaches is the
    first (or last) moment it does: everything (or nothing) is in the window."""
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        edge = datetime.min if moment.year == datetime.min.year else datetime.max
        return edge.replace(tzinfo=UTC)


def iso(moment: datetime) -> str:
    """As the query log stores times: ISO 8601, UTC, seconds."""
    return moment.astimezone(UTC).isoformat(timespec="seconds")


def shown_since(since: str) -> str:
    """The start of a report's window as its text names it: the day when the window starts
    at midnight UTC (``--since 2026-01-31``), else the day and the minute (``12h``, ``30d``,
    a time with its offset): a report since 01:30 never reads as one since midnight."""
    try:
        moment = datetime.fromisoformat(since)
    except ValueError:
        return since
    moment = in_utc(moment if moment.tzinfo else moment.replace(tzinfo=UTC))
    if (moment.hour, moment.minute, moment.second) == (0, 0, 0):
        return moment.date().isoformat()
    return moment.strftime("%Y-%m-%d %H:%M UTC")
