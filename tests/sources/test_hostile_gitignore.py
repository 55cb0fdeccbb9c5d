"""A ``.gitignore`` of the knowledge holds a glob written to make Python's backtracking regular
expressions take exponential time, beside a file named to trigger it (any author of the
knowledge can commit both): ``briefd index`` still ends at once, and the globs still ignore
what git ignores. Real ``briefd index`` and ``briefd docs`` processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def briefd(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    env.update(BRIEFD_DB=str(tmp_path / "index.db"), BRIEFD_EMBEDDINGS__ENABLED="false")
    return subprocess.run(
        [sys.executable, "-m", "briefd", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,  # without linear matching: hours
        cwd=tmp_path,
    )


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

    indexed = briefd(tmp_path, "index", "--source", str(root))
    assert indexed.returncode == 0, indexed.stderr
    listed = briefd(tmp_path, "docs", "--json")
    paths = [d["path"] for d in json.loads(listed.stdout)["documents"]]
    assert paths == ["domain/" + "a" * 40 + ".md"]
