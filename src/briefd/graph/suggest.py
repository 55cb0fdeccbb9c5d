"""Link suggestions (T5), pure: documents that mention another document by its title or an
alias without linking to it, and links that resolve to nothing. Dismissed pairs are left out."""

from __future__ import annotations

import functools
import posixpath
import re
import unicodedata
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from itertools import accumulate, pairwise
from typing import Literal

from briefd.graph.resolve import Catalog, name_key, same_name
from briefd.markdown.links import comments_blanked
from briefd.markdown.parse import code_ranges
from briefd.model import Link, ResolvedLink
from briefd.text import has_spaceless

SuggestionKind = Literal["unlinked-mention", "broken-link"]
MIN_NAME_CHARS = 4
_MAYBE_CODE = re.compile(r"```|~~~|^(?: {4}|\t)", re.MULTILINE)  # else no code block to find
_INLINE_CODE = re.compile(r"`[^`]*`")
# links as written: a wikilink, a markdown link or image with its target, a reference-style
# link; a name in a link's text is linked already (to what the writer chose), as one right
# after the bracket always was
# (links_blanked). A wikilink ("!?\[\[[^\]\n]*\]\]") tried as a regex at every "[[" of a line
# read on to the next "]" each time, so a line of many "[[" and no "]]" took the square of its
# length (a 100 KB document of "[[a ": 3.5 CPU-s a suggestion). A wikilink ends at the first
# "]" after its "[[" (its text holds none), which one find tells for every "[[" before that
# "]"; the other kinds stop at the next bracket and are left to the regex.
_OPENING = re.compile(r"!?\[")
_TEXT_END = re.compile(r"[\]\n]")  # where a wikilink's text ends
_BRACKETED = re.compile(r"!?\[[^\[\]\n]*\](?:\([^()\n]*\)|\[[^\[\]\n]*\])")
# web addresses and e-mail addresses: a name in one (…/search?q=settlement, refunds@corp.com,
# www.settlement.io) is part of an address, no mention of the document. A scheme is at most 32
# letters and an address's user part starts where its run of letters does: tried at every
# letter of a long run ('x' * 20,000, a hex dump on one line), an open-ended part read the
# run to its end each time (2.7 s for 20,000 letters, four times that for twice as many)
_ADDRESS = re.compile(
    r"\b(?:[a-z][a-z0-9+.-]{0,31}://|www\.|mailto:)[^\s<>()\[\]]*"
    r"|(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+",
    re.IGNORECASE,
)
# what every address _ADDRESS finds holds, found as it finds it (case-blind)
_MAYBE_ADDRESS = re.compile(r"@|://|www\.|mailto:", re.IGNORECASE)
_WORD = re.compile(r"\w+")
_EDGE_BEFORE = re.compile(r"[\w\[|/#-]")  # what may not stand before a mention
_EDGE_AFTER = re.compile(r"[\w\]-]")  # nor after it


@dataclass(frozen=True, slots=True)
class DocNames:
    """What a document is called (title and aliases) and what it already links to."""

    path: str
    names: tuple[str, ...]
    body: str
    body_start_line: int
    links_to: frozenset[str]
    code: frozenset[int] | None = None  # the body's code lines (offsets), None: find them
    headings: frozenset[int] = (
        frozenset()
    )  # the body's heading lines (offsets): no place for a link


@dataclass(frozen=True, slots=True)
class LinkSuggestion:
    doc_path: str
    kind: SuggestionKind
    target: str  # the document to link to, or the broken link's target as written
    mention: str  # the text that names it
    line: int
    detail: str


