"""``default_scopes`` naming a scope the index lacks, on the command line (K1): ``briefd index``
says so (the full run and the answer when nothing changed, from the stamp too), as do
``briefd scopes`` and the search and bundle commands — through the real ``briefd`` process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_cli import briefd
from tests.service.test_default_scope_warnings import WARNING, knowledge


@pytest.fixture
def project(tmp_path: Path) -> Path:
    knowledge(tmp_path / "knowledge")
    (tmp_path / "briefd.yaml").write_text(
        "source: knowledge\ndefault_scopes: [domain, nope]\n", encoding="utf-8"
    )
    return tmp_path


def test_index_says_which_default_scope_is_missing_every_run(project: Path) -> None:
    first = briefd("index", cwd=project)
    assert first.returncode == 0, first.stderr
    assert f"  warning: {WARNING}" in first.stdout.splitlines()
    for _ in range(2):  # nothing changed: the fast path, then the stamp, answer
        again = briefd("index", cwd=project)
        assert again.returncode == 0, again.stderr
        assert "  0 changed" in again.stdout and f"  warning: {WARNING}" in again.stdout
    as_json = json.loads(briefd("index", "--json", cwd=project).stdout)
    assert as_json["warnings"] == [WARNING]
    (project / "briefd.yaml").write_text(
        "source: knowledge\ndefault_scopes: [domain]\n", encoding="utf-8"
    )
    fixed = briefd("index", cwd=project)
    assert fixed.returncode == 0 and "warning" not in fixed.stdout, fixed.stdout


def test_scopes_search_and_bundle_say_it_too(project: Path) -> None:
    assert briefd("index", cwd=project).returncode == 0
    scopes = briefd("scopes", cwd=project)
    assert scopes.stdout.splitlines()[-1] == f"warning: {WARNING}"
    listed = json.loads(briefd("scopes", "--json", cwd=project).stdout)
    assert listed["warnings"] == [WARNING]
    search = briefd("search", "partial refund", cwd=project)
    assert search.returncode == 0 and "domain/refunds.md" in search.stdout
    assert " ".join(search.stderr.split()) == f"warning: {WARNING}"
    found = json.loads(briefd("search", "partial refund", "--json", cwd=project).stdout)
    assert found["warnings"] == [WARNING] and found["scopes"] == ["domain"]
    bundle = briefd("bundle", "partial refund", cwd=project)
    assert bundle.returncode == 0 and f"warning: {WARNING}" in " ".join(bundle.stderr.split())
    compiled = json.loads(briefd("bundle", "partial refund", "--json", cwd=project).stdout)
    assert compiled["warnings"] == [WARNING]
