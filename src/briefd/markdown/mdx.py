"""MDX (Docusaurus, Nextra…): what a reader of the page never sees is out of its text.

An ``.mdx`` file's ESM (``import Tabs from '@theme/Tabs';``, ``export const x = …``: from a line
that starts with ``import`` or ``export`` to the next blank line, as MDX reads them) and its
comments (``{/* … */}``) are code for the site's build, not the page. Indexed as text they were
a section of their own (found by searching "import theme tabs") or the head of the first one.
They are blanked with spaces, every line break kept, so line ranges stay the file's.
"""

from __future__ import annotations

import re

MDX_SUFFIX = ".mdx"
_ESM = re.compile(r"^(?:import|export)(?=[\s{*])")
_HEADING = re.compile(r"^#{1,6}(?:[ \t]|$)")  # ends an ESM block its author left open
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_COMMENT = re.compile(r"\{[ \t\n]*/\*.*?\*/[ \t\n]*\}", re.DOTALL)


def is_mdx(path: str) -> bool:
    return path.lower().endswith(MDX_SUFFIX)


def without_mdx_code(text: str, first_line: int = 1) -> str:
    """``text`` (an MDX file, line breaks ``\\n``) with its ESM blocks and ``{/* */}``
    comments as spaces, outside fenced code, from file line ``first_line`` on (the front
    matter's lines are before it)."""
    lines = text.split("\n")
    fence: str | None = None
    esm = False
    prose: list[int] = []  # lines outside fences and ESM, where a comment may be
    for number, line in enumerate(lines[first_line - 1 :], start=first_line - 1):
        opened = _FENCE.match(line)
        if fence is not None:
            fence = None if _closes(opened, fence, line) else fence
            continue
        if (esm and not _HEADING.match(line)) or _ESM.match(line):
            esm = bool(line.strip())
            lines[number] = " " * len(line)
            continue
        if opened:
            fence = opened.group(1)
            continue
        prose.append(number)
    for start, end in _runs(prose):
        block = "\n".join(lines[start:end])
        if "/*" in block:
            block = _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), block)
            lines[start:end] = block.split("\n")
    return "\n".join(lines)


def _closes(opened: re.Match[str] | None, fence: str, line: str) -> bool:
    """Whether ``line`` (``opened``: its fence match) closes the code block ``fence`` opened."""
    if opened is None or opened.group(1)[0] != fence[0] or len(opened.group(1)) < len(fence):
        return False
    return not line[opened.end() :].strip()


def _runs(numbers: list[int]) -> list[tuple[int, int]]:
    """Consecutive ``numbers`` as (first, last + 1) ranges."""
    runs: list[tuple[int, int]] = []
    for number in numbers:
        if runs and runs[-1][1] == number:
            runs[-1] = (runs[-1][0], number + 1)
        else:
            runs.append((number, number + 1))
    return runs
