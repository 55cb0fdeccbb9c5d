"""``briefd bundle`` as a real process: bytes on stdout, summary on stderr, JSON, --base."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_cli import briefd
from tests.conftest import EXAMPLE

TASK = "how do partial refunds work"


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cwd = tmp_path_factory.mktemp("bundle-cli")
    result = briefd("index", "--source", str(EXAMPLE), cwd=cwd)
    assert result.returncode == 0, result.stderr
    return cwd


def test_bundle_prints_the_block_and_a_summary(indexed: Path) -> None:
    first = briefd("bundle", TASK, "--max-tokens", "900", cwd=indexed)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("> domain/refunds.md:")
    assert " · Refunds and partial refunds › " in first.stdout.splitlines()[0]
    assert "· compiled" in first.stderr and "/900 tokens (cl100k_base" in first.stderr
    second = briefd("bundle", TASK, "--max-tokens", "900", cwd=indexed)
    assert second.stdout == first.stdout
    assert "· cached" in second.stderr
    bundle_id = first.stderr.split()[1]

    delta = briefd("bundle", TASK, "--max-tokens", "900", "--base", bundle_id, cwd=indexed)
    assert delta.returncode == 0 and delta.stdout == ""
    assert f"delta from {bundle_id}: " in delta.stderr and " 0 replaced, 0 removed" in delta.stderr


def test_bundle_json_and_paths(indexed: Path) -> None:
    result = briefd(
        "bundle",
        "chargeback evidence deadline",
        "--paths",
        "services/payment-gateway/internal/refunds/a.go",
        "--mode",
        "manifest",
        "--json",
        cwd=indexed,
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["schema_version"] == 2 and data["mode"] == "manifest"
    assert data["items"][0]["location"]["path"] == "domain/refunds.md"
    assert data["items"][0]["tier"] == "governed" and "content" not in data["items"][0]
    assert data["diagnostics"]["estimator"].startswith("cl100k_base")
    assert "exclusions" in data["diagnostics"]  # --json is the verbose response


def test_bundle_bad_mode_is_one_line(indexed: Path) -> None:
    result = briefd("bundle", TASK, "--format", "yaml", cwd=indexed)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "error: unknown --mode 'yaml'; use markdown, package, manifest"
    )
