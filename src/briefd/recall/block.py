"""The ``<knowledge>`` block a recall injects: each section under its attribution line. The
engine renders it into the result and packs sections against its size; front ends print it.
Works on the JSON form of a section (what the server sends)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

OPEN = "<knowledge>"
CLOSE = "</knowledge>"
INTRO = (
    "Sections of the team's knowledge base (briefd) that match this prompt, best match "
    "first. Each starts with its source: path · heading · last updated · chunk id; a section "
    "marked related is linked from one that matches."
)
TRUNCATED = "[… section truncated to fit the recall budget]"


def attribution(section: Mapping[str, Any]) -> str:
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


def section_text(section: Mapping[str, Any]) -> str:
    body = section["content"].strip()
    return f"{attribution(section)}\n{body}"


def knowledge_block(sections: Sequence[Mapping[str, Any]]) -> str:
    """The block the agent reads; empty when there is nothing to say."""
    if not sections:
        return ""
    parts = [OPEN, INTRO, "", *("\n\n".join(section_text(s) for s in sections).split("\n"))]
    return "\n".join([*parts, CLOSE]) + "\n"


def block_size(sections: Sequence[Mapping[str, Any]]) -> int:
    return len(knowledge_block(sections))
