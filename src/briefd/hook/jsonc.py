"""JSON with comments (``//``, ``/* */``) and trailing commas, as VS Code reads its
``.vscode/mcp.json``: :func:`strip` turns it into plain JSON (comments become spaces, so
error positions still point into the file); nothing inside a string is touched."""

from __future__ import annotations

import re

# a string, a comment, or a comma with only whitespace/comments before a closing bracket
TOKEN = re.compile(
    r'"(?:[^"\\]|\\.)*"|//[^\n]*|/\*.*?\*/|,(?=(?:\s|//[^\n]*|/\*.*?\*/)*[}\]])', re.DOTALL
)


def strip(text: str) -> str:
    """``text`` as plain JSON: comments blanked, trailing commas dropped (as spaces)."""
    return TOKEN.sub(_blank, text)


def commented(text: str) -> bool:
    """Whether ``text`` has comments (which a rewrite through :mod:`json` would lose)."""
    return any(m.group().startswith("/") for m in TOKEN.finditer(text))


def _blank(match: re.Match[str]) -> str:
    token = match.group()
    if token.startswith('"'):
        return token
    return re.sub(r"[^\n]", " ", token)
