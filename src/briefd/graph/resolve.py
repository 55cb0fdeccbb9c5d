"""Link resolution (K5), pure: by path, else by file name anywhere; fragments against
explicit ``{#anchors}``, heading texts and GitHub-style heading slugs.

A name that several documents have resolves to the one a reader of the linking document is
most likely to see (:func:`_nearest`): a document of its own scope, then one of a shared
scope (the default scopes: ``domain``, ``conventions``), and only then one of another scope
(another project's, which readers of this one cannot open)."""

from __future__ import annotations

import difflib
import posixpath
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from briefd.model import Heading, Link, LinkFindings, ResolvedLink
from briefd.text import (
    caseless,
    html_anchor_line,
    html_heading_names,
    nested_heading_position,
    numbered_slug_position,
    slugify,
)

_SUFFIXES = (".md", ".markdown", ".mdx")
# the pages a path without a document's extension names, in the order tried: as Hugo's
# ``ref``/``relref`` read ``{{< ref "fees" >}}`` (a page, or a page bundle or section's index)
_PAGES = (*_SUFFIXES, "/index.md", "/_index.md")


def name_key(name: str) -> str:
    """File-name matching is case-, space- and dash-insensitive: [[Retry Policy]] finds
    retry-policy.md, [[İade Politikası]] and [[IADE POLITIKASI]] iade-politikası.md."""
    return re.sub(r"[\s_-]+", "-", caseless(name.strip()))


def path_key(path: str) -> str:
    """Paths compare as text, not bytes: ``café.md`` named decomposed (NFD, as macOS writes
    file names) is the ``café.md`` a link spells composed (NFC)."""
    return unicodedata.normalize("NFC", path)


def _stem(path: str) -> str:
    base = posixpath.basename(path)
    for suffix in _SUFFIXES:
        if base.lower().endswith(suffix):
            return base[: -len(suffix)]
    return base


@dataclass(frozen=True, slots=True)
class Catalog:
    """Every indexed path with its headings, for resolving links against, and the files of
    the source that are outside every scope (``outside``: found, not indexed). ``scopes``
    gives each indexed path its scope and ``shared`` names the scopes every reader sees (the
    default scopes); with them an ambiguous name prefers the linking document's own scope,
    then a shared one. ``prefix`` is the knowledge folder's path in its git work tree
    (``docs/`` in a code repository, '' at its top): a path from the work tree's top, as
    GitHub reads ``[fees](/docs/domain/fees.md)``, names the document ``domain/fees.md``."""

    headings: dict[str, tuple[Heading, ...]]
    by_name: dict[str, tuple[str, ...]] = field(default_factory=dict)
    by_path: dict[str, str] = field(default_factory=dict)  # path_key → path
    outside: Catalog | None = None
    scopes: dict[str, str] = field(default_factory=dict)
    shared: frozenset[str] = frozenset()
    # a document's Obsidian block ids (``[[note#^id]]``), read only for a link that names one
    blocks: Callable[[str], Mapping[str, int]] | None = None
    folded: dict[str, str] = field(default_factory=dict)  # path caseless → path
    prefix: str = ""
    skipped: dict[str, str] = field(default_factory=dict)  # in ``outside``: not indexed, why
    # the names HTML tags outside headings give in a document (``<a name="old-heading">``),
    # read only for a link whose fragment names no heading
    anchors: Callable[[str], Mapping[str, int]] | None = None

    @classmethod
    def build(
        cls,
        docs: Iterable[tuple[str, tuple[Heading, ...]]],
        outside: Iterable[str] = (),
        scopes: Mapping[str, str] | None = None,
        shared: Iterable[str] = (),
        blocks: Callable[[str], Mapping[str, int]] | None = None,
        prefix: str = "",
        skipped: Mapping[str, str] | None = None,
        anchors: Callable[[str], Mapping[str, int]] | None = None,
    ) -> Catalog:
        headings = dict(docs)
        by_name: dict[str, list[str]] = defaultdict(list)
        for path in sorted(headings):
            by_name[name_key(_stem(path))].append(path)
        unindexed = sorted(set(outside) - set(headings))
        found = cls.build(((p, ()) for p in unindexed), prefix=prefix) if unindexed else None
        names = {k: tuple(v) for k, v in by_name.items()}
        paths = {path_key(p): p for p in sorted(headings, reverse=True)}  # the first path wins
        folded = {caseless(path_key(p)): p for p in sorted(headings, reverse=True)}
        return cls(
            headings,
            names,
            paths,
            found,
            dict(scopes or {}),
            frozenset(shared),
            blocks,
            folded,
            prefix,
            dict(skipped or {}),
            anchors,
        )

    def path(self, path: str) -> str | None:
        """The indexed path ``path`` names: itself, else the one it spells otherwise composed."""
        return path if path in self.headings else self.by_path.get(path_key(path))


