"""Rendering (B4): one Markdown block of attributed sections (``package`` and ``manifest``
are JSON documents, see :mod:`briefd.bundles.wire`).

Everything here is a pure function of its arguments, so the same items give the same bytes.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import replace

from briefd.bundles.model import BundleDelta, BundleItem, Candidate
from briefd.markdown.parse import parse_structure
from briefd.markdown.wrap import continuation

SECTION_SEPARATOR = "\n\n"
ISSUE_LABEL = "tracker issue"
# what a block that runs to a closing string opens with: a code fence, an HTML comment, <pre>…
_OPENER = re.compile(r"```|~~~|<(?:!--|pre|script|style|textarea)", re.IGNORECASE)
_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*\n)+")


def attribution(section: Candidate | BundleItem) -> str:
    """The line that precedes a section: path and line range, heading breadcrumb, document
    age, chunk id. The section's own heading line is not repeated in its body; this line
    carries it. A title or heading written over several lines (``title: |``) is put on
    this one, or its other lines would be read as the section's text (or a heading)."""
    if not section.doc_path:  # the tracker issue
        return f"> {ISSUE_LABEL} · {section.title}" if section.title else f"> {ISSUE_LABEL}"
    parts = (section.title, *section.heading_path)
    crumbs = " › ".join(" ".join(part.split()) for part in parts if part.strip())  # one line
    date = section.updated_at[:10] or "unknown"
    where = f"{section.doc_path}:{section.start_line}-{section.end_line}"
    line = f"> {where} · {crumbs} · updated {date} · chunk {section.chunk_id}"
    if section.superseded_by:
        line += f" · superseded by {', '.join(section.superseded_by)}"
    return line


def section_text(section: Candidate | BundleItem, content: str | None = None) -> str:
    """The section as the block holds it: its attribution line, then its body with any code
    fence or HTML block it leaves open (a document that never closes one) closed, so the
    next section's attribution is never read as code or hidden in a comment."""
    body = section.content if content is None else content
    return f"{attribution(section)}\n\n{self_contained(trimmed(body))}"


def trimmed(body: str) -> str:
    """``body`` without the blank lines around it. Its first line keeps its indentation: four
    spaces make an indented code block, two a list nested in the section's text, and
    stripped they would be a paragraph, or a list the next line nests under."""
    return _LEADING_BLANK_LINES.sub("", body.rstrip())


@functools.lru_cache(maxsize=1024)
def self_contained(body: str) -> str:
    """``body`` with the blocks it leaves open closed (:func:`closed_blocks`); parsed only
    when it holds something that opens one."""
    return closed_blocks(body) if _OPENER.search(body) else body


def closed_blocks(text: str) -> str:
    """``text`` with the fenced code and HTML blocks (comments, ``<pre>``…) a cut left open
    closed again, innermost first, so the marker and the sections after it are not read as
    code or hidden in a comment. A code fence the cut left with nothing in it is dropped
    rather than closed: an empty fence tells the reader nothing. One that ends before the text
    does was closed by the end of its list item or block quote: a closing line after the text
    that follows would open a fence, and the sections after it would be read as code."""
    lines = text.split("\n")
    structure = parse_structure(text)
    last = max((n for n, line in enumerate(lines, 1) if line.strip(" >\t")), default=0)
    ended = [f for f in structure.fences if not f.closed and f.end >= last]
    open_blocks = [(f.start, f.markup, True) for f in ended]
    open_blocks += [(h.start, h.closer, False) for h in structure.html if not h.closed]
    closers: list[str] = []
    for start, closer, fence in sorted(open_blocks, reverse=True):
        if fence and not any(line.strip(" >\t") for line in lines[start:]):  # nothing in it
            lines = lines[: start - 1]
            continue
        opening = continuation(lines[start - 1])
        closers.append(f"{opening[: len(opening) - len(opening.lstrip(' >'))]}{closer}")
    return "\n".join([*lines, *closers]).rstrip()


def fingerprint(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode("utf-8")).hexdigest()


def held(section: BundleItem) -> str:
    """The fingerprint of what a client holds of a section (B5): its content, its
    attribution but for the date (path and line range, breadcrumb) and its drift (T4). A
    base's section is reused only while this is unchanged: a section that moved down a line
    is sent again, so the caller never keeps a stale location, and one whose document began
    to drift from the code (or drifted further) is sent again with the drift, or the caller
    would never learn that it may be out of date. The date is the document's: an edit
    elsewhere in it would otherwise re-send every unchanged section for a new "updated" day."""
    text = section_text(replace(section, updated_at=""))
    if section.drift is not None:
        text += "\n\n" + drift_note(section.doc_path, section.drift.commits, section.drift.since)
    return fingerprint(text)


def quoted(text: str) -> str:
    """``text`` as a JSON string, as a tool call's argument is written (a path may hold ``"``)."""
    return json.dumps(text, ensure_ascii=False)


def truncation_marker(section: Candidate, shown: int, total: int) -> str:
    """Names the scope (``get_document`` reads the default scopes unless told, and a project's
    section would not be found there) and the section's first line (a long document comes in
    parts: the first one may end before it). Both are written as JSON strings, so the call
    works as written whatever the path holds (a ``"`` in a file name)."""
    call = (
        f"get_document({quoted(section.doc_path)}, start_line={section.start_line}, "
        f"scopes=[{quoted(section.scope)}])"
    )
    return f"\n\n[… truncated: {shown} of {total} tokens shown; read the rest with {call}]"


def markdown(items: tuple[BundleItem, ...]) -> str:
    return SECTION_SEPARATOR.join(section_text(item) for item in items)


def drift_note(doc_path: str, commits: int, since: str) -> str:
    """What the MCP text says after the block about a document that drifts (T4)."""
    return (
        f"(drift: code under the refs of {doc_path} changed in {commits} commit(s) since the "
        f"document's last change, the first on {since[:10]}; it may be out of date)"
    )


def drift_notes(items: tuple[BundleItem, ...]) -> list[str]:
    """One note per drifting document of ``items``, by path."""
    drifting = {item.doc_path: item.drift for item in items if item.drift is not None}
    return [drift_note(path, d.commits, d.since) for path, d in sorted(drifting.items())]


def delta_markdown(delta: BundleDelta) -> str:
    """Only what changed: the replaced sections as Markdown."""
    return SECTION_SEPARATOR.join(section_text(e.item) for e in delta.entries if e.item)
