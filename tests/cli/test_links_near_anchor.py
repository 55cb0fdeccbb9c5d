"""An unknown anchor names the heading it most likely meant (K5): a heading renamed a little
("Refund window" → "Refund windows") leaves every link to its old slug unknown, and the report
said only that the document has no such heading, leaving the author to read its headings and
work out the new slug. It now says "did you mean", in the form the link writes (a slug in a
Markdown link, the heading's text in a wikilink, GitHub's numbered slug of a repeated
heading), and nothing when no heading is alike."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli import briefd
from tests.cli.test_links_cli import _indexed

REFUNDS = "# Refunds\n\n## Refund windows\n\nx\n\n## Example\n\na\n\n## Example\n\nb\n"


def test_an_unknown_anchor_names_the_heading_it_most_likely_meant(tmp_path: Path) -> None:
    cwd, db = _indexed(
        tmp_path,
        {
            "domain/a.md": (
                "# A\n\n[window](refunds.md#refund-window), [[refunds#Refund window]],\n"
                "[third](refunds.md#example-2) and [other](refunds.md#chargeback-fees).\n"
            ),
            "domain/refunds.md": REFUNDS,
        },
    )
    found = briefd("--db", db, "links", "--json", cwd=cwd)
    details = [r["detail"] for r in json.loads(found.stdout)["unknown_anchors"]]
    assert details == [
        "domain/refunds.md has no heading or anchor '#refund-window' "
        "(did you mean '#refund-windows'?)",
        "domain/refunds.md has no heading or anchor '#Refund window' "
        "(did you mean '#Refund windows'?)",
        "domain/refunds.md has no heading or anchor '#example-2' (did you mean '#example-1'?)",
        "domain/refunds.md has no heading or anchor '#chargeback-fees'",
    ]
