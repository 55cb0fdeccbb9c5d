from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from briefd.atlassian import Atlassian
from briefd.settings import Settings, load_settings
from tests.atlassian.fake import FakeSite, serve
from tests.service.conftest import example_copy

__all__ = ["example_copy"]  # the example knowledge, indexed once

SERVICE_EMAIL, SERVICE_TOKEN = "svc-briefd@example.com", "cloud-token-7QxL2v"
CALLER_EMAIL, CALLER_TOKEN = "dev-ada@example.com", "caller-token-9ZrP4k"
DC_PAT, DC_CALLER_PAT = "dc-pat-4KtW8n", "dc-caller-pat-3HsQ1m"
ENV = {
    "CONFLUENCE_EMAIL": SERVICE_EMAIL,
    "CONFLUENCE_TOKEN": SERVICE_TOKEN,
    "DC_TOKEN": DC_PAT,
}
SECRETS = (SERVICE_TOKEN, CALLER_TOKEN, DC_PAT, DC_CALLER_PAT)


@pytest.fixture(scope="session")
def cloud_site() -> Iterator[FakeSite]:
    site = FakeSite("cloud", {SERVICE_TOKEN: SERVICE_EMAIL, CALLER_TOKEN: CALLER_EMAIL})
    with serve(site):
        yield site


@pytest.fixture(scope="session")
def dc_site() -> Iterator[FakeSite]:
    site = FakeSite("datacenter", {DC_PAT: "", DC_CALLER_PAT: ""})
    with serve(site):
        yield site


@pytest.fixture
def cloud(cloud_site: FakeSite) -> FakeSite:
    cloud_site.seen.clear()
    cloud_site.scripts.clear()
    return cloud_site


@pytest.fixture
def dc(dc_site: FakeSite) -> FakeSite:
    dc_site.seen.clear()
    dc_site.scripts.clear()
    return dc_site


def site_settings(tmp_path: Path, site: FakeSite, **overrides: Any) -> Settings:
    """Confluence and Jira both on ``site`` (Jira without an account of its own on Cloud: it
    falls back to the Confluence one), the example index location in ``tmp_path``."""
    values: dict[str, Any] = {
        "db": str(tmp_path / "index.db"),
        "embeddings.enabled": False,
        "confluence.url": site.url,
        "confluence.deployment": site.deployment,
        "confluence.spaces": ["ENG"],
        "jira.url": site.url,
        "jira.deployment": site.deployment,
        "jira.projects": ["SHOP"],
        "jira.fields": ["customfield_10020"],
    }
    if site.deployment == "datacenter":
        values |= {"confluence.token_env": "DC_TOKEN", "jira.token_env": "DC_TOKEN"}
    values |= overrides
    return load_settings(config=None, env={}, overrides=values)


def facade(tmp_path: Path, site: FakeSite, **overrides: Any) -> Atlassian:
    return Atlassian(site_settings(tmp_path, site, **overrides), env=ENV, sleep=lambda s: None)