def _prose_lines(
    body: str, code: frozenset[int] | None = None, headings: frozenset[int] = frozenset()
) -> list[tuple[int, str]]:
    """(offset, line) pairs outside fenced and indented code (``code``, else found: the code
    blocks links are never read in, as the same CommonMark parser finds them) and outside the
    ``headings`` (a heading is no place for a link: it is the section's name, and anchors and
    slugs are made from its text), with inline code, HTML and Obsidian comments, links and web
    and e-mail addresses blanked out."""
    if code is None:
        code = code_offsets(body)
    lines = body.split("\n")  # the file's lines, as links count them
    inline = "`" in body
    shown = [
        " " if i in code else _INLINE_CODE.sub(" ", line) if inline else line
        for i, line in enumerate(lines)
    ]
    if "<!--" in body or "%%" in body:
        shown = comments_blanked("\n".join(shown)).split("\n")
    # each pattern only where it may match: most prose holds no address (most of the time
    # suggestions over thousands of documents took was these patterns tried on every line)
    links, addresses = "[" in body, _MAYBE_ADDRESS.search(body) is not None
    return [
        (offset, _blanked(line, links, addresses))
        for offset, line in enumerate(shown)
        if offset not in code and offset not in headings
    ]


def _blanked(line: str, links: bool, addresses: bool) -> str:
    """``line`` with its links (if ``links``) and addresses (if ``addresses``) blanked."""
    if links and "[" in line:
        line = links_blanked(line)
    return _ADDRESS.sub(" ", line) if addresses else line


def links_blanked(line: str) -> str:
    """``line`` with each link blanked (a wikilink first, as written: ``[[text]]``; else a
    markdown or reference-style link ``[text](target)`` / ``[text][ref]``), in time linear in
    its length."""
    parts: list[str] = []
    done = searched = 0
    close = -1  # where the last wikilink text looked at ends ("]", a line end; len: none)
    while (opening := _OPENING.search(line, searched)) is not None:
        start = opening.start()
        bracket = opening.end() - 1
        end = -1
        if line.startswith("[[", bracket):
            if close < bracket + 2:
                found = _TEXT_END.search(line, bracket + 2)
                close = len(line) if found is None else found.start()
            if line.startswith("]]", close):
                end = close + 2
        if end < 0 and (other := _BRACKETED.match(line, start)) is not None:
            end = other.end()
        if end < 0:
            searched = start + 1
            continue
        parts += [line[done:start], " "]
        done = searched = end
    return "".join(parts) + line[done:] if parts else line


def code_blocks(body: str) -> tuple[tuple[int, int], ...]:
    """The first and last line offsets of ``body``'s code blocks (``` or ~~~ fences of any
    length, nested ones, indented code)."""
    return code_ranges(body, first_line=0) if _MAYBE_CODE.search(body) else ()


def code_offsets(body: str, blocks: Sequence[tuple[int, int]] | None = None) -> frozenset[int]:
    """The line offsets of ``body``'s code blocks (``blocks``, else found)."""
    found = code_blocks(body) if blocks is None else blocks
    return frozenset(offset for start, end in found for offset in range(start, end + 1))


def _name_pattern(name: str) -> re.Pattern[str]:
    """A whole-word mention of ``name``; next to a Han or kana character at its edge any
    letter may stand, as Japanese and Chinese write without spaces ("请参阅退款规则了解")."""
    before = r"(?<![\[|/#-])" if has_spaceless(name[:1]) else r"(?<![\w\[|/#-])"
    after = r"(?![\]-])" if has_spaceless(name[-1:]) else r"(?![\w\]-])"
    return re.compile(before + _DOUBLE_S.sub("(?:ss|ß)", re.escape(name)) + after, re.IGNORECASE)


# ss in a name also matches ß (and, case-blind, ẞ): a Swiss page called "Grosskunden" is named
# in a German one's "Großkunden", as search finds either by the other (see _spellings for ß
# in a name, written ss)
_DOUBLE_S = re.compile("ss", re.IGNORECASE)
_SHARP_S = re.compile("[ßẞ]")


# What the pattern's IGNORECASE matches an ASCII name's letters with: ASCII capitals, and four
# other letters (İ and ı match i, the Kelvin sign k, the long s s). One letter for one, so a
# text folded so keeps every offset.
_ASCII_FOLD = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZİı\u212aſ", "abcdefghijklmnopqrstuvwxyziiks")


