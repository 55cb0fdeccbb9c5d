"""A ``.gitignore`` of the knowledge holds a glob written to make Python's backtracking regular
expressions take exponential time, beside a file named to trigger it (any author of the
knowledge can commit both): ``briefd index`` still ends at once, and the globs still ignore
what git ignores. Real ``briefd index`` and ``briefd docs`` processes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.sources.test_ignored import briefd


def test_an_ignore_glob_made_to_backtrack_holds_no_index_run(tmp_path: Path) -> None:
    root = tmp_path / "knowledge"
    (root / "domain").mkdir(parents=True)
    hostile = "*a" * 12 + "*b"
    secret = "x" * 30 + "-draft-" + "y" * 30 + "-secret.md"
    (root / ".gitignore").write_text(f"{hostile}\n**/*draft*secret*.md\n")
    (root / "domain" / ("a" * 40 + ".md")).write_text("# Many a\n\nRetry with a backoff.\n")
    (root / "domain" / secret).write_text("# Secret\n\nUnannounced pricing.\n")
    ignored = root / "domain" / ("a" * 20 + "b")  # a folder the hostile glob does match
    ignored.mkdir()
    (ignored / "x.md").write_text("# Ignored\n\nIgnored by the glob.\n")

    indexed = briefd(tmp_path, "index", "--source", str(root), timeout=30)  # else: hours
    assert indexed.returncode == 0, indexed.stderr
    listed = briefd(tmp_path, "docs", "--json", timeout=30)
    paths = [d["path"] for d in json.loads(listed.stdout)["documents"]]
    assert paths == ["domain/" + "a" * 40 + ".md"]
