"""Which section a golden entry names, and which section a hit is (V1, I8).

A golden entry names a section by its heading (``Example``) or, where a document has more than
one section of that name, by its heading path (``Invoices > Example``). A hit counts as its
section, told apart by its heading path: two sections called "Example" in one document are two
results, not one (scored as one, every result after them moved up a place).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Sequence

from briefd.api import Briefd
from briefd.errors import EvalError
from briefd.eval.datasets import GoldenSet, all_of
from briefd.graph.resolve import path_key
from briefd.text import caseless

Section = tuple[str, str]  # (document path, heading path joined with " > ")
SEPARATOR = " > "


def section_key(heading: str, heading_path: Sequence[str]) -> str:
    """A section's name among its document's: its heading path (its heading before any)."""
    return SEPARATOR.join(heading_path) or heading


def expected_sections(api: Briefd, golden: GoldenSet) -> dict[tuple[str, str], Section]:
    """Each (path, heading) a query of ``golden`` expects, as the section it names; an entry
    that names none, or several, is a broken query, not a miss."""
    sections: dict[str, list[tuple[str, str]]] = defaultdict(list)  # path → (heading, key)
    titles: dict[str, str] = {}
    with api.store.read() as conn:
        for path, title, heading, heading_path in conn.execute(
            "SELECT d.path, d.title, c.heading, c.heading_path FROM chunks c "
            "JOIN documents d ON d.id = c.doc_id ORDER BY d.path, c.position"
        ):
            titles[path] = title
            named = (heading, section_key(heading, json.loads(heading_path)))
            if named not in sections[path]:
                sections[path].append(named)
    if not sections:  # every expected section missing: the source, not the queries
        raise EvalError(
            f"{golden.path}: the knowledge source {api.settings.source} holds no indexed "
            "document (no Markdown, or none in a scope folder such as domain/); pass the folder "
            "of the knowledge the queries are about (--source DIR)"
        )
    resolved: dict[tuple[str, str], Section] = {}
    problems: list[str] = []
    spelled = {path_key(p): p for p in sorted(sections, reverse=True)}  # the first spelling
    for query in golden.queries:
        for path, heading in query.expected:
            # as typed, with its accents composed otherwise than the index names the file (a
            # folder copied from a Mac names 'ödeme.md' decomposed), or a heading pasted so
            indexed = path if path in sections else spelled.get(path_key(path), path)
            found, written = sections.get(indexed, []), unicodedata.normalize("NFC", heading)
            keys: list[str] = []
            for wanted in _readings(written, titles.get(indexed, "")):
                keys = [k for _, k in found if k == wanted] or [k for h, k in found if h == wanted]
                if keys:
                    break
            where = f"{golden.path}:{query.line}: query {query.id} expects section '{heading}' of {path}"
            if not keys:
                hint = _named(path, heading, sections)
                problems.append(f"{where}, which is not in the index; {hint}")
            elif len(keys) > 1:
                shown = ", ".join(f"'{k}'" for k in keys)
                problems.append(
                    f"{where}, and {len(keys)} sections there have that heading ({shown}); "
                    "name the one meant by its heading path"
                )
            else:
                resolved[(path, heading)] = (indexed, keys[0])
    if problems:  # each at once: a file with three took three runs to mend
        raise EvalError(all_of(list(dict.fromkeys(problems))))
    return resolved


_MARKDOWN_HEADING = re.compile(r"#{1,6}[ \t]+")  # "## Evidence deadline", pasted from a document
_RANK = re.compile(r"\d{1,3}\.[ \t]+")  # "1. Evidence deadline", from a search answer's text
_SEPARATORS = re.compile(r"[ \t]+[›»>][ \t]+")  # the CLI's " > ", the bundles' and MCP's " › "


def _readings(written: str, title: str) -> list[str]:
    """What a golden heading can mean, as written first: a heading copied from where briefd
    shows one carries that place's decoration, "Refunds > Partial refunds" (the document's title
    before its heading path, as `briefd search` prints it), "Refunds › Partial refunds" (a
    bundle's or recall's attribution), "## 1. Partial refunds" (the MCP search text), or
    "## Partial refunds" (the document itself, its inline Markdown and closing ``#``s read as
    the index reads them: "## `FEFO` and *expiry* rules ##"). Only a reading no section matches
    as written is tried; a heading that is a number ("1. Scope") matches as written first."""
    readings = [written]
    plain = " ".join(written.split())
    plain = _MARKDOWN_HEADING.sub("", plain, count=1) if plain.startswith("#") else plain
    plain = _SEPARATORS.sub(SEPARATOR, plain)
    readings.append(plain)
    from briefd.markdown.parse import heading_text  # markdown-it: here, as search never needs it

    if shown := heading_text(f"# {plain}"):
        readings.append(shown)
    if _RANK.match(plain):
        readings.append(_RANK.sub("", plain, count=1))
    titled = " ".join(title.split()) + SEPARATOR
    readings += [r.removeprefix(titled) for r in readings if title and r.startswith(titled)]
    return list(dict.fromkeys(readings))


def _named(path: str, heading: str, sections: dict[str, list[tuple[str, str]]]) -> str:
    """What the index holds for ``path``: the names a golden entry can use (as the index
    writes them: a heading's inline Markdown, `code` or **bold**, is dropped; a heading two
    sections share, by its heading path), or the indexed path it was written for (from the
    repository's root, or ``./``)."""
    found = sections.get(path)
    if not found:
        meant = next((p for p in sorted(sections) if path.endswith("/" + p)), None)
        if meant is not None:
            return f"paths are relative to the knowledge source: write '{meant}'"
        cased = next((p for p in sorted(sections) if caseless(p) == caseless(path)), None)
        if cased is not None:  # as a case-insensitive file system (macOS, Windows) opens it
            return f"paths are case-sensitive: write '{cased}'"
        holders = [p for p in sorted(sections) if any(h == heading for h, _ in sections[p])]
        if len(holders) == 1:  # a document moved or renamed since the query was written
            return (
                f"{path} itself is not indexed, and '{heading}' is a section of {holders[0]}: "
                f"write '{holders[0]}' if it moved there"
            )
        return (
            f"{path} itself is not indexed (a typo, or a file outside every scope?); fix the "
            "query or the document"
        )
    shared = Counter(h for h, _ in found)
    names = [key if shared[h] > 1 else h for h, key in found]
    # caseless, not lower(): "İADE".lower() is "i̇ade" (i and a combining dot), never "iade"
    other_case = [name for name in names if caseless(name) == caseless(heading)]
    if len(other_case) == 1:
        return f"headings are case-sensitive: write '{other_case[0]}'"
    shown = ", ".join(f"'{name}'" for name in names[:12]) + (", …" if names[12:] else "")
    return f"its sections there are {shown}; fix the query or the document"
