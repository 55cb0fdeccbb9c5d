"""What runs on this machine, for tests that check nothing is left behind (git helpers)."""

from __future__ import annotations

from pathlib import Path


def running(marker: str) -> list[str]:
    """Command lines of this machine's processes that hold ``marker``."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:  # ended meanwhile
            continue
        if marker in text:
            found.append(text)
    return found
