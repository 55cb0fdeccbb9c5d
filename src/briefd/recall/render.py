"""Rendering a recall: the ``<knowledge>`` block for the agent, a ranked list for people, the
hook JSON. Works on the JSON form of a result (what the server sends), so the hook can print
a server's answer without importing anything beyond the standard library."""

from __future__ import annotations

import json

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs the hook start-up
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

OPEN = "<knowledge>"
CLOSE = "</knowledge>"
INTRO = (
    "Sections of the team's knowledge base (briefd) that match this prompt, best match "
    "first. Each starts with its source: path · heading · last updated · chunk id."
)
TRUNCATED = "[… section truncated to fit the recall budget]"


def attribution(section: Mapping[str, Any]) -> str:
    crumb = " › ".join([section["title"], *section["heading_path"]])
    updated = str(section.get("updated_at") or "unknown")[:10]
    return (
        f"[source: {section['doc_path']} · {crumb} · updated {updated} · "
        f"chunk {section['chunk_id']}]"
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


def hook_output(result: Mapping[str, Any]) -> dict[str, Any]:
    """Claude Code's ``UserPromptSubmit`` JSON output; ``{}`` adds nothing."""
    block = str(result.get("knowledge") or "")
    if not block:
        return {}
    return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": block}}


def terminal(result: Mapping[str, Any]) -> str:
    """A readable ranked list with scores, for a person trying the hook in a terminal."""
    sections = result.get("sections") or []
    head = (
        f"briefd recall · {len(sections)} section(s) · {result.get('tokens', 0)} tokens of "
        f"{result.get('budget', 0)} · {result.get('mode')} · via {result.get('via', '?')} · "
        f"{result.get('took_ms', 0):.1f} ms"
    )
    lines = [head]
    if not sections:
        lines.append(f"Nothing to inject: {result.get('reason') or 'no matching sections'}.")
    for rank, section in enumerate(sections, 1):
        crumb = " › ".join([section["title"], *section["heading_path"]])
        where = f"{section['doc_path']}:{section['start_line']}-{section['end_line']}"
        preview = " ".join(section["content"].split())[:160]
        lines += [
            f"{rank:>2}. {section['score']:.4f}  {where}  ({section['tokens']} tokens)",
            f"    {crumb}",
            f"    {preview}",
        ]
    if result.get("already_injected"):
        lines.append(f"({result['already_injected']} matching section(s) already injected)")
    return "\n".join(lines) + "\n"


def to_json(result: Mapping[str, Any]) -> str:
    return json.dumps(result, ensure_ascii=False, indent=2) + "\n"
