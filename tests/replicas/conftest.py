from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE
from tests.postgres import Postgres
from tests.replicas.cluster import Cluster, nginx_binary, start_cluster
from tests.sync.gitrepo import Remote


def example_files() -> dict[str, str | None]:
    return {
        str(p.relative_to(EXAMPLE)): p.read_text(encoding="utf-8")
        for p in sorted(EXAMPLE.rglob("*.md"))
    }


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
