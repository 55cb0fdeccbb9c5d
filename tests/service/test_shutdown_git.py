"""O2, T1: a server whose lifespan ended by an exception (thrown into it where it serves, as an
embedding ASGI host does when it fails) left git refused for the rest of the process: every
later sync or proposal in it said "git … not run: briefd was stopping" (seen in CI, where a
failing service test turned four git tests after it in the same worker)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from briefd.api import Briefd
from briefd.service import create_app
from briefd.sources import git
from tests.service.conftest import service_config


def test_a_server_ended_by_an_error_leaves_git_allowed(service_api: Briefd, tmp_path: Path) -> None:
    app = create_app(service_api, service_config())

    async def serve_then_fail() -> None:
        async with app.router.lifespan_context(app):
            raise RuntimeError("boom")

    with pytest.raises(BaseExceptionGroup) as raised:
        anyio.run(serve_then_fail)
    assert raised.group_contains(RuntimeError, match="boom")
    assert git.run(["init", "-q", str(tmp_path / "r")], None, 30) == ""
    assert (tmp_path / "r" / ".git").is_dir()
