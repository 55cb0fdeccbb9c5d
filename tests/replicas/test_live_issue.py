"""A bundle headed by a live Jira issue (B1) compiled by one replica: another replica takes
usage reports for its sections and answers ``base=`` with a delta, as for any bundle — what it
held travels through the shared state (ids, fingerprints, tokens), never the issue's text."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from briefd.api import Briefd
from briefd.bundles import BundleRequest
from tests.atlassian import data
from tests.atlassian.conftest import SERVICE_EMAIL, SERVICE_TOKEN
from tests.atlassian.fake import FakeSite, serve
from tests.postgres import Postgres
from tests.replicas.conftest import synced_pair

pytestmark = pytest.mark.replicas


@pytest.fixture
def site() -> Iterator[FakeSite]:
    made = FakeSite("cloud", {SERVICE_TOKEN: SERVICE_EMAIL})
    with serve(made):
        yield made


@pytest.fixture
def two(
    tmp_path: Path, postgres: Postgres, site: FakeSite, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Briefd, Briefd]]:
    monkeypatch.setenv("CONFLUENCE_EMAIL", SERVICE_EMAIL)  # Jira falls back to this account
    monkeypatch.setenv("CONFLUENCE_TOKEN", SERVICE_TOKEN)
    atlassian = {
        "confluence.url": site.url,
        "confluence.spaces": ["ENG"],
        "jira.url": site.url,
        "jira.projects": ["SHOP"],
    }
    with synced_pair(tmp_path, postgres, **atlassian) as (a, b, _):
        yield a, b


def test_a_live_issue_bundle_of_one_replica_is_known_to_the_others(
    two: tuple[Briefd, Briefd], postgres: Postgres
) -> None:
    a, b = two
    request = BundleRequest("", max_tokens=2000, issue="SHOP-42")
    bundle = a.compile_bundle(request)
    ids = [i.chunk_id for i in bundle.items]
    assert ids[0].startswith("issue:") and bundle.state_error is None

    receipt = b.report_usage(bundle.bundle_id, ids[:2])
    assert receipt.useful_chunk_ids == tuple(ids[:2])
    again = b.compile_bundle(dataclasses.replace(request, base=bundle.bundle_id))
    assert not again.recovered and again.delta is not None
    assert [(e.op, e.chunk_id) for e in again.delta.entries] == [("reuse", i) for i in ids]

    with psycopg.connect(postgres.url) as conn:
        shared = " ".join(str(row) for row in conn.execute("SELECT * FROM bundle_manifests"))
    assert bundle.bundle_id in shared
    assert data.ISSUE_TEXT not in shared and "SHOP-42" not in shared