@dataclass(frozen=True, slots=True)
class _Name:
    """A name and, for an ASCII name, the name lowercased: found in text folded by
    ``_ASCII_FOLD`` by ``str.find`` with the pattern's word edges (the regex engine is far
    slower); its pattern is compiled only when a text needs it (compiling every name of 5,000
    documents for each run was a second of its own)."""

    name: str
    folded: str | None
    double_s: bool = False  # an ASCII name with ss: in a text with ß, found by its pattern

    @classmethod
    def of(cls, name: str) -> _Name:
        folded = name.lower() if name.isascii() else None
        return cls(name, folded, folded is not None and "ss" in folded)

    @property
    def pattern(self) -> re.Pattern[str]:
        return _compiled(self.name)


@functools.lru_cache(maxsize=4096)
def _compiled(name: str) -> re.Pattern[str]:
    return _name_pattern(name)


def _find(text: str, name: str) -> tuple[int, int] | None:
    """Where ASCII ``name`` first stands in ``text`` folded by ``_ASCII_FOLD``, as
    :func:`_name_pattern` finds it in the text before folding."""
    start = text.find(name)
    while start >= 0:
        end = start + len(name)
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        if not (_EDGE_BEFORE.match(before) or _EDGE_AFTER.match(after)):
            return start, end
        start = text.find(name, start + 1)
    return None


@dataclass(frozen=True, slots=True)
class _Prose:
    """A document's prose lines joined, with where each starts and its line offset."""

    text: str
    folded: str  # the text folded by _ASCII_FOLD: what ASCII names are found in
    starts: tuple[int, ...]
    offsets: tuple[int, ...]
    sharp_s: bool = False  # the text holds ß or ẞ

    @classmethod
    def of(
        cls, body: str, code: frozenset[int] | None = None, headings: frozenset[int] = frozenset()
    ) -> _Prose:
        lines = _prose_lines(body, code, headings)
        starts = accumulate((len(line) + 1 for _, line in lines[:-1]), initial=0)
        text = "\n".join(line for _, line in lines)
        folded = text.translate(_ASCII_FOLD)
        sharp = _SHARP_S.search(text) is not None
        return cls(text, folded, tuple(starts), tuple(o for o, _ in lines), sharp)


def _first_mention(prose: _Prose, names: Iterable[_Name]) -> tuple[str, int] | None:
    """The earliest line naming the document (the first name wins a tie): one search of the
    prose per name."""
    best: tuple[str, int] | None = None
    for name in names:
        if name.folded is not None and not (name.double_s and prose.sharp_s):
            span = _find(prose.folded, name.folded)
        else:
            match = name.pattern.search(prose.text)
            span = match.span() if match else None
        if span is not None:
            offset = prose.offsets[bisect_right(prose.starts, span[0]) - 1]
            if best is None or offset < best[1]:
                best = (prose.text[span[0] : span[1]], offset)
    return best


Key = tuple[str, ...]  # a word of a text, or two words one after the other


def _keys(name: str) -> frozenset[Key] | None:
    """What a text must hold for an ASCII name to stand in it: its word if it has one, else
    each pair of its words one after the other (None: a name to look for in every text)."""
    words = _WORD.findall(name.lower()) if name.isascii() else []
    if len(words) < 2:
        return frozenset({(words[0],)}) if words else None
    return frozenset(pairwise(words))


def _text_keys(folded: str) -> set[Key]:
    """The words of a text (folded by ``_ASCII_FOLD``) and each pair of them one after the
    other: a mention of a name is whole words, none between two of its own."""
    words = _WORD.findall(folded)
    keys: set[Key] = {(w,) for w in words}
    keys.update(pairwise(words))
    return keys


def _candidates(
    prose: _Prose,
    by_key: Mapping[Key, Sequence[tuple[int, frozenset[Key]]]],
    everywhere: Sequence[int],
) -> list[int]:
    """Catalog positions whose names may occur in a text: an ASCII name matches whole words,
    so each of its words is one of the text's, and two of its words one after the other are
    so in the text; a name with other letters may be anywhere."""
    keys = _text_keys(prose.folded)
    if prose.sharp_s:  # "großkunden" is the word "grosskunden" too
        keys.update(_text_keys(_SHARP_S.sub("ss", prose.folded)))
    found = {i for k in keys for i, need in by_key.get(k, ()) if need <= keys}
    return sorted(found.union(everywhere))


