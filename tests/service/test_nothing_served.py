"""A knowledge folder whose every note lies outside the scopes: the index run found them and
served none, so a search or a bundle must say that and what to change — not "run `briefd
index`", which changes nothing (over a real index, the real HTTP app and the real CLI)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.bundles import BundleRequest
from briefd.recall.engine import RecallRequest
from briefd.service import create_app
from briefd.settings import Settings
from tests.conftest import WriteFiles
from tests.service.conftest import service_config

NOTES = {
    "notes/refunds.md": "# Refunds\n\nThe refund window is 30 days.\n",
    "top.md": "# Deployments\n\nWe deploy on Tuesdays.\n",
}
SAID = (
    "the index holds no document: its last run found 2 files (notes/refunds.md, top.md) and "
    "served none: notes/refunds.md: outside every scope (domain/, conventions/, "
    "projects/*/); not served: add its folder to 'scopes' in briefd.yaml, then run "
    "`briefd index`"
)


def test_a_search_and_a_bundle_say_every_file_is_outside_the_scopes(
    settings: Settings, write_files: WriteFiles
) -> None:
    write_files(NOTES)
    with Briefd(settings, embedder=None) as api:
        api.index()
        bundle = api.compile_bundle(BundleRequest(task="refund window"))
        with TestClient(create_app(api, service_config(token=None))) as http:
            found = http.get("/api/search", params={"q": "refund window"}).json()
    assert found["hits"] == []
    assert found["note"] == SAID
    assert "briefd index`, or on a server" not in str(found)
    assert bundle.warnings == (SAID,)


def test_the_cli_search_does_not_send_the_user_to_index_again(
    tmp_path: Path, write_files: WriteFiles
) -> None:
    source = write_files(NOTES)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    env |= {"BRIEFD_EMBEDDINGS__ENABLED": "false", "BRIEFD_SOURCE": str(source)}

    def briefd(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "briefd", *args]
        return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)

    assert briefd("index").returncode == 1  # indexed 0 documents: it says so
    searched = briefd("search", "refund window")
    assert searched.returncode == 0, searched.stderr
    assert searched.stdout.splitlines() == [
        "Nothing found: the index holds no document (the warning below says why)."
    ]
    assert searched.stderr.replace("\n", " ").split() == f"warning: {SAID}".split()


def test_the_prompt_hook_does_not_send_the_user_to_index_again(
    settings: Settings, write_files: WriteFiles
) -> None:
    """`briefd recall` said "Nothing to inject: no document is indexed yet; run `briefd index`"."""
    write_files(NOTES)
    with Briefd(settings, embedder=None) as api:
        api.index()
        recalled = api.recall(RecallRequest("what is the refund window for card payments"))
    assert (recalled.sections, recalled.reason) == ((), SAID)
