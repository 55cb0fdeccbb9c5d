"""Front-matter ``refs`` (K2): gitignore-style globs naming the code paths a document governs.
Bundles (B1) and search (R5) put documents whose ``refs`` cover a request's ``paths`` first."""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from briefd.errors import QueryError
from briefd.sources.globs import Globs

_WILDCARD = re.compile(r"[*?\[]")


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
        path = next((p for p in paths if p not in out and _covers(spec, p)), None)
        if path is not None and (best is None or specificity(glob) > best.specificity):
            best = Cover(glob, path, specificity(glob))
    return best


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


def paths_covered(glob: str, paths: Iterable[str]) -> list[str]:
    """Those of ``paths`` (repository-relative, as git prints them) that the ``refs`` glob
    covers, by the rules of :func:`covering`; one matcher per glob when the glob is a plain
    pattern (drift matches thousands of paths against every glob)."""
    spec = _spec(glob)
    if len(spec.rules) == 1 and spec.rules[0][0]:
        match = spec.rules[0][1].match
        return [p for p in paths if match(_composed(p))]
    return [p for p in paths if spec.match_file(_composed(p))]
