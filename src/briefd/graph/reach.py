"""Which stored links a change of the indexed paths can resolve otherwise (K5, O4), pure.

A link's resolution (:func:`briefd.graph.resolve.resolve`) reads the set of indexed paths
only through lookups of the paths and names it spells: a path (from its document's folder,
from the root, from the top of the git work tree), that path with ``.md`` / ``.markdown`` /
``.mdx`` (and, without one, a page bundle's ``index.md``), a file name anywhere, the same path in other letter case, and, for a Markdown link from the
top of the work tree (``/README.md``), whether any document has that top folder. Every such
lookup finds only paths whose file name has the lookup's :func:`name_key`, so a link whose
keys (:func:`link_keys`) meet none of the name keys of the paths added or deleted, nor the
:func:`top_key` of a top folder that gained its first document or lost its last, resolves as
it did: the index run leaves it as stored."""

from __future__ import annotations

import posixpath
import re

from briefd.model import Link
from briefd.text import caseless

_NOT_WORD = re.compile(r"[\W_]+")
DOCUMENT_SUFFIXES = (".md", ".markdown", ".mdx")  # as briefd.graph.resolve's


def name_key(name: str) -> str:
    """A file name as coarsely as any lookup compares it: letter case, composition, spaces,
    dashes, punctuation and everything from its first dot on left out (``Retry Policy.md``,
    ``retry_policy.markdown`` and ``retry-policy.md.md`` are ``retrypolicy``). Names that
    resolution tells apart may share a key: their links are resolved again for nothing."""
    return _NOT_WORD.sub("", caseless(name).split(".", 1)[0])


def top_key(path: str) -> str:
    """The key of a path's top folder (or of a top-level file: the path)."""
    return "/" + path.split("/", 1)[0]  # never a name key: those hold no "/"


def link_keys(link: Link) -> frozenset[str] | None:
    """The keys of every path ``link`` may be looked up by; None when its target names a
    folder (``..``, ``docs/``), which any added or deleted path may change."""
    return target_keys(link.kind, link.target)


def target_keys(kind: str, target: str) -> frozenset[str] | None:
    """:func:`link_keys` of a link of ``kind`` to ``target``, from any document: the paths a
    target is looked up by, from its document's folder or not, end in the file name its
    normalized path does (normalizing never takes away a last name that is no ``..``)."""
    target = target.strip()
    if not target:
        return frozenset()  # its own document: no lookup
    stripped = target.lstrip("/")
    keys = set()
    for form in (stripped, posixpath.normpath(stripped)):
        base = posixpath.basename(form)
        if base in ("", ".", ".."):
            return None
        keys.add(name_key(base))
    if kind == "markdown" and target.startswith("/"):
        keys.add(top_key(posixpath.normpath(stripped)))  # whether it leads out of the folder
    if kind == "markdown" and not target.lower().endswith(DOCUMENT_SUFFIXES):
        keys.add(name_key("index"))  # a Hugo ref's page bundle (``about/index.md``, ``_index.md``)
    return frozenset(keys)
