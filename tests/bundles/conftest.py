from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.settings import Settings
from tests.conftest import EXAMPLE, template_settings


@pytest.fixture(scope="session")
def example_copy_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the example knowledge indexed once per session, BM25 only, as :func:`example`
    indexed it for every test: a closed SQLite file it copies instead."""
    template = template_settings(tmp_path_factory.mktemp("example-copy-index"))
    assert template.source is not None
    shutil.copytree(EXAMPLE, template.source)
    with Briefd(template, embedder=None) as instance:
        instance.index()
    return template.db


@pytest.fixture
def example(settings: Settings, example_copy_index: Path) -> Iterator[Briefd]:
    """The example knowledge, copied and indexed (BM25 only): the copy at ``settings.source``
    and, beside it, a copy of :func:`example_copy_index` (a test that edits the source and
    indexes again gets an incremental run, as after its own first index)."""
    assert settings.source is not None
    shutil.copytree(EXAMPLE, settings.source)
    shutil.copyfile(example_copy_index, settings.db)
    with Briefd(settings, embedder=None) as instance:
        yield instance
