"""A real PostgreSQL for tests: Debian's server binaries (``initdb``, ``pg_ctl``), a cluster
in a temporary directory on a free loopback port, run as an unprivileged user when the tests
run as root (``initdb`` refuses root). ``.ci/run`` installs the ``postgresql`` package."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.ports import free_port

BIN_DIRS = ("/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin", "/usr/local/bin")


def _binary(name: str) -> str | None:
    for d in BIN_DIRS:
        candidate = Path(d) / name
        if candidate.is_file():
            return str(candidate)
    return shutil.which(name)


@dataclass
class Postgres:
    """One throwaway cluster; ``url`` reaches its ``briefd`` database."""

    home: Path
    port: int
    pg_ctl: str

    @property
    def url(self) -> str:
        return f"postgresql://briefd@127.0.0.1:{self.port}/briefd"

    def _as_owner(self, args: Sequence[str]) -> list[str]:
        if os.geteuid() != 0:
            return list(args)
        return ["runuser", "-u", "nobody", "--", *args]

    def start(self) -> None:
        options = (
            f"-p {self.port} -k {self.home} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=60"
        )
        subprocess.run(
            self._as_owner(
                [
                    self.pg_ctl,
                    "-D",
                    str(self.home / "data"),
                    "-o",
                    options,
                    "-l",
                    str(self.home / "log"),
                    "-w",
                    "-t",
                    "30",
                    "start",
                ]
            ),
            check=True,
            capture_output=True,
        )

    def stop(self) -> None:
        subprocess.run(
            self._as_owner(
                [self.pg_ctl, "-D", str(self.home / "data"), "-m", "fast", "-w", "stop"]
            ),
            check=False,
            capture_output=True,
        )

    def reset(self) -> None:
        """Drop every table (each test starts from an empty database)."""
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute("DROP SCHEMA public CASCADE")
            conn.execute("CREATE SCHEMA public")


def start_postgres() -> Postgres:
    """initdb + start + createdb; fails (or, outside CI, skips) without the server package."""
    initdb, pg_ctl = _binary("initdb"), _binary("pg_ctl")
    if initdb is None or pg_ctl is None:
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL's server binaries are missing (apt-get install postgresql)")
        pytest.skip("PostgreSQL's server binaries are missing (apt-get install postgresql)")
    home = Path(tempfile.mkdtemp(prefix="briefd-pg-"))
    if os.geteuid() == 0:
        shutil.chown(home, "nobody")
    pg = Postgres(home, free_port(), pg_ctl)
    subprocess.run(
        pg._as_owner(
            [
                initdb,
                "-D",
                str(home / "data"),
                "-A",
                "trust",
                "-U",
                "briefd",
                "-E",
                "UTF8",
                "--no-sync",
                "--locale=C",
            ]
        ),
        check=True,
        capture_output=True,
    )
    pg.start()
    import psycopg

    with psycopg.connect(
        f"postgresql://briefd@127.0.0.1:{pg.port}/postgres", autocommit=True
    ) as conn:
        conn.execute("CREATE DATABASE briefd")
    return pg


def drop_postgres(pg: Postgres) -> None:
    pg.stop()
    shutil.rmtree(pg.home, ignore_errors=True)
