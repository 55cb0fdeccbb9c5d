"""A folder of the knowledge source that briefd cannot read (permissions): real ``briefd index``
processes without the right to read it. Root reads everything, so as root the child runs
without the capabilities that bypass file permissions (``setpriv``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE

AS_ROOT = os.geteuid() == 0
NO_BYPASS = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner"]

pytestmark = pytest.mark.skipif(
    AS_ROOT and shutil.which("setpriv") is None, reason="root without setpriv reads everything"
)


def briefd(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    env.update(BRIEFD_DB=str(tmp_path / "index.db"), BRIEFD_EMBEDDINGS__ENABLED="false")
    command = [sys.executable, "-m", "briefd", *args]
    return subprocess.run(
        [*NO_BYPASS, *command] if AS_ROOT else command,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def indexed(tmp_path: Path) -> set[str]:
    listed = json.loads(briefd(tmp_path, "docs", "--scopes", "all", "--json").stdout)
    return {d["path"] for d in listed["documents"]}


def test_a_folder_that_became_unreadable_keeps_its_documents_and_says_so(
    tmp_path: Path,
) -> None:
    """os.walk skips a folder it cannot list without a word: its documents were dropped from
    the index as deleted, silently, where an unreadable file's stay served with a warning."""
    source = tmp_path / "knowledge"
    shutil.copytree(EXAMPLE, source)
    ledger = source / "projects" / "ledger"
    first = briefd(tmp_path, "index", "--source", str(source))
    assert first.returncode == 0, first.stderr
    before = indexed(tmp_path)
    assert "projects/ledger/runbook.md" in before

    ledger.chmod(0)
    try:
        second = briefd(tmp_path, "index", "--source", str(source))
        after = indexed(tmp_path)
    finally:
        ledger.chmod(0o755)
    assert second.returncode == 0, second.stderr
    assert after == before
    assert ", 0 deleted, " in second.stdout
    assert (
        "  skipped projects/ledger/: cannot read this folder (Permission denied); give briefd "
        "read access to it; the 6 documents indexed before under it are kept"
    ) in second.stdout.splitlines()

    third = briefd(tmp_path, "index", "--source", str(source))
    assert third.returncode == 0, third.stderr
    assert "projects/ledger/" not in third.stdout
    assert indexed(tmp_path) == before