def _name_index(
    catalog: Sequence[Sequence[str]],
) -> tuple[dict[Key, list[tuple[int, frozenset[Key]]]], list[int]]:
    """Each ASCII name under its rarest key (:func:`_keys`) among all names, with its keys;
    the positions of documents with other names."""
    keyed = [[_keys(n) for n in names] for names in catalog]
    counts = Counter(k for names in keyed for ks in names for k in ks or ())
    by_key: dict[Key, list[tuple[int, frozenset[Key]]]] = {}
    everywhere: list[int] = []
    for i, names in enumerate(keyed):
        for ks in names:
            if ks is None:
                everywhere.append(i)
            else:
                by_key.setdefault(min(ks, key=lambda k: (counts[k], k)), []).append((i, ks))
    return by_key, everywhere


def _long_enough(name: str) -> bool:
    """Whether ``name`` is at least ``MIN_NAME_CHARS`` long, a wide character (Han, kana,
    Hangul: a syllable or a word of its own) counting two, as a terminal shows it: "返金"
    (refunds) and "精算" (settlement) are whole titles, where "PSP" or "API" would be found
    inside every other text."""
    if len(name) >= MIN_NAME_CHARS:
        return True
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in name) >= MIN_NAME_CHARS


def _spellings(names: Iterable[str]) -> list[str]:
    """The names, each with ß also written ss (as capitals write it, and Swiss German): the
    case-blind match takes ß for ẞ but never for ss, as links and search do."""
    out = []
    for name in names:
        out.append(name)
        if "ß" in name or "ẞ" in name:
            out.append(name.replace("ß", "ss").replace("ẞ", "SS"))
    return list(dict.fromkeys(out))


def unlinked_mentions(
    subjects: Sequence[DocNames], catalog: Sequence[DocNames]
) -> list[LinkSuggestion]:
    """Every (subject, catalog document) pair where the subject names the other in prose but
    has no link to it; reported once per pair, at the first mention. A name several documents
    share is suggested once, for the nearest of them (:func:`_nearest`), and not at all when
    the subject links one of them or is called so itself."""
    names = [
        [n for n in _spellings(d.names) if _long_enough(n.strip()) and "\n" not in n]
        for d in catalog
    ]
    named = [(d.path, [_Name.of(n) for n in ns]) for d, ns in zip(catalog, names, strict=True)]
    keys = {d.path: {name_key(n) for n in ns} for d, ns in zip(catalog, names, strict=True)}
    by_key, everywhere = _name_index(names)
    out: list[LinkSuggestion] = []
    for doc in subjects:
        prose = _Prose.of(doc.body, doc.code, doc.headings)
        found: dict[str, list[tuple[str, str, int]]] = {}  # by the mention's name key
        for i in _candidates(prose, by_key, everywhere):
            target, patterns = named[i]
            if target == doc.path or target in doc.links_to:
                continue
            hit = _first_mention(prose, patterns)
            if hit is not None:
                found.setdefault(name_key(hit[0]), []).append((target, *hit))
        linked = keys.get(doc.path, set()).union(*(keys.get(p, ()) for p in doc.links_to))
        for key, hits in found.items():
            if key not in linked:
                out.append(_mention_suggestion(doc, _nearest(doc.path, hits)))
    return out


def _nearest(
    subject: str, hits: Sequence[tuple[str, str, int]]
) -> tuple[str, str, int, tuple[str, ...]]:
    """The hit whose document shares the most folders with ``subject`` (then the first path),
    with the other documents so named."""
    folders = subject.split("/")[:-1]

    def shared(path: str) -> int:
        return len(posixpath.commonprefix([folders, path.split("/")[:-1]]))

    ordered = sorted(hits, key=lambda h: (-shared(h[0]), h[0]))
    target, mention, offset = ordered[0]
    return target, mention, offset, tuple(h[0] for h in ordered[1:])


