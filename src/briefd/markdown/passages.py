"""The text a chunk is embedded as, and its hash (the key its vector is stored under); the
windows a long chunk is also embedded as (R2): a section is as close to a query as its closest
part, and one vector for a whole section blurs the part a question is about."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from briefd.markdown.links import DEFINITION

# a sentence ends at . ! ? (then a space) or at a line break: Markdown lists, tables and
# headings end their lines without punctuation
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")  # a line opening or closing fenced code
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_BLANK_RUN = re.compile(r"\n[ \t]*(?:\n[ \t]*)+\n")


def passage_text(title: str, heading_path: Sequence[str], content: str) -> str:
    """Title and breadcrumb give a short section the context its body lacks; the body is what
    a reader of the rendered page sees of it (:func:`readable`)."""
    head = " > ".join((title, *heading_path)) if title else " > ".join(heading_path)
    body = readable(content)
    return f"{head}\n{body}" if head else body


def readable(content: str) -> str:
    """``content`` without what a rendered page does not show, outside fenced code: HTML
    comments (``<!-- YAML added: v8.0.0 … -->`` heading each section of the Node.js docs) and
    link reference definitions (``[label]: https://…``: a page's last section held 5-80 of
    them, and matched almost any question by its vector). Measured on 21 files of the Node.js
    docs, both stripped: vector Recall@5 0.725 -> 0.825. Only the embedding reads this: what
    the agent is given, and BM25, keep the section as written."""
    if "<!--" not in content and "]:" not in content:
        return content
    kept: list[str] = []
    fence = ""
    comment = False
    for line in content.split("\n"):
        opened = _FENCE.match(line)
        if fence:
            fence = "" if opened and opened.group(1).startswith(fence) else fence
            kept.append(line)
        elif comment:
            comment = "-->" not in line
            rest = line.split("-->", 1)[1] if not comment else ""
            if rest.strip():
                kept.append(rest)
        elif opened:
            fence = opened.group(1)
            kept.append(line)
        elif not DEFINITION.match(line):
            shown = _COMMENT.sub("", line)
            comment = "<!--" in shown
            shown = shown.split("<!--", 1)[0]
            if shown.strip() or not line.strip():
                kept.append(shown)
    return _BLANK_RUN.sub("\n\n", "\n".join(kept)).strip("\n")


def passage_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def passage_windows(title: str, heading_path: Sequence[str], content: str, words: int) -> list[str]:
    """The windows a chunk longer than ``words`` words is also embedded as: its sentences in
    order, packed into runs of at most ``words`` words (a longer sentence is a window of its
    own), each with the chunk's title and breadcrumb as :func:`passage_text` gives them. A
    chunk of ``words`` words or fewer has none: its own vector is its only window."""
    content = readable(content)
    if words <= 0 or len(content.split()) <= words:
        return []
    windows: list[str] = []
    run: list[str] = []
    size = 0
    for sentence in (s.strip() for s in _SENTENCE_END.split(content)):
        count = len(sentence.split())
        if not count:
            continue
        if run and size + count > words:
            windows.append(" ".join(run))
            run, size = [], 0
        run.append(sentence)
        size += count
    if run:
        windows.append(" ".join(run))
    if len(windows) < 2:
        return []
    return [passage_text(title, heading_path, window) for window in windows]
