"""Link suggestions (T5), pure: documents that mention another document by its title or an
alias without linking to it, and links that resolve to nothing. Dismissed pairs are left out."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence, Set
from dataclasses import dataclass
from typing import Literal

from briefd.model import ResolvedLink

SuggestionKind = Literal["unlinked-mention", "broken-link"]
MIN_NAME_CHARS = 4
_FENCE = re.compile(r"^(\s*)(```|~~~)")


@dataclass(frozen=True, slots=True)
class DocNames:
    """What a document is called (title and aliases) and what it already links to."""

    path: str
    names: tuple[str, ...]
    body: str
    body_start_line: int
    links_to: frozenset[str]


@dataclass(frozen=True, slots=True)
class LinkSuggestion:
    doc_path: str
    kind: SuggestionKind
    target: str  # the document to link to, or the broken link's target as written
    mention: str  # the text that names it
    line: int
    detail: str


def _prose_lines(body: str) -> list[tuple[int, str]]:
    """(offset, line) pairs outside fenced code, with inline code blanked out."""
    out, fenced = [], False
    for offset, line in enumerate(body.splitlines()):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append((offset, re.sub(r"`[^`]*`", " ", line)))
    return out


def _name_pattern(name: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w\[|/#-])" + re.escape(name) + r"(?![\w\]-])", re.IGNORECASE)


def _first_mention(
    lines: Sequence[tuple[int, str]], names: Iterable[str]
) -> tuple[str, int] | None:
    best: tuple[str, int] | None = None
    for name in names:
        pattern = _name_pattern(name)
        for offset, line in lines:
            if best is not None and offset >= best[1]:
                break
            match = pattern.search(line)
            if match:
                best = (match.group(0), offset)
                break
    return best


def unlinked_mentions(
    subjects: Sequence[DocNames], catalog: Sequence[DocNames]
) -> list[LinkSuggestion]:
    """Every (subject, catalog document) pair where the subject names the other in prose but
    has no link to it; reported once per pair, at the first mention."""
    named = [
        (d.path, tuple(n for n in d.names if len(n.strip()) >= MIN_NAME_CHARS)) for d in catalog
    ]
    out: list[LinkSuggestion] = []
    for doc in subjects:
        lines = _prose_lines(doc.body)
        for target, names in named:
            if target == doc.path or target in doc.links_to or not names:
                continue
            found = _first_mention(lines, names)
            if found is not None:
                mention, offset = found
                out.append(
                    LinkSuggestion(
                        doc.path,
                        "unlinked-mention",
                        target,
                        mention,
                        doc.body_start_line + offset,
                        f"mentions '{mention}' without linking {target}; add [[{target}]]",
                    )
                )
    return out


def broken_link_suggestions(broken: Iterable[ResolvedLink]) -> list[LinkSuggestion]:
    return [
        LinkSuggestion(
            r.link.source_path,
            "broken-link",
            r.link.target,
            r.link.display or r.link.target,
            r.link.line,
            f"{r.detail}; fix the target or remove the link",
        )
        for r in broken
    ]


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


def visible(suggestions: Iterable[LinkSuggestion], paths: Set[str]) -> list[LinkSuggestion]:
    """Only suggestions a request that sees ``paths`` may get: in one of those documents and,
    for an unlinked mention, naming one of them (order kept)."""
    return [
        s
        for s in suggestions
        if s.doc_path in paths and (s.kind == "broken-link" or s.target in paths)
    ]
