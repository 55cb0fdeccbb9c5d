"""stdout and stderr that cannot write every character (``PYTHONIOENCODING=ascii``, a
Latin-1 locale): the command line writes "?" for what they cannot, never a traceback, and its
JSON escapes to ASCII so that it stays whole (standard library only: the index fast paths
write through it too)."""

from __future__ import annotations

import sys


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
