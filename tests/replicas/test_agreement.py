"""Replicas set up differently (S1): one ``briefd serve`` started without the API token (or
another token, another webhook secret, another TLS mode for PostgreSQL) behind the same
address as the others is told to the operator: ``/api/health``'s notice on every replica, and
the log; a replica stopped takes its settings back."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from tests.ports import free_port
from tests.postgres import Postgres
from tests.replicas.cluster import Replica, replica_env
from tests.sync.gitrepo import Remote

pytestmark = pytest.mark.replicas
TOKEN = "replica-one-token-4f1d0c"


def _notice(replica: Replica, token: str | None = None) -> str | None:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    found = httpx.get(f"{replica.url}/api/health", headers=headers, timeout=10).json()
    assert found["status"] == "ok", found
    notice = found["notice"]
    return notice if isinstance(notice, str) else None


def _until(check: object, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not check() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.2)


def test_a_replica_serving_without_the_token_the_others_require_is_told(
    tmp_path: Path, postgres: Postgres, remote: Remote
) -> None:
    postgres.reset()
    replicas: list[Replica] = []
    try:
        for i, token in ((1, TOKEN), (2, None)):
            home = tmp_path / f"replica-{i}"
            home.mkdir()
            env = replica_env(home, f"replica-{i}", remote.url, postgres.url)
            env.update(BRIEFD_API_TOKEN=token) if token else env.pop("BRIEFD_API_TOKEN", None)
            replicas.append(Replica(f"replica-{i}", home, free_port(), env))
            replicas[-1].start()
        one, two = replicas
        expected = (
            "the replicas sharing this state are not set up alike: BRIEFD_API_TOKEN is set on "
            "replica-1; not set on replica-2 — a caller the load balancer sends to one replica "
            "is let in without a token, or refused with what another takes (webhooks alike); "
            "give every replica the same BRIEFD_API_TOKEN, sync.webhook_secret and state.url"
        )
        _until(lambda: _notice(one, TOKEN) is not None)
        assert _notice(one, TOKEN) == expected
        assert _notice(two) == expected
        # without the token: that they differ, not how
        assert _notice(one) == (
            "the replicas sharing this state are not set up alike (which settings, in "
            "/api/health asked with the API token)"
        )
        assert expected in one.log() or expected in two.log()

        two.stop()  # a replica stopped takes its settings back: the others agree again
        _until(lambda: _notice(one, TOKEN) is None)
        assert _notice(one, TOKEN) is None

        two.env.update(BRIEFD_API_TOKEN="another-token-9a7e", BRIEFD_SYNC__WEBHOOK_SECRET="x")
        two.start()
        _until(lambda: _notice(one, TOKEN) is not None)
        assert _notice(one, TOKEN) == (
            "the replicas sharing this state are not set up alike: BRIEFD_API_TOKEN is "
            "value 1 on replica-1; value 2 on replica-2; sync.webhook_secret is value 1 on "
            "replica-1; value 2 on replica-2 — a caller the load balancer sends to one replica "
            "is let in without a token, or refused with what another takes (webhooks alike); "
            "give every replica the same BRIEFD_API_TOKEN, sync.webhook_secret and state.url"
        )
        assert TOKEN not in one.log() and "another-token" not in two.log()
    finally:
        for r in replicas:
            r.stop()


def test_a_replica_reaching_the_state_without_tls_is_told(tmp_path: Path) -> None:
    """The TLS mode each replica asks of PostgreSQL, as the replicas' lines compare it: the
    URL's sslmode, else libpq's PGSSLMODE, else libpq's default."""
    from briefd.service.agreement import access_line, disagreement
    from briefd.service.config import ServiceConfig
    from briefd.settings import load_settings

    def line(url: str, env: dict[str, str]) -> str:
        settings = load_settings(config=None, env={}, overrides={"state.url": url})
        return access_line(ServiceConfig.from_settings(settings.serve, env=env), settings)

    url = "postgresql://briefd@db.internal:5432/briefd"
    lines = {
        "briefd-1": line(url + "?sslmode=verify-full", {"BRIEFD_API_TOKEN": TOKEN}),
        "briefd-2": line(url, {"BRIEFD_API_TOKEN": TOKEN}),
    }
    assert TOKEN not in "".join(lines.values())
    assert (disagreement(lines) or "").startswith(
        "the replicas sharing this state are not set up alike: state.url's sslmode: "
        "verify-full on briefd-1; prefer (not set) on briefd-2 — "
    )
    lines["briefd-2"] = lines["briefd-1"]
    assert disagreement(lines) is None
