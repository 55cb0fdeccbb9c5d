"""Escaped brackets are text (K5): ``\\[RFC 7807](problem.md)`` in prose that shows Markdown
syntax, or ``[1\\]`` in a footnote-like bracket, is no link in CommonMark (GitHub renders the
brackets and the parentheses as written), so ``briefd links --check`` must not fail on it; an
escaped backslash before a link leaves the link a link."""

from __future__ import annotations

import json
from pathlib import Path

from briefd.markdown.document import parse_document
from briefd.tokens import count_tokens
from tests.cli.test_cli import briefd
from tests.cli.test_links_cli import _indexed

_A = r"""# A

Write \[the text](target.md) to link a document, or \[\[wikilink]] in Obsidian;
a bracket closed by hand [like this\](not-a-file.md) stays text too.
A backslash, then a link: C:\\[fees](fees.md), and [fees \[EUR\]](fees.md).
"""


def test_escaped_brackets_are_no_links(tmp_path: Path) -> None:
    doc = parse_document("domain/a.md", _A, "domain", "h", count_tokens)
    assert [(ln.target, ln.display, ln.line) for ln in doc.links] == [
        ("fees.md", "fees", 5),
        ("fees.md", r"fees \[EUR\]", 5),
    ]
    cwd, db = _indexed(tmp_path, {"domain/a.md": _A, "domain/fees.md": "# Fees\n\n[[a]]\n"})
    checked = briefd("--db", db, "links", "--check", "--json", cwd=cwd)
    assert checked.returncode == 0, checked.stdout
    assert json.loads(checked.stdout)["broken"] == []
