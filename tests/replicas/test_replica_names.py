"""Replicas left to name themselves (no ``state.replica``) are named by their host and the
port they serve on, ``--port`` included: two on one host never share a row of the shared
state (README, "Configuration": ``state.replica`` defaults to host name and port)."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.ports import free_port
from tests.postgres import Postgres
from tests.replicas.cluster import Replica, replica_env
from tests.sync.gitrepo import Remote

pytestmark = pytest.mark.replicas


def test_replicas_on_one_host_are_named_by_the_port_they_serve_on(
    tmp_path: Path, postgres: Postgres, remote: Remote
) -> None:
    postgres.reset()
    replicas: list[Replica] = []
    try:
        for i in (1, 2):
            home = tmp_path / f"replica-{i}"
            home.mkdir()
            env = replica_env(home, "unused", remote.url, postgres.url)
            del env["BRIEFD_STATE__REPLICA"]
            replicas.append(Replica(f"replica-{i}", home, free_port(), env))
            replicas[-1].start()
        expected = [f"{socket.gethostname()}:{r.port}" for r in replicas]
        named = [httpx.get(f"{r.url}/api/health").json()["replica"] for r in replicas]
        assert named == expected
        with psycopg.connect(postgres.url) as conn:
            rows = conn.execute("SELECT replica FROM replicas ORDER BY replica").fetchall()
        assert sorted(row[0] for row in rows) == sorted(expected)
    finally:
        for r in replicas:
            r.stop()
