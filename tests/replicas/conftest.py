from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from briefd.api import Briefd
from tests.conftest import EXAMPLE
from tests.postgres import Postgres
from tests.replicas.cluster import Cluster, nginx_binary, start_cluster
from tests.sync.conftest import git_settings
from tests.sync.gitrepo import Remote


def example_files() -> dict[str, str | None]:
    return {
        str(p.relative_to(EXAMPLE)): p.read_text(encoding="utf-8")
        for p in sorted(EXAMPLE.rglob("*.md"))
    }


@contextmanager
def synced_pair(
    tmp_path: Path, postgres: Postgres, **settings: object
) -> Iterator[tuple[Briefd, Briefd, Remote]]:
    """Two replicas ("a", "b") of the example knowledge pushed to a fresh remote, sharing
    state in ``postgres``, each synced once; ``settings``: more keys for both."""
    postgres.reset()
    remote = Remote(tmp_path / "git")
    remote.push(example_files(), "the example knowledge")
    apis = []
    try:
        for name in ("a", "b"):
            keys = {"state.url": postgres.url, "state.replica": name, **settings}
            api = Briefd(git_settings(tmp_path / name, remote.url, **keys), embedder=None)
            apis.append(api)
            api.sync()
        yield apis[0], apis[1], remote
    finally:
        for api in apis:
            api.close()


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory) -> Remote:
    made = Remote(tmp_path_factory.mktemp("remote"))
    made.push(example_files(), "the example knowledge")
    return made


@pytest.fixture(scope="module")
def cluster(
    tmp_path_factory: pytest.TempPathFactory, postgres: Postgres, remote: Remote
) -> Iterator[Cluster]:
    if nginx_binary() is None:
        if os.environ.get("CI"):
            pytest.fail("nginx is missing (apt-get install nginx-light)")
        pytest.skip("nginx is missing (apt-get install nginx-light)")
    postgres.reset()
    root: Path = tmp_path_factory.mktemp("cluster")
    made = start_cluster(root, remote.url, postgres.url)
    try:
        yield made
    finally:
        made.stop()