ADD_SCOPE = "add its folder to 'scopes' in briefd.yaml"  # how a file outside every scope is read


def not_indexed(path: str) -> str:
    """What a file of the knowledge folder outside every scope is: there, but not indexed."""
    return f"{path} exists but is outside every scope (not indexed)"


AMBIGUOUS_NAMED = 5  # other documents an ambiguous link's detail names


def resolve(link: Link, catalog: Catalog) -> ResolvedLink:
    candidates = _candidates(link, catalog)
    if not candidates:
        return ResolvedLink(link, None, "broken", _unresolved(link, catalog))
    target = _nearest(link, candidates, catalog)
    status, detail = "ok", ""
    if len(candidates) > 1:
        status = "ambiguous"
        detail = ambiguous_detail(target, [c for c in candidates if c != target])
    if link.fragment and not _has_fragment(catalog, target, link.fragment):
        status, detail = "bad-anchor", f"{target} has no heading or anchor '#{link.fragment}'"
        if (near := _near_heading(link, catalog.headings[target])) is not None:
            detail += f" (did you mean '#{near}'?)"
    return ResolvedLink(link, target, status, detail)


NEAR_HEADING = 0.8  # how alike a fragment and a heading are for "did you mean" (difflib ratio)


def _near_heading(link: Link, headings: Sequence[Heading]) -> str | None:
    """The heading a wrong ``#fragment`` most likely meant (a heading renamed a little:
    ``#refund-window`` for "Refund windows", a typo), as the link writes one: a slug in a
    Markdown link, the heading's text in a wikilink; an explicit anchor as it is."""
    fragment = (link.fragment or "").strip()
    if not fragment or fragment.startswith("^"):
        return None
    spell = slugify if link.kind == "markdown" else str.strip
    seen: Counter[str] = Counter()
    names: dict[str, str] = {}
    for heading in headings:
        name = spell(heading.text)
        if seen[name] and link.kind == "markdown":  # GitHub's slug of a repeated heading
            name = f"{name}-{seen[name]}"
        seen[spell(heading.text)] += 1
        for n in (name, heading.anchor):
            if n:
                names.setdefault(caseless(n), n)
    near = difflib.get_close_matches(caseless(fragment), list(names), n=1, cutoff=NEAR_HEADING)
    return names[near[0]] if near else None


def ambiguous_detail(target: str, others: Sequence[str], hidden: int = 0) -> str:
    """What an ambiguous link says: the document chosen and the others its name matches;
    ``hidden`` more, in scopes the reader did not ask for, are counted, never named; past
    :data:`AMBIGUOUS_NAMED` others, the rest are counted too (a name dozens of documents share
    would make every link's detail kilobytes long)."""
    named = ", ".join(others[:AMBIGUOUS_NAMED])
    if len(others) > AMBIGUOUS_NAMED:
        named += f"{',' if hidden else ' and'} {len(others) - AMBIGUOUS_NAMED} more"
    if hidden:
        count = (
            f"{hidden} more" if others else "1 document" if hidden == 1 else f"{hidden} documents"
        )
        named += f"{' and ' if others else ''}{count} in scopes not requested"
    return f"chose {target}; also matches {named}"


def same_name(link: Link, catalog: Catalog) -> list[str]:
    """Every document ``link`` could mean (more than one: it is ambiguous)."""
    return _candidates(link, catalog)


def _unresolved(link: Link, catalog: Catalog) -> str:
    """Why a link reaches no document: nothing matches, or the file it names exists but is
    outside every scope (so the link is no typo: the file is not indexed)."""
    found = _candidates(link, catalog.outside) if catalog.outside else []
    if not found and (above := _above_root(link, catalog)) is not None:
        return (
            f"'{link.target}' leads out of the knowledge folder (to {above} from its root), "
            "where briefd reads nothing; link to an indexed document, or move the file in"
        )
    if not found and (other := _other_case(link, catalog)) is not None:
        return (
            f"no document matches '{link.target}': {other} differs only in letter case, which "
            "git, GitHub and briefd tell apart (a macOS or Windows editor does not); spell the "
            "link as the file is named"
        )
    if not found:
        return f"no document matches '{link.target}'"
    nearest = _nearest(link, found, catalog)
    if nearest in catalog.skipped:  # a file of a scope the index run skipped
        return f"{nearest} exists but is not indexed: {catalog.skipped[nearest]}"
    return f"{not_indexed(nearest)}; link to an indexed document, or {ADD_SCOPE}"


