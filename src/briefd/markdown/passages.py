"""The text a chunk is embedded as, and its hash (the key its vector is stored under); the
windows a long chunk is also embedded as (R2): a section is as close to a query as its closest
part, and one vector for a whole section blurs the part a question is about."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

# a sentence ends at . ! ? (then a space) or at a line break: Markdown lists, tables and
# headings end their lines without punctuation
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def passage_text(title: str, heading_path: Sequence[str], content: str) -> str:
    """Title and breadcrumb give a short section the context its body lacks."""
    head = " > ".join((title, *heading_path)) if title else " > ".join(heading_path)
    return f"{head}\n{content}" if head else content


def passage_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def passage_windows(title: str, heading_path: Sequence[str], content: str, words: int) -> list[str]:
    """The windows a chunk longer than ``words`` words is also embedded as: its sentences in
    order, packed into runs of at most ``words`` words (a longer sentence is a window of its
    own), each with the chunk's title and breadcrumb as :func:`passage_text` gives them. A
    chunk of ``words`` words or fewer has none: its own vector is its only window."""
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
