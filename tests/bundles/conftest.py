from __future__ import annotations

import shutil

import pytest

from briefd.api import Briefd
from briefd.settings import Settings
from tests.conftest import EXAMPLE


@pytest.fixture
def example(api: Briefd, settings: Settings) -> Briefd:
    """The example knowledge, copied and indexed (BM25 only)."""
    assert settings.source is not None
    shutil.copytree(EXAMPLE, settings.source)
    api.index()
    return api