def _mention_suggestion(
    doc: DocNames, hit: tuple[str, str, int, tuple[str, ...]]
) -> LinkSuggestion:
    target, mention, offset, others = hit
    also = ""
    if others:
        listed = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if others[3:] else "")
        also = f" (nearest of the documents so called; also {listed})"
    return LinkSuggestion(
        doc.path,
        "unlinked-mention",
        target,
        mention,
        doc.body_start_line + offset,
        f"mentions '{mention}' without linking {target}; add [[{target}]]{also}",
    )


def broken_link_suggestions(
    broken: Iterable[ResolvedLink], catalog: Sequence[DocNames] = (), moves: Moves | None = None
) -> list[LinkSuggestion]:
    """A suggestion per broken link; one that names a document moved since (``moves``), or
    whose target is what a document of ``catalog`` is called, names that document and the
    link that reaches it (:meth:`Moves.detail`, :func:`called_detail`)."""
    called = called_names((d.path, d.names) for d in catalog)
    seen = {d.path for d in catalog}
    moved = moves.detail if moves is not None else lambda r, reachable: None
    return [
        LinkSuggestion(
            r.link.source_path,
            "broken-link",
            r.link.target,
            r.link.display or r.link.target,
            r.link.line,
            moved(r, seen.__contains__)
            or called_detail(r, called)
            or f"{r.detail}; fix the target or remove the link",
        )
        for r in broken
    ]


def called_detail(
    broken: ResolvedLink,
    called: Mapping[str, Sequence[tuple[str, str]]],
    reachable: Callable[[str], bool] = lambda path: True,
) -> str | None:
    """What broken link ``broken`` says when its target is what a ``reachable`` document is
    called (its title or an alias, as file names match: case, spaces and dashes aside;
    ``called``: :func:`called_names`): that document, and the link that reaches it, since
    links find files, not titles. None when no document is so called."""
    link = broken.link
    file = link.target.strip().removeprefix("./")  # a file of the linking one's folder
    if "/" in file:
        return None
    named = [(p, n) for p, n in called.get(name_key(_no_suffix(file)), ()) if reachable(p)]
    if not named:
        return None
    path, name = named[0]
    others = [p for p, _ in named[1:4]] + ([f"{len(named) - 4} more"] if named[4:] else [])
    also = f" (also {', '.join(others)})" if others else ""
    return (
        f"{broken.detail}: links name a file, not a title; {path}{also} is called "
        f"'{name}': {_written(link, path)}"
    )


@dataclass(frozen=True, slots=True)
class Moves:
    """Documents the index runs saw move (renamed, or into another folder) with their content
    unchanged: former path → current path (``to``), and the former paths as a catalogue to
    resolve a link against, as it would have resolved before the move."""

    to: Mapping[str, str]
    former: Catalog

    @classmethod
    def of(cls, to: Mapping[str, str]) -> Moves:
        return cls(dict(to), Catalog.build((path, ()) for path in to))

    def detail(
        self, broken: ResolvedLink, reachable: Callable[[str], bool] = lambda path: True
    ) -> str | None:
        """What broken link ``broken`` says when it names a moved document's former path or
        file name: where it went (a ``reachable`` document only) and the link that reaches
        it. None when it names no moved document."""
        link = broken.link
        found = sorted(p for p in same_name(link, self.former) if reachable(self.to[p]))
        if not found:
            return None
        old, new = found[0], self.to[found[0]]
        how = "renamed" if posixpath.dirname(old) == posixpath.dirname(new) else "moved"
        if link.kind == "markdown":  # from the linking document's folder, as GitHub reads it
            to = posixpath.relpath(new, posixpath.dirname(link.source_path) or ".")
            to += f"#{link.fragment}" if link.fragment else ""
            fix = f"link it as [{link.display or link.target}]({to})"
        else:
            fix = _written(link, new)
        return f"{broken.detail}: {old} was {how} to {new}: {fix}"


def unknown_anchor_suggestions(links: Iterable[ResolvedLink]) -> list[LinkSuggestion]:
    """Links to a heading or anchor their document lacks: broken too (a reader lands at the
    document's top, and ``briefd links --check`` fails on them), their target written with
    its fragment."""
    return [
        LinkSuggestion(
            r.link.source_path,
            "broken-link",
            f"{r.link.target}#{r.link.fragment}",
            r.link.display or f"{r.link.target}#{r.link.fragment}",
            r.link.line,
            f"{r.detail}; link one of its headings, or drop '#{r.link.fragment}'",
        )
        for r in links
    ]


