"""Replicas at different knowledge commits (one synced, the other not yet): a ``base=`` from
a replica ahead is answered with the full bundle (``recovered``), never a delta that would
take the caller back; a base from a replica behind is a delta forward."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.bundles import BundleRequest
from briefd.replicas.agree import REPLICA_DAYS
from briefd.state import ReplicaStatus
from tests.postgres import Postgres
from tests.replicas.conftest import synced_pair
from tests.sync.gitrepo import Remote

pytestmark = pytest.mark.replicas
TASK = "how are refunds retried when a payment fails"


@pytest.fixture
def two(tmp_path: Path, postgres: Postgres) -> Iterator[tuple[Briefd, Briefd, Remote]]:
    with synced_pair(tmp_path, postgres) as pair:
        yield pair


def test_a_base_from_a_replica_ahead_is_recovered_and_from_one_behind_a_delta(
    two: tuple[Briefd, Briefd, Remote],
) -> None:
    a, b, remote = two
    old = b.compile_bundle(BundleRequest(task=TASK, max_tokens=3000))
    refunds = (remote.work / "domain" / "refunds.md").read_text()
    remote.push({"domain/refunds.md": refunds.replace("refund", "refund (revised)", 3)})
    assert a.sync().ok  # a is ahead now; b still serves the first commit
    new = a.compile_bundle(BundleRequest(task=TASK, max_tokens=3000))
    assert new.bundle_id != old.bundle_id

    behind = b.compile_bundle(BundleRequest(task=TASK, max_tokens=3000, base=new.bundle_id))
    assert behind.recovered and behind.delta is None  # b cannot know what a's bundle held
    assert behind.bundle_id == old.bundle_id

    ahead = a.compile_bundle(BundleRequest(task=TASK, max_tokens=3000, base=old.bundle_id))
    assert not ahead.recovered and ahead.delta is not None
    ops = {e.op for e in ahead.delta.entries}
    assert "replace" in ops and "reuse" in ops  # only the changed sections travel


def test_a_replica_gone_for_a_week_is_forgotten_at_the_next_sync(
    two: tuple[Briefd, Briefd, Remote],
) -> None:
    """S1: a replica scaled down or renamed stayed in `GET /api/sync`'s list for good, its
    old commit seeming to disagree with the others'. A replica up reports at every sync; one
    unseen for REPLICA_DAYS is forgotten."""
    a, b, _ = two
    gone = (datetime.now(UTC) - timedelta(days=REPLICA_DAYS, hours=1)).isoformat()
    recent = (datetime.now(UTC) - timedelta(days=REPLICA_DAYS - 1)).isoformat()
    a.state.save_replica(ReplicaStatus("scaled-down", "0" * 40, "fp", gone))
    a.state.save_replica(ReplicaStatus("paused", "1" * 40, "fp", recent))
    assert {r.replica for r in b.state.replicas()} == {"a", "b", "scaled-down", "paused"}
    assert b.sync().ok
    assert {r.replica for r in a.state.replicas()} == {"a", "b", "paused"}
