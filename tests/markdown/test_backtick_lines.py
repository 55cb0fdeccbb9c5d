"""A line of many backticks in a document (its author writes it) is read at once: finding the
code spans a link cannot be in took time cubic in the run (2,000 backticks: 85 s), and every
index run of the knowledge stalled on it. Real ``briefd index`` and ``briefd doc`` processes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.sources.test_hostile_gitignore import briefd


def test_a_line_of_backticks_holds_no_index_run(tmp_path: Path) -> None:
    root = tmp_path / "knowledge"
    (root / "domain").mkdir(parents=True)
    (root / "domain" / "glossary.md").write_text("# Glossary\n\nTerms.\n")
    (root / "domain" / "ticks.md").write_text(
        "# Ticks\n\n"
        + "Ticks: "
        + "`" * 20_000
        + "\n\nSee [the glossary](glossary.md), not `[code](missing.md)` nor ``[[a `` b]]``.\n"
    )

    indexed = briefd(tmp_path, "index", "--source", str(root))
    assert indexed.returncode == 0, indexed.stderr
    shown = briefd(tmp_path, "doc", "domain/ticks.md", "--json")
    assert shown.returncode == 0, shown.stderr
    links = [link["target_path"] for link in json.loads(shown.stdout)["links"]]
    assert links == ["domain/glossary.md"]


def test_code_spans_are_found_as_the_expression_found_them() -> None:
    """The spans blanked are the ones ``re.sub`` found with the expression used before."""
    import random
    import re

    from briefd.markdown.links import _spans_blanked

    before = re.compile(r"(`+)(?:(?!\1).)+?\1")
    rnd = random.Random(5)
    for _ in range(20_000):
        line = "".join(rnd.choice("``a b") for _ in range(rnd.randint(0, 16)))
        assert _spans_blanked(line) == before.sub(lambda m: " " * len(m.group(0)), line), line
