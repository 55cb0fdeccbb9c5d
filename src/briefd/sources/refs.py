"""Front-matter ``refs`` (K2): gitignore-style globs naming the code paths a document governs.
Bundles (B1) and search (R5) put documents whose ``refs`` cover a request's ``paths`` first."""

from __future__ import annotations

import functools
import posixpath
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import re2

from briefd.errors import QueryError
from briefd.sources.globs import Globs, literal_head

_WILDCARD = re.compile(r"[*?\[]")
_PATH_WILDCARD = re.compile(r"[*?]")  # a path's wildcards: ``[id].tsx`` is a file's own name
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False


@dataclass(frozen=True, slots=True)
class Cover:
    """The most specific glob of a document's ``refs`` that covers one of the paths."""

    glob: str
    path: str
    specificity: tuple[int, int]

    @property
    def reason(self) -> str:
        return f"refs {self.glob} covers {self.path}"


def normalise_paths(paths: Sequence[str]) -> tuple[str, ...]:
    """Code paths as repository-relative POSIX paths, composed (NFC, as ``refs`` are read),
    sorted and without duplicates: ``src//a.py``, ``src/./a.py`` and ``lib/../src/a.py`` are
    ``src/a.py`` (a folder keeps its last slash). A path out of the repository (``../x``) is a
    QueryError."""
    cleaned = {_cleaned(p) for p in paths}
    return tuple(sorted(p for p in cleaned if p))


def _cleaned(path: str) -> str:
    posix = path.strip().replace("\\", "/").lstrip("/")
    if not posix:
        return ""
    if "\0" in posix:
        shown = path.strip().replace("\0", "\\x00")
        raise QueryError(
            f"path '{shown}' holds a NUL character, which no file name has; name code paths "
            "from the repository's root, e.g. src/app.py"
        )
    normal = posixpath.normpath(posix)
    if normal == ".." or normal.startswith("../"):
        raise QueryError(
            f"path '{path.strip()}' leads out of the code repository; name code paths from "
            "the repository's root, e.g. src/app.py"
        )
    if normal == ".":
        return ""
    return _composed(normal + "/" if posix.endswith("/") else normal)


def _composed(path: str) -> str:
    """``path`` composed (NFC): git prints a name as it was committed, and a macOS checkout
    commits ``ödeme/`` decomposed (``o`` + U+0308) where ``refs`` spell it composed."""
    return path if path.isascii() else unicodedata.normalize("NFC", path)


def _line(glob: str) -> str:
    """A ``refs`` glob as gitignore reads it, written as a relative path may be: ``./src/**``
    is ``/src/**`` (anchored at the repository root; gitignore itself matches no ``./``), and
    ``!./src/gen/**`` is ``!/src/gen/**``."""
    cleaned = glob.strip()
    bang = "!" if cleaned.startswith("!") else ""
    cleaned = cleaned.removeprefix(bang)
    if cleaned.startswith("./"):
        cleaned = "/" + cleaned.removeprefix("./")
    return bang + cleaned


def _spec(glob: str) -> Globs:
    return Globs.of([_line(glob)])  # never pathspec's own matching: see briefd.sources.globs


def taken_back(refs: Sequence[str], paths: Iterable[str]) -> set[str]:
    """Those of ``paths`` that ``refs`` do not govern as a whole, read as gitignore reads its
    lines (the last glob matching a path decides): ``["svc/**", "!svc/generated/**"]``
    covers no generated code. Empty (nothing read) when no glob starts with ``!``."""
    if not any(g.strip().startswith("!") for g in refs):
        return set()
    whole = Globs.of([_line(g) for g in refs])
    return {p for p in paths if not _covers(whole, _composed(p))}


def specificity(glob: str) -> tuple[int, int]:
    """How narrowly a glob names code: (path segments without a wildcard, literal characters).
    ``services/gateway/internal/refunds/**`` is more specific than ``services/gateway/**``."""
    parts = [p for p in glob.strip("/").split("/") if p]
    literal = sum(1 for p in parts if not _WILDCARD.search(p))
    return literal, len(_WILDCARD.sub("", glob))


def most_specific_cover(refs: Sequence[str], paths: Sequence[str]) -> Cover | None:
    """The most specific of ``refs`` covering one of ``paths`` (ties: the first written), or
    None when none covers any. ``paths`` are expected normalised."""
    best: Cover | None = None
    out = taken_back(refs, paths)
    for glob in refs:
        spec = _spec(glob)
        path = next((p for p in paths if p not in out and _reaches(spec, glob, p)), None)
        if path is not None and (best is None or specificity(glob) > best.specificity):
            best = Cover(glob, path, specificity(glob))
    return best


def _reaches(spec: Globs, glob: str, path: str) -> bool:
    """Whether ``glob`` covers ``path`` as written, or, when ``path`` is itself a glob (a ``*``
    or ``?`` in it), covers one of the paths it names (:func:`globs_meet`)."""
    return _covers(spec, path) or (
        _PATH_WILDCARD.search(path) is not None and globs_meet(glob, path)
    )


