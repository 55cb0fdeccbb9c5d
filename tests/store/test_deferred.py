"""Writes the index cannot take now, kept for a later flush (O2, T1): a proposal record and a
usage report a client was told are stored are never dropped to keep bundle rows (a cache the
next request makes again), and are named while they wait."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from briefd.proposals.model import Proposal
from briefd.state.local import LocalState
from briefd.store.db import MAX_DEFERRED, Store

PROPOSAL = Proposal(
    id="0badcafe",
    branch="briefd/proposal-0badcafe",
    doc_path="domain/retry.md",
    description="Four retries",
    commit_hash="ab" * 20,
    pr_url=None,
    status="local",
    client="agent",
    created_at="2026-12-05T17:00:00.000+00:00",
)


def test_a_proposal_kept_for_later_outlasts_a_full_queue_of_bundle_rows(tmp_path: Path) -> None:
    """At most 2,000 writes wait, the oldest dropped first: 2,000 bundles compiled while the
    index refused writes (a full disk) dropped the proposal record and the usage report made
    before them, in silence; their branch stood, unknown to briefd."""
    store = Store.open(tmp_path / "x.db", create=True)
    state = LocalState(lambda: store)
    store.conn.execute("PRAGMA query_only = ON")  # every write refused, as on a full disk
    state.save_proposal(PROPOSAL)
    state.save_usage("b1", ["c1"], "agent", "2026-12-05T17:00:01.000+00:00")
    for n in range(MAX_DEFERRED):  # bundle rows, as compile_bundle keeps them (a cache)
        store.defer(f"bundle:{n}", lambda conn: None, ("request", ()))
    assert store.unsaved() == [
        "proposal 0badcafe (domain/retry.md, branch briefd/proposal-0badcafe)",
        "a usage report of bundle b1",
    ]
    store.conn.execute("PRAGMA query_only = OFF")  # space freed
    assert store.flush_deferred() == MAX_DEFERRED
    assert [p.id for p in state.proposals()] == ["0badcafe"]
    with sqlite3.connect(tmp_path / "x.db") as conn:
        assert conn.execute("SELECT bundle_id FROM usage_events").fetchall() == [("b1",)]
    assert store.unsaved() == []
    store.close()
