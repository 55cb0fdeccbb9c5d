"""The ``<knowledge>`` block a recall injects: each section under its attribution line. The
engine renders it into the result and packs sections against its size; front ends print it.
Works on the JSON form of a section (what the server sends).

A recall's token budget is the budget of this whole block, as the agent receives it: the frame
(tags and intro) and every attribution line count, not only the sections' text. The hook does
not load the tokenizer (it would cost it ~0.15 s), so the lines are bounded from above, piece
by piece as cl100k splits text: a run of letters as one token per three UTF-8 bytes, a run of
digits as one per three digits, any other character as one (two beyond ASCII); a test
checks the bound against the real tokenizer on every section of both example knowledge
bases."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

OPEN = "<knowledge>"
CLOSE = "</knowledge>"
INTRO = (
    "Sections of the team's knowledge base (briefd) that match this prompt, best match "
    "first. Each starts with its source: path · heading · last updated · chunk id; a section "
    "marked related is linked from one that matches."
)
# added to INTRO when the block has pointers (a weak match, see briefd.recall.pack.brief)
POINTER_NOTE = " A source line marked not shown is another candidate, its text left out."
POINTER_NOTE_TOKENS = 16  # cl100k counts 15 (a test pins it to the tokenizer)
TRUNCATED = "[… section truncated to fit the recall budget]"
POINTER = "not shown"  # marks a pointer: the source line of a possible match, without its text
# OPEN, INTRO and CLOSE with their line breaks, in cl100k tokens (a test pins it to the tokenizer)
FRAME_TOKENS = 56
SEPARATOR_TOKENS = 2  # the blank line between sections and the break after the attribution


def attribution(section: Mapping[str, Any]) -> str:
    if section.get("pointer"):  # the section's place only: a line the agent can follow
        heading = (section["heading_path"] or [section["title"]])[-1]
        return (
            f"[source: {section['doc_path']} · {heading} · chunk {section['chunk_id']} · {POINTER}]"
        )
    crumb = " › ".join([section["title"], *section["heading_path"]])
    updated = str(section.get("updated_at") or "unknown")[:10]
    related = (
        f" · related: linked from chunk {section['related_to']}"
        if section.get("related_to")
        else ""
    )
    return (
        f"[source: {section['doc_path']} · {crumb} · updated {updated} · "
        f"chunk {section['chunk_id']}{related}]"
    )


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


def attribution_tokens(section: Mapping[str, Any]) -> int:
    """At least the cl100k tokens of the section's attribution line and its separators."""
    return bound_tokens(attribution(section)) + SEPARATOR_TOKENS


def cost(section: Mapping[str, Any]) -> int:
    """What the section adds to the block: its own tokens and its attribution's."""
    return int(section["tokens"]) + attribution_tokens(section)


def block_tokens(sections: Sequence[Mapping[str, Any]]) -> int:
    """At least the cl100k tokens of the block of ``sections`` (0 when empty)."""
    if not sections:
        return 0
    note = POINTER_NOTE_TOKENS if any(s.get("pointer") for s in sections) else 0
    return FRAME_TOKENS + note + sum(cost(s) for s in sections)


def section_text(section: Mapping[str, Any]) -> str:
    body = section["content"].strip()
    return f"{attribution(section)}\n{body}" if body else attribution(section)


def knowledge_block(sections: Sequence[Mapping[str, Any]]) -> str:
    """The block the agent reads; empty when there is nothing to say."""
    if not sections:
        return ""
    intro = INTRO + POINTER_NOTE if any(s.get("pointer") for s in sections) else INTRO
    parts = [OPEN, intro, "", *("\n\n".join(section_text(s) for s in sections).split("\n"))]
    return "\n".join([*parts, CLOSE]) + "\n"


def block_size(sections: Sequence[Mapping[str, Any]]) -> int:
    return len(knowledge_block(sections))
