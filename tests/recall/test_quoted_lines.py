"""A section holding a code fence and a line of many '>' (a block quote nested 40 deep, which a
document's author writes) is recalled at once: finding what its text leaves open took time
exponential in the '>'s (22: 0.9 s, twice as long for each more), and every prompt it was
recalled for held the hook, or a thread of the server answering it. Real ``briefd index`` and
``briefd recall`` processes."""

from __future__ import annotations

from pathlib import Path

from tests.sources.test_hostile_gitignore import briefd


def test_a_deeply_quoted_line_holds_no_prompt(tmp_path: Path) -> None:
    root = tmp_path / "knowledge"
    (root / "domain").mkdir(parents=True)
    (root / "domain" / "retries.md").write_text(
        "# Retries\n\n## Payment retry backoff\n\n"
        "Payment retries back off exponentially.\n\n"
        "```\nretry(payment, backoff=2)\n```\n\n" + " >" * 40 + " payment retry backoff\n"
    )
    indexed = briefd(tmp_path, "index", "--source", str(root))
    assert indexed.returncode == 0, indexed.stderr

    recalled = briefd(tmp_path, "recall", "--no-server", "how does payment retry backoff work")
    assert recalled.returncode == 0, recalled.stderr
    assert "domain/retries.md" in recalled.stdout
    assert "retry(payment, backoff=2)" in recalled.stdout


def test_fences_and_html_blocks_open_as_the_expressions_found_them() -> None:
    """The container's markers taken possessively change no match (seeded fuzz)."""
    import random
    import re

    from briefd.text import _FENCE, _HTML

    container = r"(?P<prefix>(?:[ ]{0,3}(?:>[ ]?|(?:[-+*]|\d{1,9}[.)])[ ]{1,4}))*[ ]{0,3})"
    fence = re.compile(container + r"(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
    html = re.compile(container + r"<(?P<tag>!--|(?:pre|script|style|textarea)(?=[\s>]|$))", re.I)
    pieces = ["  ", " ", ">", "-", "*", "1", ".", ")", "```", "~~~", "<pre", "<!--", "x", "`"]
    rnd = random.Random(9)
    for _ in range(20_000):
        line = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 12)))
        for before, now in ((fence, _FENCE), (html, _HTML)):
            was, found = before.match(line), now.match(line)
            assert (was and (was.span(), was.groupdict())) == (
                found and (found.span(), found.groupdict())
            ), line
