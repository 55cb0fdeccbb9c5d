"""A knowledge repository checked out sparsely (K3), through the real ``git sparse-checkout``
and ``briefd index``: the committed documents left out of the work tree are reported as such,
with the command that brings them in, instead of silently counted as deleted (or, in a sparse
clone, "found none; check the source path")."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from briefd.sources.layout import NOT_CHECKED_OUT
from tests.cli.test_cli import briefd


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _repository(tmp_path: Path) -> Path:
    origin = tmp_path / "origin"
    for rel, text in {
        "domain/refunds.md": "# Refunds\n\nWithin 30 days.\n",
        "conventions/naming.md": "# Naming\n\nAfter the domain.\n",
        "conventions/logging.md": "# Logging\n\nStructured.\n",
    }.items():
        (origin / rel).parent.mkdir(parents=True, exist_ok=True)
        (origin / rel).write_text(text, encoding="utf-8")
    _git(origin, "init", "-q", "-b", "main")
    _git(origin, "add", "-A")
    _git(origin, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "knowledge")
    return origin


def test_documents_outside_a_sparse_checkout_are_reported_not_silently_deleted(
    tmp_path: Path,
) -> None:
    origin = _repository(tmp_path)
    _git(tmp_path, "clone", "-q", str(origin), "kb")
    kb, db = tmp_path / "kb", str(tmp_path / "index.db")
    first = briefd("--db", db, "index", "--source", str(kb), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    _git(kb, "sparse-checkout", "set", "domain")
    (kb / "domain/refunds.md").unlink()  # deleted by hand: a deletion, not the sparse checkout
    (kb / "domain/retries.md").write_text("# Retries\n\nThree times.\n", encoding="utf-8")
    done = briefd("--db", db, "index", "--source", str(kb), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["documents"] == 1
    assert report["skipped"] == [
        {"path": "conventions/logging.md", "reason": NOT_CHECKED_OUT},
        {"path": "conventions/naming.md", "reason": NOT_CHECKED_OUT},
    ]
    assert NOT_CHECKED_OUT.startswith("committed, but outside this sparse checkout's folders")


def test_a_sparse_clone_without_documents_says_why(tmp_path: Path) -> None:
    origin = _repository(tmp_path)
    _git(tmp_path, "clone", "-q", "--sparse", str(origin), "kb")
    done = briefd("index", "--source", str(tmp_path / "kb"), cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        f"error: indexed 0 documents from {tmp_path / 'kb'}: its commit's documents (3) are "
        "outside this sparse checkout's folders (git sparse-checkout), not on disk; `git "
        "sparse-checkout add <folder>` (or `git sparse-checkout disable`) checks them out"
    )