def globs_meet(glob: str, pattern: str) -> bool:
    """Whether the ``refs`` glob and the path glob ``pattern`` (``*``, ``**`` and ``?`` its
    only wildcards: ``app/[id]/*.tsx`` is the folder ``[id]``) name a path in common, segment
    by segment: ``services/gateway/internal/refunds/**`` and ``services/gateway/**`` meet
    ``services/*/internal/refunds/``. A ``refs`` glob naming a folder governs what is in it,
    as gitignore reads it; a ``!`` glob governs nothing."""
    line = _line(glob)
    if line.startswith("!") or not line.strip("/"):
        return False
    anchored = line.startswith("/") or "/" in line.rstrip("/")
    ref = _segments(line) if anchored else ["**", *_segments(line)]
    wanted = _segments(pattern)
    met: dict[tuple[int, int], bool] = {}

    def meet(i: int, j: int) -> bool:
        if (i, j) not in met:
            met[i, j] = _meet_at(wanted, ref, i, j, meet)
        return met[i, j]

    return meet(0, 0)


def _meet_at(
    wanted: list[str], ref: list[str], i: int, j: int, meet: Callable[[int, int], bool]
) -> bool:
    if i == len(wanted):
        return all(s == "**" for s in ref[j:])
    if j == len(ref):  # the folder the glob names holds the rest, unless two wildcards met
        return j > 0 and not (_WILDCARD.search(ref[-1]) and _PATH_WILDCARD.search(wanted[i - 1]))
    if wanted[i] == "**" and (meet(i + 1, j) or meet(i, j + 1)):
        return True
    if ref[j] == "**" and (meet(i, j + 1) or meet(i + 1, j)):
        return True
    return _segments_meet(wanted[i], ref[j]) and meet(i + 1, j + 1)


def _segments(path: str) -> list[str]:
    return [s for s in _composed(path).split("/") if s]


def _segments_meet(wanted: str, ref: str) -> bool:
    """One path segment of each, either a glob the other's text matches (run by RE2)."""
    if wanted == ref:
        return True
    if _segment_regex(wanted, classes=False).fullmatch(ref) is not None:
        return True
    return _segment_regex(ref, classes=True).fullmatch(wanted) is not None


@functools.lru_cache(maxsize=4096)  # every document's refs meet a request's glob paths
def _segment_regex(segment: str, classes: bool) -> Any:
    """One segment's glob as RE2 reads it: ``*`` any run of characters, ``?`` one, and with
    ``classes`` a gitignore ``[...]`` class (``[!x]`` is ``[^x]``); all else literal."""
    out, k = [], 0
    while k < len(segment):
        char = segment[k]
        close = segment.find("]", k + 2) if classes and char == "[" else -1
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif close > 0:
            body = segment[k + 1 : close]
            body = "^" + body[1:] if body.startswith("!") else body
            out.append("[" + body.replace("\\", "\\\\") + "]")
            k = close
        else:
            out.append(re.escape(char))
        k += 1
    try:
        return re2.compile("".join(out), _OPTIONS)
    except re2.error:  # a class RE2 cannot read: the segment as written
        return re2.compile(re.escape(segment), _OPTIONS)


def _covers(spec: Globs, path: str) -> bool:
    """Whether ``spec`` covers ``path``, read as a file or as a folder: ``services/gateway``
    (a folder named as a shell or an editor names it) is the ``services/gateway/`` that
    ``services/gateway/**`` and ``services/gateway/`` cover."""
    return spec.match_file(path) or (not path.endswith("/") and spec.match_file(path + "/"))


def covering(refs: Sequence[str], paths: Sequence[str]) -> str | None:
    """Why a document with these ``refs`` governs one of ``paths`` ("refs GLOB covers PATH",
    its most specific glob), or None when it governs none of them."""
    cover = most_specific_cover(refs, paths)
    return None if cover is None else cover.reason


def covers_any(glob: str, paths: Iterable[str]) -> bool:
    """Whether the ``refs`` glob covers one of ``paths``, by the rules of :func:`paths_covered`
    (it stops at the first)."""
    return any(map(_matcher(glob), paths))


def paths_covered(glob: str, paths: Iterable[str]) -> list[str]:
    """Those of ``paths`` (repository-relative, as git prints them) that the ``refs`` glob
    covers, by the rules of :func:`covering`; one matcher per glob when the glob is a plain
    pattern (drift matches thousands of paths against every glob)."""
    return list(filter(_matcher(glob), paths))


def _matcher(glob: str) -> Callable[[str], bool]:
    """Whether the ``refs`` glob covers a path. A plain pattern (one line, not ``!``) runs its
    one expression, and only on paths that start with its literal head: a string test that
    rules out most paths before the expression runs."""
    spec = _spec(glob)
    if len(spec.rules) != 1 or not spec.rules[0][0]:
        return lambda path: bool(spec.match_file(_composed(path)))
    rule = spec.rules[0][1]
    match, head = rule.match, literal_head(rule if isinstance(rule, re.Pattern) else rule.regex)
    return lambda path: (c := _composed(path)).startswith(head) and match(c) is not None
