from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.settings import Settings, load_settings
from tests.sync.gitrepo import GLOSSARY, RETRY, Remote


@pytest.fixture
def remote(tmp_path: Path) -> Remote:
    """A bare remote with two documents pushed on main."""
    made = Remote(tmp_path)
    made.push({"domain/retry.md": RETRY, "domain/glossary.md": GLOSSARY}, "first knowledge")
    return made


def git_settings(tmp_path: Path, source: str, **overrides: object) -> Settings:
    return load_settings(
        config=None,
        env={},
        overrides={
            "db": str(tmp_path / "data" / "index.db"),
            "source": source,
            "embeddings.enabled": False,
            "proposals.enabled": True,  # off by default; these repositories are the tests' own
            **overrides,
        },
    )


@pytest.fixture
def git_api(tmp_path: Path, remote: Remote) -> Iterator[Briefd]:
    """briefd following ``remote`` (an owned clone under tmp_path/data/repo), BM25 only."""
    with Briefd(git_settings(tmp_path, remote.url), embedder=None) as api:
        yield api
