from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.service import ServiceConfig, create_app
from briefd.settings import Settings, load_settings
from tests.conftest import EXAMPLE
from tests.service.live import TOKEN


def service_settings_for(root: Path, db: Path) -> Settings:
    return load_settings(
        config=None,
        env={},
        overrides={"db": str(db), "source": str(root), "embeddings.enabled": False},
    )


def service_config(**overrides: object) -> ServiceConfig:
    values: dict[str, object] = {
        "token": TOKEN,
        "allowed_hosts": ("testserver",),
        "flush_seconds": 0.2,
    }
    values.update(overrides)
    return ServiceConfig(**values)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def example_copy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The example knowledge copied out of the repository (so nothing here ever touches this
    repository's git) and indexed once, BM25 only: (source dir, template index)."""
    base = tmp_path_factory.mktemp("service-example")
    source = base / "knowledge"
    shutil.copytree(EXAMPLE, source)
    db = base / "template.db"
    with Briefd(service_settings_for(source, db), embedder=None) as api:
        api.index()
    return source, db


@pytest.fixture
def service_settings(tmp_path: Path, example_copy: tuple[Path, Path]) -> Settings:
    source, template = example_copy
    db = tmp_path / "index.db"
    shutil.copyfile(template, db)
    return service_settings_for(source, db)


@pytest.fixture
def service_api(service_settings: Settings) -> Iterator[Briefd]:
    with Briefd(service_settings, embedder=None) as api:
        yield api


@pytest.fixture
def client(service_api: Briefd) -> Iterator[TestClient]:
    """The real app (lifespan running) with the token configured and sent."""
    with TestClient(create_app(service_api, service_config())) as http:
        http.headers["Authorization"] = f"Bearer {TOKEN}"
        yield http
