"""`briefd version` in text, as a user pastes it into a bug report, with an index (or
settings) it cannot read: the versions, and why on stderr, as `--json` says it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from briefd.__about__ import __version__
from briefd.store.migrations import SCHEMA_VERSION
from tests.cli.test_cli import briefd

VERSIONS = (
    f"briefd {__version__} (index schema {SCHEMA_VERSION}, SQLite {sqlite3.sqlite_version})\n"
)


@pytest.mark.parametrize(
    ("args", "write"),
    [
        (("--db", "broken.db"), ("broken.db", b"\x00\x01 not an index \xff" * 50)),
        (("--db", "empty.db"), ("empty.db", b"")),
        (("--config", "briefd.yaml"), ("briefd.yaml", b"source: [\n")),
    ],
)
def test_version_says_why_it_cannot_read_the_index(
    tmp_path: Path, args: tuple[str, ...], write: tuple[str, bytes]
) -> None:
    """I7: with --json, an index (or settings) version cannot read was `index_error` and a
    warning on stderr; the text output printed the versions alone, as if there were no index
    at all: a user checking which commit a damaged or mistyped --db serves was told nothing."""
    (tmp_path / write[0]).write_bytes(write[1])
    said = briefd(*args, "version", "--json", cwd=tmp_path)
    why = json.loads(said.stdout)["index_error"]
    text = briefd(*args, "version", cwd=tmp_path)
    assert (text.returncode, text.stdout, text.stderr) == (0, VERSIONS, f"warning: {why}\n")
    assert said.stderr == text.stderr
