"""An index on a file system mounted read-only (a read-only bind mount, a ``:ro`` volume):
the advice is to remount or move the index, not a chmod that cannot help there."""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.errors import StoreError
from briefd.service import create_app
from briefd.store.db import Store, content_version
from tests.cli.test_cli import briefd
from tests.conftest import EXAMPLE
from tests.service.conftest import service_config, service_settings_for
from tests.service.live import TOKEN

MOUNTED = "is on a file system mounted read-only, so no permission change (chmod, chown) lets"


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """tmp_path/idx holding a built index (no -wal / -shm left), then bind-mounted read-only."""
    folder = tmp_path / "idx"
    folder.mkdir()
    built = briefd("--db", "idx/k.db", "index", "--source", str(EXAMPLE), cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    for end in ("-wal", "-shm"):
        (folder / f"k.db{end}").unlink(missing_ok=True)
    mount = ["mount", "--bind", str(folder), str(folder)]
    if subprocess.run(mount, capture_output=True).returncode != 0:
        pytest.skip("mounting needs root (CAP_SYS_ADMIN)")
    try:
        remount = ["mount", "-o", "remount,bind,ro", str(folder), str(folder)]
        subprocess.run(remount[:-1], check=True, capture_output=True)
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_a_read_only_mount_is_named_as_such_and_rebuild_says_so(
    tmp_path: Path, read_only: Path
) -> None:
    """``briefd index --rebuild`` on it crashed with a traceback (OSError: [Errno 30]
    Read-only file system, deleting the index to start over), and with the -wal / -shm there,
    advised "make them writable (chmod u+w …)"; a reader was told to check "that its directory
    exists and is writable by you". Each now says the file system is mounted read-only."""
    for args in (
        ("--db", "idx/k.db", "index", "--source", str(EXAMPLE), "--rebuild"),
        ("--db", "idx/k.db", "index", "--source", str(EXAMPLE)),
        ("--db", "idx/new/k.db", "index", "--source", str(EXAMPLE)),
    ):
        done = briefd(*args, cwd=tmp_path)
        said = " ".join(done.stderr.split())
        assert (done.returncode, said[:7]) == (1, "error: "), said
        assert f"{read_only} {MOUNTED} briefd write there; remount it read-write" in said
        assert "Traceback" not in said and "chmod u+w" not in said, said
    assert (read_only / "k.db").stat().st_size > 0  # left as it was


def test_an_index_on_a_read_only_mount_is_read(tmp_path: Path, read_only: Path) -> None:
    """With no -wal / -shm beside it (an index copied or built elsewhere, then mounted ``:ro``)
    nothing could read it: SQLite makes a -shm to read a WAL index, and said "unable to open
    database file". A reader now opens it read-only and immutable: the CLI searches it, and
    ``briefd serve --no-index`` answers from it over HTTP; a write says the mount is why."""
    found = briefd("--db", "idx/k.db", "search", "refund window", "--json", cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["hits"][0]["doc_path"] == "domain/refunds.md"
    api = Briefd(service_settings_for(EXAMPLE, read_only / "k.db"), embedder=None)
    with TestClient(create_app(api, service_config())) as client:
        client.headers["Authorization"] = f"Bearer {TOKEN}"
        hits = client.get("/api/search", params={"q": "refund window"}).json()["hits"]
        assert hits[0]["doc_path"] == "domain/refunds.md"
        assert client.get("/api/health").json()["documents"] == 45
    with pytest.raises(StoreError) as refused, api.store.write() as conn:
        conn.execute("DELETE FROM query_log")
    said = str(refused.value)
    assert said.startswith(f"cannot write the index {read_only / 'k.db'} (attempt to write"), said
    assert f"{read_only} {MOUNTED} briefd write there" in said, said
    api.close()
    assert sorted(p.name for p in read_only.iterdir() if p.name.startswith("k.db")) == [
        "k.db",
        "k.db.index.lock",
        "k.db.stamp",
    ]


def test_a_read_only_view_follows_writes_through_another_mount(tmp_path: Path) -> None:
    """SQLite reads an immutable file without looking for changes: the store opened
    read-only and immutable (no -shm) reopens the file when it changes, so a reader behind a
    ``:ro`` mount sees what a writer with the volume read-write commits, not stale pages."""
    (tmp_path / "rw").mkdir()
    (tmp_path / "ro").mkdir()
    writer = Store.open(tmp_path / "rw" / "k.db", create=True)
    writer.close()
    bind = ["mount", "--bind", str(tmp_path / "rw"), str(tmp_path / "ro")]
    if subprocess.run(bind, capture_output=True).returncode != 0:
        pytest.skip("mounting needs root (CAP_SYS_ADMIN)")
    try:
        remount = ["mount", "-o", "remount,bind,ro", str(tmp_path / "ro")]
        subprocess.run(remount, check=True, capture_output=True)
        with contextlib.closing(Store.open(tmp_path / "ro" / "k.db")) as reader:
            assert reader.frozen
            with reader.read() as conn:
                before = content_version(conn)[1]
            writer = Store.open(tmp_path / "rw" / "k.db", create=True)
            with contextlib.closing(writer), writer.write() as conn:
                conn.execute("UPDATE content_version SET n = n + 5")
            with reader.read() as conn:
                assert content_version(conn)[1] == before + 5
            assert reader.reopened is None  # the same file: nothing to tell a client
    finally:
        subprocess.run(["umount", str(tmp_path / "ro")], check=True)


def test_an_index_on_a_read_only_mount_is_served_degraded_and_keeps_no_usage(
    read_only: Path,
) -> None:
    """An index opened read-only (a ``:ro`` volume) keeps nothing of the team's: /api/health
    said "ok", and POST /api/usage answered 200 ``stored: 1`` for a report only kept in memory,
    lost at the stop ("could not save … lost with this stop"). Health now says degraded with the
    reason (HTTP 200: a load balancer or the image's HEALTHCHECK keep it), openly without the
    path; a usage report is refused 503, nothing kept; search and bundles go on."""
    api = Briefd(service_settings_for(EXAMPLE, read_only / "k.db"), embedder=None)
    with TestClient(create_app(api, service_config())) as client:
        opened = client.get("/api/health")
        client.headers["Authorization"] = f"Bearer {TOKEN}"
        health = client.get("/api/health")
        bundle = client.post("/api/bundle", json={"task": "refund window"})
        usage = client.post("/api/usage", json={"bundle_id": bundle.json()["bundle_id"]})
        unsaved = api.store.unsaved()
    api.close()
    assert (health.status_code, health.json()["status"]) == (200, "degraded")
    assert health.json()["state_error"] == (
        f"the index {read_only / 'k.db'} is opened read-only ({read_only} {MOUNTED} briefd "
        "write there; remount it read-write (or drop ':ro' from the volume), or pass --db (or "
        "'db:' in briefd.yaml) a path on a writable file system): the query log, usage "
        "reports and proposals are not kept; search and bundles go on from it"
    )
    assert (opened.status_code, opened.json()["status"]) == (200, "degraded")
    assert opened.json()["state_error"] == (
        "the index is opened read-only: the query log, usage reports and proposals are not "
        "kept; search and bundles go on from it (where, in /api/health asked with the API token)"
    )
    assert bundle.status_code == 200 and "refund" in bundle.json()["text"].lower()
    assert usage.status_code == 503, usage.text
    assert usage.json()["detail"] == f"nothing was stored: {health.json()['state_error']}"
    assert unsaved == []
