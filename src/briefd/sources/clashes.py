"""Document names only a case-sensitive file system tells apart.

``domain/Refunds.md`` beside ``domain/refunds.md``, or ``café.md`` written composed beside
``café.md`` written decomposed (as macOS writes it), are two files on Linux, where the
index is built, but one on macOS and Windows: a checkout there holds only one of them (git
warns "the following paths have collided"), so the team edits one while agents are served
both, and a link by name picks one. Both stay indexed; each is reported, naming the other.
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict
from collections.abc import Iterable

from briefd.model import DocumentProblem

__all__ = ["name_clashes"]


def name_clashes(paths: Iterable[str]) -> list[DocumentProblem]:
    """A problem for every path another one equals but for letter case or Unicode
    composition, in path order."""
    groups: dict[str, list[str]] = defaultdict(list)
    for path in paths:
        groups[unicodedata.normalize("NFC", path).casefold()].append(path)
    found = []
    for group in groups.values():
        for path in group:
            found += [DocumentProblem(path, _clash(path, o)) for o in group if o != path]
    return sorted(found, key=lambda p: (p.path, p.problem))


def _clash(path: str, other: str) -> str:
    if unicodedata.normalize("NFC", path) == unicodedata.normalize("NFC", other):
        how = (
            f"its name ({_escaped(path)}, {_form(path)}) is the name of {other} "
            f"({_escaped(other)}, {_form(other)}) written another way: macOS checkouts hold"
        )
    else:
        how = f"its name differs from {other} only in letter case: macOS and Windows checkouts hold"
    return (
        f"{how} only one of the two files, and a link by name picks one; rename one of them, "
        "or merge them into one document"
    )


def _form(path: str) -> str:
    composed = unicodedata.is_normalized("NFC", path)
    return "accents composed" if composed else "accents decomposed, as macOS writes them"


def _escaped(path: str) -> str:
    return path.encode("unicode_escape").decode()
