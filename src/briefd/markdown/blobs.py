"""Long runs of base64 or hex in the text chunks are made of: left out, their size said.

A certificate, a key, a kubeconfig's ``certificate-authority-data`` or a file run through
``base64`` and pasted into a note, in a code fence or not, is letters no one searches for: a
1.2 MB paste made 2,400 chunks (860,000 tokens to embed) that crowded search results. An
unbroken run of ``LONG`` or more base64 (or hex) characters, on one line or wrapped over lines
of the same letters only (``base64 -w 76``, a PEM block's lines between its ``-----BEGIN``
and ``-----END`` lines, which stay), is replaced by a marker that says what was left out and
how big, ``… (1.2 MB of base64 left out)``; the lines a wrapped run took after its first are
``GONE`` (as a wrapped ``data:`` payload's are), so chunks' lines are the file's, and the
document read whole still serves the file as it is. A ``data:`` URI's payload is elided before
(``datauri``); a run needs letters and digits both, so no ruler of ``=`` or word is one, and
wrapped lines of one width, so no list of paths is one; hex over several lines (commit hashes
listed one a line, which someone may search for) stays.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from briefd.markdown.datauri import GONE, size_said

LONG = 1000  # characters of an unbroken run left out; shorter ones (a hash, a short key) stay
_WIDE = 40  # a line of a wrapped run but its last is at least this wide (base64 wraps at 64/76)
_RUN = re.compile(rf"[A-Za-z0-9+/_-]{{{LONG},}}={{0,2}}")
_LINE = re.compile(r"(?P<lead>[ \t>]*)(?P<run>[A-Za-z0-9+/_-]+={0,2})[ \t]*")
_HEX = re.compile(r"[0-9A-Fa-f]+")


@dataclass(frozen=True, slots=True)
class Blob:
    """A run left out: its first and last line (1-based), characters and what it is."""

    first: int
    last: int
    chars: int
    kind: str  # "base64" or "hex"

    def marker(self) -> str:
        return f"… ({self.size()} of {self.kind} left out)"

    def size(self) -> str:
        return size_said(self.chars // 2 if self.kind == "hex" else self.chars * 3 // 4)

    def problem(self) -> str:
        where = (
            f"line {self.first}" if self.first == self.last else (f"lines {self.first}-{self.last}")
        )
        return (
            f"{where}: {self.size()} of {self.kind} (a certificate, key or pasted file?) "
            "left out of the index, a marker in its place; link the file instead of pasting it"
        )


def found(lines: Sequence[str]) -> list[Blob]:
    """The runs :func:`without_blobs` leaves out of ``lines``."""
    return without_blobs(lines)[1]


def without_blobs(lines: Sequence[str]) -> tuple[list[str], list[Blob]]:
    """``lines`` with every long run of base64 or hex replaced by a marker, line for line (the
    lines a wrapped run took after its first are ``GONE``), and the runs left out."""
    result, blobs = list(lines), []
    index = 0
    while index < len(result):
        last = _wrapped_until(result, index)
        if last > index:
            match = _LINE.fullmatch(result[index])
            assert match is not None  # _wrapped_until matched it
            run = "".join(_run_of(result[i]) for i in range(index, last + 1))
            blob = Blob(index + 1, last + 1, len(run), _kind(run))
            result[index] = match["lead"] + blob.marker()
            result[index + 1 : last + 1] = [GONE] * (last - index)
            blobs.append(blob)
            index = last + 1
            continue
        line = result[index]
        if len(line) >= LONG and _RUN.search(line) is not None:
            result[index] = _RUN.sub(partial(_inline, line=index + 1, blobs=blobs), line)
        index += 1
    return result, blobs


def _inline(match: re.Match[str], line: int, blobs: list[Blob]) -> str:
    run = match.group()
    if not _mixed(run):
        return run
    blob = Blob(line, line, len(run), _kind(run))
    blobs.append(blob)
    return blob.marker()


def _wrapped_until(lines: Sequence[str], index: int) -> int:
    """The last line of a run wrapped at one width (every line but the last that wide, ``_WIDE``
    or more) over two or more lines of base64 letters only, starting at line ``index``,
    ``LONG`` characters in all; ``index`` when there is none."""
    width = len(_run_of(lines[index]))
    if width < _WIDE:
        return index
    last, text = index, [_run_of(lines[index])]
    for at in range(index + 1, len(lines)):
        run = _run_of(lines[at])
        if not run or len(run) > width or len(text[-1]) < width or text[-1].endswith("="):
            break
        last = at
        text.append(run)
    joined = "".join(text)
    if last == index or len(joined) < LONG or not _mixed(joined) or _kind(joined) == "hex":
        return index  # hex over lines of one width may be hashes listed one a line: they stay
    return last


def _run_of(line: str) -> str:
    match = _LINE.fullmatch(line) if line != GONE else None
    return match["run"] if match is not None else ""


def _mixed(run: str) -> bool:
    return any(c.isdigit() for c in run) and any(c.isalpha() for c in run)


def _kind(run: str) -> str:
    return "hex" if _HEX.fullmatch(run) else "base64"