def _above_root(link: Link, catalog: Catalog) -> str | None:
    """The path from the knowledge root that ``link`` names when it climbs above the root
    (``../../CONTRIBUTING.md`` from ``domain/a.md``), or names from the top of the git work
    tree a file outside the knowledge folder (``/README.md`` with the knowledge in ``docs/``,
    unless the knowledge has a top folder or file of that name), else None."""
    target = link.target.strip()
    if target.startswith("/") and link.kind == "markdown" and catalog.prefix:
        normal = posixpath.normpath(target.lstrip("/"))
        first = normal.split("/", 1)[0]
        if normal.startswith(catalog.prefix) or any(
            p.split("/", 1)[0] == first for p in catalog.folded.values()
        ):
            return None
        return posixpath.relpath(normal, catalog.prefix.rstrip("/"))
    if target.startswith("/") or "/" not in target:
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(link.source_path), target))
    return joined if joined == ".." or joined.startswith("../") else None


def _other_case(link: Link, catalog: Catalog) -> str | None:
    """The indexed document whose path the path ``link`` names matches but for letter case
    (``[x](../Refunds.md)`` for ``domain/refunds.md``), if any."""
    target = link.target.strip()
    if "/" not in target:
        return None  # a name: matched caseless already
    stripped = target.lstrip("/")
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(link.source_path), stripped))
    bases = [posixpath.normpath(stripped), joined]
    if link.kind == "markdown":  # from the linking document's folder first
        bases = bases[:1] if target.startswith("/") else bases[::-1]
    for base in bases:
        for candidate in (base, *(base + s for s in _SUFFIXES)):
            found = catalog.folded.get(caseless(path_key(candidate)))
            if found is not None and _reach(catalog, link.source_path, found) < 2:
                return found  # never another project's path: its readers alone may see it
    return None


def _candidates(link: Link, catalog: Catalog) -> list[str]:
    target = link.target.strip()
    if not target:
        return [link.source_path]
    source_dir = posixpath.dirname(link.source_path)
    if link.kind == "markdown":
        joined = posixpath.normpath(posixpath.join(source_dir, target.lstrip("/")))
        if target.startswith("/"):
            joined = posixpath.normpath(target.lstrip("/"))
        if (found := _page(catalog, joined)) is not None:
            return [found]
        if "/" not in target:  # a file name: Obsidian writes one when it is unique
            named = catalog.by_name.get(name_key(_stem(target)), ())
            bundle = None if named else _page(catalog, posixpath.normpath(target))
            return list(named) if bundle is None else [bundle]
        # a path (from the repository root, as Obsidian writes one, if not from the folder):
        # gone when its file is, never reaching another file of the same name
        found = _page(catalog, posixpath.normpath(target.lstrip("/")))
        if found is None and (inner := _from_top(target, catalog.prefix)) is not None:
            found = _page(catalog, inner)  # from the top of the git work tree, as GitHub reads it
        return [found] if found is not None else []
    stripped = target.lstrip("/")
    if "/" in stripped:
        bases = [stripped, posixpath.normpath(posixpath.join(source_dir, stripped))]
        if (inner := _from_top(stripped, catalog.prefix)) is not None:
            bases.append(inner)  # from the top of the git work tree (a vault opened there)
        for base in bases:
            for candidate in (base, *(base + s for s in _SUFFIXES)):
                if (found := catalog.path(candidate)) is not None:
                    return [found]
        return []
    return list(catalog.by_name.get(name_key(_stem(stripped)), ()))


def _page(catalog: Catalog, path: str) -> str | None:
    """The indexed document ``path`` names: itself, or when it has no document's extension
    (a Hugo ``ref``), the first of :data:`_PAGES` after it that is indexed."""
    if (found := catalog.path(path)) is not None or path.lower().endswith(_SUFFIXES):
        return found
    return next(filter(None, (catalog.path(path + s) for s in _PAGES)), None)


def _from_top(path: str, prefix: str) -> str | None:
    """``path``, named from the top of the git work tree whose folder ``prefix`` (``docs/``)
    the knowledge is, from the knowledge folder's root; None when it is not inside it."""
    normal = posixpath.normpath(path.strip().lstrip("/"))
    return normal[len(prefix) :] if prefix and normal.startswith(prefix) else None


def _nearest(link: Link, candidates: Sequence[str], catalog: Catalog) -> str:
    """The candidate of the source's own scope, else of a shared scope, else any (never
    another project's over a shared one); then the one in the source's folder, then under its
    top folder, then the one whose file name the link spells letter for letter (``[[refunds]]``
    beside both ``Refunds.md`` and ``refunds.md`` means ``refunds.md``), then the first path."""
    source = link.source_path
    source_dir = posixpath.dirname(source)
    top = source.split("/", 1)[0]
    spelled = path_key(_stem(link.target.strip()))
    return min(
        candidates,
        key=lambda c: (
            _reach(catalog, source, c),
            posixpath.dirname(c) != source_dir,
            c.split("/", 1)[0] != top,
            path_key(_stem(c)) != spelled,
            c,
        ),
    )


