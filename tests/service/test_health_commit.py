"""``GET /api/health`` names the knowledge commit a git checkout's index serves, as ``briefd
version`` does, also before the server has polled it: over a real git checkout, a real index
and the real HTTP app."""

from __future__ import annotations

from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.service import create_app
from briefd.settings import Settings
from tests.conftest import WriteFiles
from tests.service.conftest import service_config
from tests.sync.gitrepo import git


def test_health_names_the_commit_a_checkouts_index_was_read_at(
    settings: Settings, write_files: WriteFiles
) -> None:
    """`make run` indexes the checkout (`briefd index`) and serves it with `--no-index`:
    health said `"commit": null` until the server's first poll (60 s later, or never with
    `sync.interval: 0`), while `briefd version` named the commit the index was read at."""
    read_at = _committed(settings, write_files)
    with Briefd(settings, embedder=None) as api:
        api.index()
        with TestClient(create_app(api, service_config())) as client:
            health = client.get("/api/health").json()
    assert (health["status"], health["commit"]) == ("ok", read_at)


def test_the_dashboards_sync_panel_names_the_commit_the_index_was_read_at(
    settings: Settings, write_files: WriteFiles
) -> None:
    """The dashboard's sync table (``/api/stats``'s ``sync``) showed "–" for the commit of a
    checkout indexed by `briefd index` and served with `--no-index`, though health named it."""
    read_at = _committed(settings, write_files)
    with Briefd(settings, embedder=None) as api:
        api.index()
        with TestClient(create_app(api, service_config(token=None))) as client:
            rows = client.get("/api/stats").json()["sync"]
    assert [(row["source"], row["last_commit"]) for row in rows] == [("index", read_at)]


def _committed(settings: Settings, write_files: WriteFiles) -> str:
    """One note committed in a fresh checkout; the commit."""
    write_files({"domain/refunds.md": "# Refunds\n\nPartial refunds within 180 days.\n"})
    assert settings.source is not None
    git(settings.source, "init", "--quiet")
    git(settings.source, "add", ".")
    git(settings.source, "commit", "--quiet", "-m", "notes")
    return git(settings.source, "rev-parse", "HEAD")
