"""An index has one knowledge source: a second one is refused, never silently dropped."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_cli import briefd
from tests.conftest import EXAMPLE

SEVERAL = (
    "an index has one knowledge source: put the folders in one folder and give it "
    "(`--source DIR`), or give each its own index (`briefd --db FILE …`)"
)


def test_index_given_two_sources_refuses_instead_of_indexing_the_last(tmp_path: Path) -> None:
    """`briefd index --source A --source B` indexed B alone and said "Indexed B" (click keeps
    an option's last value); with B's index unchanged, the stamp said it without click."""
    first = tmp_path / "first"
    (first / "domain").mkdir(parents=True)
    (first / "domain" / "a.md").write_text("# A\n\nAlpha.\n", "utf-8")
    assert briefd("index", "--source", str(EXAMPLE), cwd=tmp_path).returncode == 0
    result = briefd("index", "--source", str(first), f"--source={EXAMPLE}", cwd=tmp_path)
    assert result.stdout == ""
    assert result.stderr == f"error: --source is given 2 times; {SEVERAL}; see `briefd index -h`\n"
    assert result.returncode == 2


@pytest.mark.parametrize("command", ["serve", "mcp", "eval", "tune"])
def test_every_command_taking_a_source_refuses_two(tmp_path: Path, command: str) -> None:
    result = briefd(command, "--source", "a", "--source", "b", cwd=tmp_path)
    assert result.stderr == (
        f"error: --source is given 2 times; {SEVERAL}; see `briefd {command} -h`\n"
    )
    assert result.returncode == 2


def test_a_list_of_sources_in_the_settings_file_says_one_is_supported(tmp_path: Path) -> None:
    (tmp_path / "briefd.yaml").write_text("source: [a, b]\n", "utf-8")
    result = briefd("index", cwd=tmp_path)
    assert result.stderr == (
        "error: briefd.yaml: source: expected one folder or git URL, got ['a', 'b']; an index "
        "has one knowledge source: put the folders in one folder and name it, or give each its "
        "own settings file and index (`db:`)\n"
    )
    assert result.returncode == 1