def _written(link: Link, path: str) -> str:
    """How ``link`` reaches ``path``, written as it was written (its text and fragment
    kept)."""
    to = f"{path}#{link.fragment}" if link.fragment else path
    if link.kind == "markdown":
        return f"link it as [{link.display or link.target}]({to})"
    if link.kind == "wiki":
        return f"link it as [[{to}|{link.display or link.target}]]"
    return f"name it as {to}"


def called_names(docs: Iterable[tuple[str, Sequence[str]]]) -> dict[str, list[tuple[str, str]]]:
    """The documents (path, names: title and aliases) by what they are called, as file names
    match: (path, name) pairs by :func:`name_key`."""
    called: dict[str, list[tuple[str, str]]] = {}
    for path, names in sorted(docs, key=lambda d: d[0]):
        for name in dict.fromkeys(n.strip() for n in names if n.strip()):
            known = called.setdefault(name_key(name), [])
            if path not in (p for p, _ in known):
                known.append((path, name))
    return called


def _no_suffix(target: str) -> str:
    lowered = target.lower()
    for suffix in (".md", ".markdown", ".mdx"):
        if lowered.endswith(suffix):
            return target[: -len(suffix)]
    return target


def select(
    suggestions: Iterable[LinkSuggestion],
    dismissed: set[tuple[str, str]],
    doc_path: str | None,
    limit: int,
) -> list[LinkSuggestion]:
    """Filter to one document (if given), drop dismissed pairs, order stably, cap at ``limit``."""
    kept = [
        s
        for s in suggestions
        if (doc_path is None or s.doc_path == doc_path) and (s.doc_path, s.target) not in dismissed
    ]
    kept.sort(key=lambda s: (s.kind != "broken-link", s.doc_path, s.line, s.target))
    return kept[: max(0, limit)]


class Suggestions(list[LinkSuggestion]):
    """Suggestions, and what was left out of them: ``dismissed``, suggestions dismissed for
    the documents asked about (``dismissed_broken`` of them broken links, which ``briefd links
    --check`` still fails on), and ``other_scopes``, broken links of those documents (or of
    every document, when none is named) that a request of those scopes may not see: in a
    document of another scope, or to a heading of one."""

    def __init__(
        self,
        items: Iterable[LinkSuggestion] = (),
        dismissed: int = 0,
        dismissed_broken: int = 0,
        other_scopes: int = 0,
    ) -> None:
        super().__init__(items)
        self.dismissed = dismissed
        self.dismissed_broken = dismissed_broken
        self.other_scopes = other_scopes


def left_out(
    found: Sequence[LinkSuggestion],
    broken: Sequence[LinkSuggestion],
    dismissed: set[tuple[str, str]],
    doc_path: str | None,
    paths: Set[str],
) -> Suggestions:
    """Of ``found`` (every suggestion for the documents asked about), those a request that
    sees ``paths`` gets, dismissed pairs left out, with how many were left out and why;
    ``broken`` is every document's broken links and unknown anchors, as ``briefd links``
    finds them, seen or not."""
    seen = visible(select(found, set(), doc_path, len(found)), paths)
    shown = [s for s in seen if (s.doc_path, s.target) not in dismissed]
    seen_broken = sum(s.kind == "broken-link" for s in seen)
    shown_broken = sum(s.kind == "broken-link" for s in shown)
    subject = sum(doc_path is None or s.doc_path == doc_path for s in broken)
    return Suggestions(
        shown, len(seen) - len(shown), seen_broken - shown_broken, subject - seen_broken
    )


def visible(suggestions: Iterable[LinkSuggestion], paths: Set[str]) -> list[LinkSuggestion]:
    """Only suggestions a request that sees ``paths`` may get: in one of those documents and,
    for an unlinked mention, naming one of them (order kept)."""
    return [
        s
        for s in suggestions
        if s.doc_path in paths and (s.kind == "broken-link" or s.target in paths)
    ]
