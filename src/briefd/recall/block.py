"""The ``<knowledge>`` block a recall injects: each section under its attribution line. The
engine renders it into the result and packs sections against its size; front ends print it.
Works on the JSON form of a section (what the server sends).

A recall's token budget is the budget of this whole block, as the agent receives it: the frame
(tags and intro) and every attribution line count, not only the sections' text (whose cl100k
tokens the index holds). Two ways to count the rest, by who answers:

* a hybrid answer (a server, the daemon, or a process that loaded the model) counts the lines,
  the frame and a cut section's head with the exact counter (:func:`briefd.tokens.count_tokens`,
  ``diagnostics.estimator``): its ~0.2 s and ~26 MB are paid once beside the model's, and
  each line costs ~0.02 ms;
* a BM25 answer in the hook's own process (the first prompt, ~70 ms in all) does not load the
  tokenizer: the lines are bounded from above, piece by piece as cl100k splits text: a run of
  letters as one token per three UTF-8 bytes, a run of digits as one per three digits, any
  other character as one (two beyond ASCII); a test checks the bound against the real
  tokenizer on every section of both example knowledge bases. The bound is loose (an English
  source line costs it ~1.5× its real tokens): a weak first prompt's one short section (see
  :func:`briefd.recall.ranking.by_chance`) is cut shorter for it, never longer.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from briefd.text import closed, open_block

Count = Callable[[str], int]  # the exact cl100k tokens of a text (None where: the bound)

OPEN = "<knowledge>"
CLOSE = "</knowledge>"
ESCAPED_CLOSE = "<\\/knowledge>"  # the closing tag inside a section: the block goes on past it
# the closing tag as a tag parser reads it, in any case and with spaces: </KNOWLEDGE >
_CLOSE_TAG = re.compile(r"</knowledge\s*>", re.IGNORECASE)
INTRO = (
    "Sections of the team's knowledge base (briefd) that match this prompt, best match "
    "first. Each starts with its source: path · heading · last updated · chunk id."
)
# added to INTRO when the block has a related section (R6) / pointers (a weak match, see
# briefd.recall.pack.brief): the intro explains only what the block holds
RELATED_NOTE = " A section marked related is linked from one that matches."
POINTER_NOTE = " A source line marked not shown is another candidate, its text left out."
POINTER_NOTE_TOKENS = 16  # cl100k counts 15 (a test pins it to the tokenizer)
TRUNCATED = "[… section truncated to fit the recall budget]"
POINTER = "not shown"  # marks a pointer: the source line of a possible match, without its text
# OPEN, INTRO, RELATED_NOTE and CLOSE with their line breaks, in cl100k tokens (a test pins it
# to the tokenizer)
FRAME_TOKENS = 56
SEPARATOR_TOKENS = 2  # the blank line between sections and the break after the attribution


def attribution(section: Mapping[str, Any]) -> str:
    if section.get("pointer"):  # the section's place only: a line the agent can follow
        heading = _one_line((section["heading_path"] or [section["title"]])[-1])
        return (
            f"[source: {section['doc_path']} · {heading} · chunk {section['chunk_id']} · {POINTER}]"
        )
    crumb = " › ".join(map(_one_line, [section["title"], *section["heading_path"]]))
    updated = str(section.get("updated_at") or "unknown")[:10]
    related = (
        f" · related: linked from chunk {section['related_to']}"
        if section.get("related_to")
        else ""
    )
    if section.get("superseded_by"):
        related += f" · superseded by {', '.join(section['superseded_by'])}"
    return (
        f"[source: {section['doc_path']} · {crumb} · updated {updated} · "
        f"chunk {section['chunk_id']}{related}]"
    )


# what opens a block that runs to a closing string: a code fence, an HTML comment, <pre>…
_OPENER = re.compile(r"```|~~~|<(?:!--|pre|script|style|textarea)", re.IGNORECASE)
_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*\n)+")
# a first line that must not follow the source line directly: indented code (it would join the
# line's paragraph) or a line of - or = alone (it would make the source line a setext heading)
_APART = re.compile(r"(?: {4}|[ ]{0,3}\t|[ ]{0,3}(?:-+|=+)[ \t]*(?:\n|$))")


def _one_line(text: str) -> str:
    """A title written over several lines (``title: |``) on the source line: its next line
    would be read as the section's text, or as a heading (``# …``) of its own."""
    return " ".join(text.split())


_PIECES = re.compile(r"([^\W\d_]+)|(\d+)|(\S)")


