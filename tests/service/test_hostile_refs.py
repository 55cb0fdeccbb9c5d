"""A document's ``refs`` glob is matched against an agent's ``paths`` in time linear in the
path: a glob written to make Python's backtracking regular expressions take exponential time
(a hostile document's author) holds no request."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.service import create_app
from tests.conftest import WriteFiles
from tests.service.conftest import service_config, service_settings_for
from tests.service.live import TOKEN

HOSTILE = "*a" * 12 + "*b"  # pathspec: ^(?:.+/)?[^/]*a[^/]*a…[^/]*b(?:/|$)


@pytest.fixture
def client(tmp_path: Path, write_files: WriteFiles) -> Iterator[TestClient]:
    root = write_files(
        {
            "domain/hostile.md": f"""\
                ---
                refs: ["{HOSTILE}"]
                ---
                # Hostile

                ## Retry

                Retry payments with a backoff.
                """,
            "domain/other.md": "# Other\n\n## Retry payments\n\n"
            + "Retry payments: retry failed payments with retry payments backoff.\n" * 3,
            "domain/tests.md": """\
                ---
                refs: ["src/**/*_retry*_test*.py"]
                ---
                # Tests

                ## Retry tests

                Retry tests live beside the code.
                """,
        }
    )
    with Briefd(service_settings_for(root, tmp_path / "index.db"), embedder=None) as api:
        api.index()
        with TestClient(create_app(api, service_config())) as http:
            http.headers["Authorization"] = f"Bearer {TOKEN}"
            yield http


def test_a_refs_glob_made_to_backtrack_holds_no_request(client: TestClient) -> None:
    long_name = "src/" + "x/" * 40 + "pay_retry" + "_" * 60 + "_test_cases.py"
    paths = ["a" * 34, "a" * 40 + "b", long_name]
    started = time.monotonic()
    searched = client.get("/api/search", params={"q": "retry payments", "paths": paths})
    bundled = client.post("/api/bundle", json={"task": "retry payments", "paths": paths})
    took = time.monotonic() - started
    assert searched.status_code == 200, searched.text
    assert bundled.status_code == 200, bundled.text
    assert took < 3, took
    leading = [h["doc_path"] for h in searched.json()["hits"]]
    assert sorted(leading[:2]) == ["domain/hostile.md", "domain/tests.md"]  # both refs cover
    alone = client.get("/api/search", params={"q": "retry payments"}).json()["hits"]
    assert alone[0]["doc_path"] == "domain/other.md"
