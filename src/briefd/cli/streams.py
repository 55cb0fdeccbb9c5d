"""stdout and stderr that cannot write every character (``PYTHONIOENCODING=ascii``, a
Latin-1 locale): the command line writes "?" for what they cannot, never a traceback, and its
JSON escapes to ASCII so that it stays whole (standard library only: the index fast paths
write through it too)."""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs every start-up
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any


def utf8(stream: object) -> bool:
    """Whether ``stream`` writes any character: UTF-8 (or no text stream to change)."""
    encoding = getattr(stream, "encoding", None)
    if not isinstance(encoding, str) or not hasattr(stream, "reconfigure"):
        return True
    return encoding.lower().replace("-", "").replace("_", "") in ("utf8", "utf8sig")


def write_anything() -> None:
    """Replace what stdout and stderr cannot encode instead of failing on it."""
    for stream in (sys.stdout, sys.stderr):
        if not utf8(stream):
            stream.reconfigure(errors="replace")  # type: ignore[union-attr]


class GuardedStdout:
    """stdout whose failed writes are recorded (a full disk, ``> /dev/full``, an I/O error), so
    that the console script can tell them from any other OSError and say them in one line;
    everything else (fileno, isatty, encoding, buffer…) is the stream's own."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.failures: list[OSError] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)

    def write(self, text: str) -> int:
        return int(self._guarded(self.stream.write, text))

    def writelines(self, lines: Iterable[str]) -> None:
        self._guarded(self.stream.writelines, lines)

    def flush(self) -> None:
        self._guarded(self.stream.flush)

    def _guarded(self, call: Callable[..., Any], *args: Any) -> Any:
        try:
            return call(*args)
        except OSError as error:
            self.failures.append(error)
            raise


def guard_stdout() -> None:
    """Route stdout through :class:`GuardedStdout` (not when Python started without one)."""
    if sys.stdout is not None and not isinstance(sys.stdout, GuardedStdout):
        sys.stdout = GuardedStdout(sys.stdout)


def stdout_failure(error: BaseException) -> OSError | None:
    """``error`` when it is a write to stdout that failed (not a closed pipe: that one ends
    quietly), else None."""
    stdout: object = sys.stdout
    if not isinstance(stdout, GuardedStdout) or isinstance(error, BrokenPipeError):
        return None
    return next((f for f in stdout.failures if f is error), None)
