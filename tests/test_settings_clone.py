"""O1: an index placed inside the clone of a git URL source is refused at load: every sync
resets and cleans that clone (``git clean -ffdx``), which deleted the index."""

from __future__ import annotations

from pathlib import Path

import pytest

from briefd.errors import ConfigError
from briefd.settings import load_settings
from tests.cli.test_cli import briefd
from tests.sync.gitrepo import Remote


def test_an_index_inside_the_clone_is_refused_before_a_sync_cleans_it(tmp_path: Path) -> None:
    """What an operator saw: with the clone made (sync.checkout_dir /data/kb), moving the
    index to /data/kb/briefd.db synced and served, until the next sync's clean deleted it;
    BRIEFD_SYNC__CHECKOUT_DIR=/data beside BRIEFD_DB=/data/briefd.db said "/data exists and
    is not a git clone; move it away or set sync.checkout_dir", though it was set."""
    remote = Remote(tmp_path / "team")
    remote.push({"domain/refunds.md": "# Refunds\n\nRefunds take five days.\n"})
    clone = tmp_path / "data" / "kb"
    env = {"BRIEFD_SOURCE": remote.url, "BRIEFD_SYNC__CHECKOUT_DIR": str(clone)}
    first = briefd("sync", cwd=tmp_path, env={**env, "BRIEFD_DB": str(tmp_path / "data/i.db")})
    assert first.returncode == 0, first.stderr
    moved = briefd("sync", cwd=tmp_path, env={**env, "BRIEFD_DB": str(clone / "briefd.db")})
    assert (moved.returncode, moved.stdout) == (1, "")
    assert moved.stderr == (
        f"error: environment variable BRIEFD_SYNC__CHECKOUT_DIR: sync.checkout_dir: {clone} "
        f"holds the index ({clone / 'briefd.db'}), and every sync resets and cleans that clone "
        "of the source, which would delete it; give the clone a folder of its own, such as "
        f"{clone / 'repo'} (the default)\n"
    )
    assert not (clone / "briefd.db").exists()


def test_an_index_beside_the_clone_or_a_local_source_inside_it_loads(tmp_path: Path) -> None:
    clone = tmp_path / "kb"
    beside = {"BRIEFD_SOURCE": "https://example.com/kb.git", "BRIEFD_DB": str(tmp_path / "i.db")}
    assert load_settings(env={**beside, "BRIEFD_SYNC__CHECKOUT_DIR": str(clone)}) is not None
    local = {"BRIEFD_SOURCE": str(clone), "BRIEFD_DB": str(clone / "i.db")}  # no clone to clean
    assert load_settings(env={**local, "BRIEFD_SYNC__CHECKOUT_DIR": str(clone)}) is not None
    with pytest.raises(ConfigError, match="holds the index"):
        load_settings(env={**beside, "BRIEFD_SYNC__CHECKOUT_DIR": str(tmp_path)})