def bound_tokens(text: str) -> int:
    """An upper bound of the cl100k tokens of a short line, without the tokenizer."""
    total = 0
    for letters, digits, other in _PIECES.findall(text):
        if letters:
            total += -(-len(letters.encode("utf-8")) // 3)
        elif digits:
            total += -(-len(digits) // 3)
        else:
            total += 1 if other.isascii() else 2
    return total


def attribution_tokens(section: Mapping[str, Any], count: Count | None = None) -> int:
    """The cl100k tokens of the section's attribution line and its separators: exact with
    ``count``, else at least as many."""
    line = attribution(section)
    return (count or bound_tokens)(line) + SEPARATOR_TOKENS


def cost(section: Mapping[str, Any], count: Count | None = None) -> int:
    """What the section adds to the block: its own tokens, its attribution's and what writing
    it adds (:func:`added_tokens`)."""
    return (
        int(section["tokens"]) + attribution_tokens(section, count) + added_tokens(section, count)
    )


def added_tokens(section: Mapping[str, Any], count: Count | None = None) -> int:
    """The tokens :func:`body` adds to the section's text as the index counted it: the line
    closing a block it leaves open, the blank line before indented code (exact with ``count``,
    else at least as many); 0 for almost every section."""
    text = trimmed(section["content"])
    found = open_block(text) if _OPENER.search(text) else None
    closer = (count or bound_tokens)(found[1]) + 1 if found else 0
    escaped = len(_CLOSE_TAG.findall(text)) * (count or bound_tokens)(ESCAPED_CLOSE)  # ≥ added
    return closer + escaped + (1 if _APART.match(text) else 0)


def frame_tokens(pointers: bool, count: Count | None = None) -> int:
    """The tokens of the largest frame a block can have (tags, intro with the related note,
    the pointer note when there are pointers): exact with ``count``, else the pinned
    constants (at least as many)."""
    if count is not None:
        return _counted(count, _frame(True, pointers))
    return FRAME_TOKENS + (POINTER_NOTE_TOKENS if pointers else 0)


def block_tokens(sections: Sequence[Mapping[str, Any]], count: Count | None = None) -> int:
    """The cl100k tokens of the block of ``sections`` (0 when empty): with ``count`` the
    rendered block's, exactly; else at least as many, from the sections' text as the index
    counted it, the bounded lines and the pinned frame."""
    if not sections:
        return 0
    if count is not None:
        return count(knowledge_block(sections))
    pointers = any(s.get("pointer") for s in sections)
    return frame_tokens(pointers) + sum(cost(s) for s in sections)


def section_text(section: Mapping[str, Any]) -> str:
    text = body(section)
    return f"{attribution(section)}\n{text}" if text else attribution(section)


def body(section: Mapping[str, Any]) -> str:
    """The section's text as the block writes it: a code fence or HTML comment its document
    leaves open closed (:func:`briefd.text.closed`), or the sections after it and the closing
    tag would be read as code or hidden; the closing tag itself escaped where a section holds
    it; its first line's indentation kept, apart from the source line when it makes indented
    code (a paragraph's next line would continue it) or a line of ``-``/``=`` alone (it would
    make the source line a heading)."""
    text = trimmed(section["content"])
    if _OPENER.search(text):
        text = closed(text)
    text = _CLOSE_TAG.sub(ESCAPED_CLOSE, text)  # a document about the hook: its tag ends nothing
    return f"\n{text}" if _APART.match(text) else text


def trimmed(content: str) -> str:
    """``content`` without the blank lines around it, its first line's indentation kept."""
    return _LEADING_BLANK_LINES.sub("", content.rstrip())


def knowledge_block(sections: Sequence[Mapping[str, Any]]) -> str:
    """The block the agent reads; empty when there is nothing to say."""
    if not sections:
        return ""
    related = any(s.get("related_to") for s in sections)
    intro = _intro(related, any(s.get("pointer") for s in sections))
    parts = [OPEN, intro, "", *("\n\n".join(section_text(s) for s in sections).split("\n"))]
    return "\n".join([*parts, CLOSE]) + "\n"


def _intro(related: bool, pointers: bool) -> str:
    return INTRO + (RELATED_NOTE if related else "") + (POINTER_NOTE if pointers else "")


@functools.lru_cache(maxsize=16)
def _counted(count: Count, text: str) -> int:
    """``count(text)`` for the few fixed texts counted on every answer (the frames)."""
    return count(text)


def _frame(related: bool, pointers: bool) -> str:
    """The block's text without sections."""
    return f"{OPEN}\n{_intro(related, pointers)}\n\n\n{CLOSE}\n"


def block_size(sections: Sequence[Mapping[str, Any]]) -> int:
    return len(knowledge_block(sections))
