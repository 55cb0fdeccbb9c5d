"""Queries whose letters arrive decomposed (NFD: a macOS file name or clipboard, some input
methods), through the real ``briefd search`` process: the same words as the composed query."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from tests.cli.test_cli import briefd
from tests.conftest import EXAMPLE_TR


@pytest.fixture(scope="module")
def indexed_tr(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cwd = tmp_path_factory.mktemp("cli-tr")
    result = briefd("index", "--source", str(EXAMPLE_TR), cwd=cwd)
    assert result.returncode == 0, result.stderr
    return cwd


def hits(cwd: Path, query: str) -> list[tuple[str, str]]:
    result = briefd("search", query, "--json", "--related", "0", "-k", "3", cwd=cwd)
    assert result.returncode == 0, result.stderr
    return [(h["doc_path"], h["heading"]) for h in json.loads(result.stdout)["hits"]]


@pytest.mark.parametrize("query", ["İADE SÜRESİ", "iade süresi"])
def test_a_decomposed_query_finds_what_the_composed_one_finds(indexed_tr: Path, query: str) -> None:
    composed = hits(indexed_tr, query)
    assert composed[0] == ("domain/iade-kurallari.md", "Kısmi iade")
    assert hits(indexed_tr, unicodedata.normalize("NFD", query)) == composed
