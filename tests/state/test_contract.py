"""The shared state's contract: the same tests against both engines — the SQLite index (one
node) and a real PostgreSQL (replicas) — so either can stand behind :class:`Briefd`."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import replace

import pytest

from briefd.api import Briefd
from briefd.settings import Settings, StateSettings
from briefd.state import LocalState, Manifest, Proposal, ReplicaStatus, SharedState
from briefd.state.model import ADOPTED_AS
from briefd.state.postgres import PostgresState
from briefd.store.activity import QueryLogEntry
from tests.conftest import WriteFiles
from tests.postgres import Postgres


@pytest.fixture(params=["sqlite", "postgresql"])
def state(
    request: pytest.FixtureRequest, settings: Settings, write_files: WriteFiles
) -> Iterator[SharedState]:
    if request.param == "sqlite":
        with Briefd(settings, embedder=None) as api:
            api.index(write_files({"domain/refunds.md": "# Refunds\n\nWithin 30 days.\n"}))
            yield LocalState(lambda: api.store)
        return
    pg: Postgres = request.getfixturevalue("postgres")
    pg.reset()
    shared = PostgresState(StateSettings(url=pg.url), "replica-a")
    try:
        yield shared
    finally:
        shared.close()


def entry(query: str, at: str, **more: object) -> QueryLogEntry:
    fields: dict[str, object] = {
        "kind": "search",
        "query": query,
        "scopes": ("domain",),
        "results": 2,
        "top_score": 0.5,
        "latency_ms": 3.25,
        "client": "mcp",
        "created_at": at,
        "surface": "mcp",
        "gate": "kept",
        "sections": ("c1", "c2"),
        "query_hash": "h-" + query,
        **more,
    }
    return QueryLogEntry(**fields)  # type: ignore[arg-type]


def proposal(pid: str, at: str, status: str = "open", number: int | None = 7) -> Proposal:
    return Proposal(
        id=pid,
        branch=f"briefd/proposal-{pid}",
        doc_path="domain/refunds.md",
        description="Refund window is 30 days",
        commit_hash="c0ffee",
        pr_url=None,
        status=status,
        client="claude",
        created_at=at,
        pr_number=number,
        base_branch="main",
    )


def test_the_engine_answers(state: SharedState) -> None:
    assert state.problem() is None
    assert state.engine in ("sqlite", "postgresql")


def test_query_log_newest_first_with_every_field(state: SharedState) -> None:
    first = entry("refund window", "2026-01-01T00:00:00+00:00", bundle_id="b1")
    second = entry(
        "réfund ünicode \ud800", "2026-01-02T00:00:00+00:00", client=None, query_hash="h2"
    )
    state.save_queries([first, second], {"c1": "domain/refunds.md"})
    got = state.recent_queries(10)
    assert [e.query for e in got] == ["réfund ünicode \ufffd", "refund window"]
    assert got[1] == first
    assert got[0].surface == "mcp" and got[0].client is None
    assert state.recent_queries(1)[0].created_at == "2026-01-02T00:00:00+00:00"
    assert state.counts()["queries_logged"] == 2
    rows = state.query_rows("2026-01-02T00:00:00+00:00")  # the SQLite table's column order
    assert [(r[1], r[2], r[12]) for r in rows] == [
        ("search", "réfund ünicode \ufffd", '["domain/refunds.md"]')
    ]


def test_query_salt_is_stable(state: SharedState) -> None:
    salt = state.query_salt()
    assert len(salt) == 16
    assert state.query_salt() == salt


def test_usage_rows_and_pruning(state: SharedState) -> None:
    assert state.save_usage("b1", ["c1", "c2", "c1"], "claude", "2026-01-01T00:00:00+00:00") == 2
    assert state.save_usage("b2", [], None, "2026-03-01T00:00:00+00:00") == 1  # nothing helped
    state.save_queries([entry("old", "2026-01-01T00:00:00+00:00")], {})
    state.save_queries([entry("new", "2026-03-01T00:00:00+00:00")], {})
    assert state.counts()["usage_events"] == 3
    usage = state.usage_rows("2026-01-01T00:00:00+00:00")
    assert [(r[1], r[2], r[3], r[4]) for r in usage] == [
        ("b1", "c1", 1, "claude"),
        ("b1", "c2", 1, "claude"),
        ("b2", None, 0, None),
    ]
    assert state.prune_before("2026-02-01T00:00:00+00:00") == (1, 2)
    assert [e.query for e in state.recent_queries()] == ["new"]
    assert state.counts()["usage_events"] == 1


def test_a_stricter_mode_takes_the_text_out_of_entries_logged_before(
    state: SharedState,
) -> None:
    """Entries logged in full keep their text until ``log_prompts`` turns hashed (their hash
    stays, so gaps still group them) or off (the hash goes too); hook prompts follow theirs."""
    state.save_queries([entry("rotate hsm keys", "2026-03-01T00:00:00+00:00")], {})
    hook = entry("my private prompt", "2026-03-01T00:00:00+00:00", kind="recall")
    state.save_queries([hook], {})
    assert state.forget_text("full", "full") == 0

    def logged() -> list[tuple[str, str, str | None]]:
        return [(e.kind, e.query, e.query_hash) for e in state.recent_queries()]

    assert state.forget_text("hashed", "off") == 2
    assert logged() == [("recall", "", None), ("search", "", "h-rotate hsm keys")]
    assert state.forget_text("hashed", "off") == 0  # once per change of the settings
    assert state.forget_text("off", "off") == 1
    assert logged() == [("recall", "", None), ("search", "", None)]


def test_text_hashes_are_those_still_logged_with_their_text(state: SharedState) -> None:
    state.save_queries([entry("rotate hsm keys", "2026-03-01T00:00:00+00:00")], {})
    state.save_queries([entry("", "2026-03-01T00:00:00+00:00", query_hash="h-hashed")], {})
    asked = ["h-rotate hsm keys", "h-hashed", "h-never"]
    assert state.text_hashes(asked) == {"h-rotate hsm keys"}
    state.forget_text("hashed", "hashed")
    assert state.text_hashes(asked) == set()


def test_proposals_listed_checked_and_counted(state: SharedState) -> None:
    state.save_proposal(proposal("aaaa", "2026-01-01T00:00:00+00:00"))
    state.save_proposal(proposal("bbbb", "2026-01-02T00:00:00+00:00", "pushed", None))
    assert [p.id for p in state.proposals()] == ["bbbb", "aaaa"]
    assert [p.id for p in state.proposals("open")] == ["aaaa"]
    assert [p.id for p in state.open_pulls()] == ["aaaa"]
    state.record_check("aaaa", None, "forge down", "2026-01-03T00:00:00+00:00")
    kept = state.proposals("open")[0]
    assert (kept.status, kept.forge_error) == ("open", "forge down")
    state.record_check("aaaa", "merged", None, "2026-01-04T00:00:00+00:00")
    merged = state.proposals("merged")[0]
    assert merged == replace(
        proposal("aaaa", "2026-01-01T00:00:00+00:00", "merged"),
        status_checked_at="2026-01-04T00:00:00+00:00",
    )
    assert state.open_pulls() == []
    counts = state.counts()
    assert (counts["proposals_merged"], counts["proposals_pushed"]) == (1, 1)


def test_a_pushed_proposal_takes_the_pull_request_found_for_it(state: SharedState) -> None:
    pushed = replace(proposal("cccc", "2026-01-01T00:00:00+00:00", "pushed", None), forge_error="x")
    state.save_proposal(pushed)
    state.save_proposal(proposal("dddd", "2026-01-02T00:00:00+00:00"))
    closed = proposal("eeee", "2026-01-02T00:00:01+00:00", "closed")
    state.save_proposal(closed)
    state.save_proposal(proposal("ffff", "2026-01-02T00:00:02+00:00", "merged"))
    assert state.unfollowed() == [pushed, closed]
    state.record_pull("cccc", 9, "https://github.com/o/r/pull/9", "open", "2026-01-03T00:00:00Z")
    assert state.unfollowed() == [closed]
    assert [p.id for p in state.open_pulls()] == ["cccc", "dddd"]
    assert state.proposals("open")[1] == replace(
        pushed,
        status="open",
        pr_number=9,
        pr_url="https://github.com/o/r/pull/9",
        forge_error=None,
        status_checked_at="2026-01-03T00:00:00Z",
    )


def test_a_proposals_own_record_replaces_the_one_a_sync_adopted(state: SharedState) -> None:
    """T1: a record written after a sync adopted its branch (it waited for the index, or its
    commit's clock was behind) was dropped for the adoption's, its client and pull request
    lost; another record of that id (not that commit) or a second save leaves it as it is."""
    own = proposal("abab", "2026-01-02T00:00:00+00:00")
    adopted = replace(
        own,
        status="pushed",
        pr_number=None,
        client=None,
        created_at="2026-01-01T23:59:00+00:00",
        forge_error=f"{ADOPTED_AS} briefd found the branch briefd/proposal-abab without …",
    )
    state.save_proposal(adopted)
    state.save_proposal(replace(own, commit_hash="beef", client="other"))
    assert state.proposals() == [adopted]
    state.save_proposal(own)
    assert state.proposals() == [own]
    state.save_proposal(adopted)
    assert state.proposals() == [own]


def test_session_memory_expires(state: SharedState) -> None:
    state.remember("s", [("c1", "h1")], now=1000.0, hours=1)
    assert state.seen("s", now=1000.0 + 3599, hours=1) == {"c1": "h1"}
    assert state.seen("s", now=1000.0 + 3601, hours=1) == {}
    state.remember("s", [("c1", "h1b"), ("c2", "h2")], now=1010.0, hours=1)
    assert state.seen("s", now=1020.0, hours=1) == {"c1": "h1b", "c2": "h2"}
    assert state.seen("other", now=1020.0, hours=1) == {}
    state.remember("t", [("c3", "h3")], now=1000.0 + 7200, hours=1)  # forgets expired rows
    assert state.seen("s", now=0.0, hours=1) == {}


def test_manifests_kept_once_and_pruned(state: SharedState) -> None:
    held = Manifest("rk", (("c1", "f1", 120), ("c2", "f2", 80)), "abc123")
    state.save_manifest("0123456789abcdef", held, "2026-01-01T00:00:00+00:00")
    state.save_manifest("0123456789abcdef", Manifest("other", ()), "2026-01-05T00:00:00+00:00")
    got = state.manifest("0123456789abcdef")
    assert got is not None
    assert (got.request_key, got.sections) == ("rk", held.sections)
    if state.shared:  # the commit and replica it was compiled on matter between replicas
        assert (got.commit, got.replica) == ("abc123", "replica-a")
    assert state.manifest("ffffffffffffffff") is None
    assert state.prune_manifests("2026-02-01T00:00:00+00:00") == 1
    assert state.manifest("0123456789abcdef") is None


def test_exclusive_is_held_by_one_at_a_time(state: SharedState) -> None:
    with state.exclusive("forge-refresh") as first:
        assert first
    with state.exclusive("forge-refresh") as again:
        assert again  # released when the block ended


def test_a_held_lock_is_waited_for_a_bounded_time(state: SharedState) -> None:
    """A proposal push waits for another's, for a bounded time: then it is told so."""
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with state.exclusive("proposal-push", wait=5) as mine:
            assert mine
            held.set()
            release.wait(20)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(10)
        started = time.monotonic()
        with state.exclusive("proposal-push", wait=0.5) as mine:
            assert mine is False
        assert time.monotonic() - started >= 0.45
    finally:
        release.set()
        holder.join(20)
    with state.exclusive("proposal-push", wait=0.5) as again:
        assert again


def test_replicas_report_their_commit(state: SharedState) -> None:
    state.save_replica(ReplicaStatus("replica-a", "abc", "fp", "2026-01-01T00:00:00+00:00"))
    listed = state.replicas()
    assert listed
    if state.shared:
        assert [(r.replica, r.commit) for r in listed] == [("replica-a", "abc")]


def test_a_webhook_delivery_is_claimed_once_within_the_window(state: SharedState) -> None:
    assert state.claim_deliveries(["id:d-1", "body:aa"], 1000.0, 60) is None
    assert state.claim_deliveries(["id:d-1", "body:bb"], 1010.0, 60) == "id:d-1"
    assert state.claim_deliveries(["id:d-2", "body:aa"], 1020.0, 60) == "body:aa"
    assert state.claim_deliveries(["id:d-2", "body:cc"], 1030.0, 60) is None  # none spent
    assert state.claim_deliveries(["id:d-3", "body:bb"], 1040.0, 60) is None
    assert state.claim_deliveries(["id:d-1", "body:aa"], 1061.0, 60) is None  # forgotten
    assert state.claim_deliveries(["id:d-3"], 1062.0, 60) == "id:d-3"
