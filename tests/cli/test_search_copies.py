"""``briefd search`` over several scopes (R1): a section copied into each is listed once."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli import briefd

RULE = "# Retry policy\n\nSoft declines are retried three times with exponential backoff.\n"


def test_a_section_copied_into_several_scopes_is_listed_once_naming_its_copies(
    tmp_path: Path,
) -> None:
    """A domain rule pasted into two projects' folders came back three times, as hits 1-3
    (each copy taking a place another section could have had), where a bundle keeps one.
    The table lists it once, at its best rank, naming the copies; --json keeps every hit."""
    source = tmp_path / "knowledge"
    for folder in ("domain", "projects/a", "projects/b"):
        (source / folder).mkdir(parents=True)
        (source / folder / "retry.md").write_text(RULE, "utf-8")
    (source / "domain" / "backoff.md").write_text(
        "# Backoff\n\nSoft declines back off exponentially: 1 s, 4 s, 16 s.\n", "utf-8"
    )
    assert briefd("index", "--source", str(source), cwd=tmp_path).returncode == 0
    ask = ("search", "soft declines retried exponential backoff", "--scopes", "all")
    shown = briefd(*ask, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    table = shown.stdout
    assert table.count("Soft declines are retried three times") == 1, table
    assert "domain/backoff.md:1-3" in table  # the next section takes the second place
    assert " 2 │" in table and " 3 │" not in table
    copies = [line for line in table.splitlines() if "also in" in line or "(the same" in line]
    named = " ".join(" ".join(line.strip("│ ").split()) for line in copies)
    assert named.startswith("also in ") and named.endswith("(the same text)"), table
    assert sum(p in named for p in ("domain/", "projects/a/", "projects/b/")) == 2, named
    assert "2 hits + 2 copies named under the hit they copy in " in table
    data = json.loads(briefd(*ask, "--json", cwd=tmp_path).stdout)
    assert len(data["hits"]) == 4  # the ranking and --json keep every copy
    alone = briefd("search", "soft declines retried", "--scopes", "projects/a", cwd=tmp_path)
    assert "also in" not in alone.stdout and "1 hit in " in alone.stdout
