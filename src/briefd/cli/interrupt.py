"""Ctrl-C on the command line: exit 130 with one line, never a traceback (standard library
only: the index fast path uses it too).

Python raises ``KeyboardInterrupt`` wherever the signal lands. Inside a function SQLite calls
back (``briefd_fold`` in an index run) the sqlite3 module swallows it, and the statement fails
with "user-defined function raised exception" instead; the handler remembers the signal, so
that such a failure is said as the interruption it is. Said once, wherever it landed: inside
a command's error handling, or outside it (printing the results), where typer turns it into
exit 130 without a word."""

from __future__ import annotations

import signal
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import FrameType

_received: set[int] = set()
_said: list[str] = []


def _remembered(signum: int, frame: FrameType | None) -> None:
    _received.add(signum)
    raise KeyboardInterrupt


def watch() -> None:
    """Remember SIGINT from now on (unless it is ignored, as in a background job)."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _remembered)


def watch_stop() -> None:
    """SIGTERM (``docker stop``, systemd) as Ctrl-C, until :func:`unwatch_stop`: a server's
    start-up (a clone, a first index) ends with git and the index run, where a container's
    PID 1, which has no default action for it, ignored it until killed 10 s later."""
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _remembered)


def unwatch_stop() -> None:
    """SIGTERM as it was (uvicorn handles it while it serves)."""
    if signal.getsignal(signal.SIGTERM) is _remembered:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def interrupted() -> bool:
    """Whether Ctrl-C was pressed since :func:`watch`."""
    return bool(_received)


def say() -> None:
    """``error: interrupted`` on stderr, once (a run may pass two places that would say it)."""
    if not _said:
        _said.append("interrupted")
        sys.stderr.write("error: interrupted\n")


def stopped() -> None:
    """Ctrl-C was a server's normal stop: nothing to say."""
    _said.append("stopped")
