"""A messy real knowledge repository through the real ``briefd index`` process: files as
editors on other systems write them (old Mac line endings, byte order marks…) are indexed,
or skipped with a reason, and never stop the run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

GOOD = b"# Good\n\n## Refunds\n\nThe refund window is thirty days.\n"


def briefd(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    env.update(BRIEFD_DB=str(tmp_path / "index.db"), BRIEFD_EMBEDDINGS__ENABLED="false")
    return subprocess.run(
        [sys.executable, "-m", "briefd", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def source_with(tmp_path: Path, files: dict[str, bytes]) -> Path:
    root = tmp_path / "knowledge"
    for rel, data in {"domain/good.md": GOOD, **files}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def search(tmp_path: Path, query: str) -> list[dict[str, object]]:
    done = briefd(tmp_path, "search", query, "--mode", "bm25", "--json")
    assert done.returncode == 0, done.stderr
    hits: list[dict[str, object]] = json.loads(done.stdout)["hits"]
    return hits


def test_old_mac_line_endings_are_lines(tmp_path: Path) -> None:
    """A lone CR ends a line for the Markdown parser but not for the chunker's line split: the
    run died with an IndexError traceback and indexed nothing."""
    lone_cr = b"---\rtitle: Ledger rules\r---\r# Ledger\r\r## Alpha\r\rPosting alpha.\r"
    source = source_with(tmp_path, {"domain/ledger.md": lone_cr + b"\r## Beta\r\rPosting beta.\r"})
    done = briefd(tmp_path, "index", "--source", str(source))
    assert (done.returncode, done.stderr) == (0, "")
    hits = search(tmp_path, "posting beta")
    top = hits[0]
    assert (top["doc_path"], top["title"], top["heading_path"]) == (
        "domain/ledger.md", "Ledger rules", ["Beta"]
    )  # fmt: skip
    assert (top["start_line"], top["end_line"], top["content"]) == (10, 12, "Posting beta.")