def _reach(catalog: Catalog, source: str, candidate: str) -> int:
    """0: ``candidate`` is of the scope of ``source``, 1: of a shared scope, 2: of another or
    none known (a catalogue built without scopes)."""
    scope = catalog.scopes.get(candidate)
    if scope is None:
        return 2
    return 0 if scope == catalog.scopes.get(source) else 1 if scope in catalog.shared else 2


def _has_fragment(catalog: Catalog, target: str, fragment: str) -> bool:
    wanted = fragment.strip()
    if wanted.startswith("^") and catalog.blocks is not None:  # an Obsidian block id
        return wanted[1:] in catalog.blocks(target)
    headings = catalog.headings[target]
    lowered, folded = wanted.lower(), caseless(wanted)
    for heading in headings:  # anchors compare as section lookups do (case-insensitive)
        if folded in (caseless(heading.anchor or ""), caseless(heading.text)):
            return True
        if slugify(heading.text) in (lowered, slugify(wanted)):
            return True
        if {folded, slugify(wanted)} & html_heading_names(heading.text):
            return True
    if nested_heading_position([(h.level, h.text) for h in headings], wanted) is not None:
        return True  # Obsidian's [[note#Heading#Subheading]]
    if numbered_heading(headings, fragment) is not None:
        return True
    anchors = catalog.anchors(target) if catalog.anchors is not None else {}
    return html_anchor_line(anchors, wanted) is not None


def numbered_heading(headings: Sequence[Heading], fragment: str) -> Heading | None:
    """The heading GitHub's numbered slug ``fragment`` names (``overview-1``: the second
    "Overview"), if it is one."""
    at = numbered_slug_position([h.text for h in headings], fragment)
    return None if at is None else headings[at]


def findings(
    resolved: Sequence[ResolvedLink], catalog: Catalog, served: Iterable[str] | None = None
) -> LinkFindings:
    """Broken and ambiguous links, unknown anchors, duplicate anchors and orphan documents."""
    inbound = {
        r.target_path for r in resolved if r.target_path and r.target_path != r.link.source_path
    }
    duplicates = []
    for path, headings in sorted(catalog.headings.items()):
        lines: dict[str, list[int]] = defaultdict(list)
        for heading in headings:
            if heading.anchor:
                lines[heading.anchor].append(heading.line)
        duplicates += [(path, a, tuple(ls)) for a, ls in sorted(lines.items()) if len(ls) > 1]
    paths = sorted(served if served is not None else catalog.headings)
    return LinkFindings(
        broken=tuple(r for r in resolved if r.status == "broken"),
        ambiguous=tuple(r for r in resolved if r.status == "ambiguous"),
        unknown_anchors=tuple(r for r in resolved if r.status == "bad-anchor"),
        duplicate_anchors=tuple(duplicates),
        orphans=tuple(p for p in paths if p not in inbound),
        to_superseded=to_superseded(resolved),
    )


def to_superseded(resolved: Sequence[ResolvedLink]) -> tuple[ResolvedLink, ...]:
    """Links from current documents to a document another one ``supersedes`` (front matter),
    their detail naming the superseding documents: a reader who follows one lands on the old
    text. Links from a superseded document, and the ``supersedes`` relations, are history."""
    by: dict[str, list[str]] = defaultdict(list)
    for r in resolved:
        link = r.link
        if _supersedes(r) and r.target_path and link.source_path not in by[r.target_path]:
            by[r.target_path].append(link.source_path)
    found = []
    for r in resolved:
        source, target = r.link.source_path, r.target_path
        if target not in by or source in by or source in by[target] or _supersedes(r):
            continue
        if r.status != "broken":  # a wrong anchor still lands on the old document
            detail = f"links to {target}, superseded by {', '.join(sorted(by[target]))}"
            current = _current(target, by)
            if current and current != sorted(by[target]):  # v1 → v2 → v3: v3 is the one to link
                detail += f", itself superseded: the current text is {', '.join(current)}"
            found.append(replace(r, detail=detail))
    return tuple(found)


def _current(target: str, by: Mapping[str, Sequence[str]]) -> list[str]:
    """The documents at the end of ``target``'s ``supersedes`` chains (``by``: a document →
    those superseding it): the ones nothing supersedes, however many steps on."""
    seen, todo, current = {target}, [target], set()
    while todo:
        for newer in by.get(todo.pop(), ()):
            if newer in seen:
                continue
            seen.add(newer)
            if by.get(newer):
                todo.append(newer)
            else:
                current.add(newer)
    return sorted(current)


def _supersedes(resolved: ResolvedLink) -> bool:
    link = resolved.link
    usable = resolved.status in ("ok", "ambiguous") and link.source_path != resolved.target_path
    return usable and link.kind == "relation" and link.display == "supersedes"
