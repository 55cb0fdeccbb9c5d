"""What only the PostgreSQL engine does: numbered migrations applied once, broadcasts between
replicas (LISTEN/NOTIFY), a lock one replica holds at a time, and degraded-not-down when the
server goes away and comes back."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import psycopg
import pytest

from briefd.errors import ConfigError, StateUnavailableError, StoreError
from briefd.settings import Settings, StateSettings
from briefd.state import SYNC_CHANNEL, Manifest, Proposal, ReplicaStatus, open_state
from briefd.state.base import MISSED
from briefd.state.migrations import MIGRATIONS
from briefd.state.postgres import PostgresState, redacted
from tests.postgres import Postgres
from tests.relay import Relay


@pytest.fixture
def pair(postgres: Postgres) -> Iterator[tuple[PostgresState, PostgresState]]:
    postgres.reset()
    a = PostgresState(StateSettings(url=postgres.url), "replica-a")
    b = PostgresState(StateSettings(url=postgres.url), "replica-b")
    try:
        yield a, b
    finally:
        a.close()
        b.close()


def test_migrations_run_once_for_replicas_starting_together(postgres: Postgres) -> None:
    postgres.reset()
    states = [PostgresState(StateSettings(url=postgres.url), f"r{i}") for i in range(3)]
    threads = [threading.Thread(target=s.counts) for s in states]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with psycopg.connect(postgres.url) as conn:
        rows = conn.execute("SELECT version, name FROM state_migrations").fetchall()
    assert rows == [(m.version, m.name) for m in MIGRATIONS]
    for s in states:
        assert s.counts()["queries_logged"] == 0
        s.close()


def test_a_broadcast_reaches_the_other_replica_only(
    pair: tuple[PostgresState, PostgresState],
) -> None:
    a, b = pair
    heard_a: list[str] = []
    heard_b: list[str] = []
    a.listen(SYNC_CHANNEL, heard_a.append)
    b.listen(SYNC_CHANNEL, heard_b.append)
    deadline = time.monotonic() + 10
    while not heard_b and time.monotonic() < deadline:  # the listener connects meanwhile
        a.broadcast(SYNC_CHANNEL, "sync")
        time.sleep(0.3)
    assert heard_b and set(heard_b) == {"sync"}
    assert heard_a == []  # a replica does not hear itself


def test_a_broadcast_reaches_a_replica_given_the_same_name(
    postgres: Postgres, caplog: pytest.LogCaptureFixture
) -> None:
    """S1: two replicas left with one state.replica (a copied compose service) skipped each
    other's broadcasts, so a webhook to one never synced the other; each process is its own
    sender now, and the name given twice is said."""
    postgres.reset()
    a = PostgresState(StateSettings(url=postgres.url), "briefd-2")
    b = PostgresState(StateSettings(url=postgres.url), "briefd-2")
    try:
        heard_a: list[str] = []
        heard_b: list[str] = []
        a.listen(SYNC_CHANNEL, heard_a.append)
        b.listen(SYNC_CHANNEL, heard_b.append)
        deadline = time.monotonic() + 10
        while not heard_b and time.monotonic() < deadline:
            a.broadcast(SYNC_CHANNEL, "sync")
            time.sleep(0.3)
        assert heard_b and set(heard_b) == {"sync"}
        assert heard_a == []
    finally:
        a.close()
        b.close()
    said = {r.getMessage() for r in caplog.records if r.name == "briefd.state"}
    assert said == {
        "another replica is also named 'briefd-2' (state.replica): give each its own name"
    }


def test_the_lock_is_held_by_one_replica_at_a_time(
    pair: tuple[PostgresState, PostgresState],
) -> None:
    a, b = pair
    with a.exclusive("forge-refresh") as mine:
        assert mine
        with b.exclusive("forge-refresh") as theirs:
            assert not theirs
        with b.exclusive("another job") as other:
            assert other
    with b.exclusive("forge-refresh") as now_theirs:
        assert now_theirs
    order: list[str] = []

    def waiting() -> None:
        with b.exclusive("proposal-push", wait=30) as mine:
            order.append(f"b {mine}")

    with a.exclusive("proposal-push", wait=30) as first:
        waiter = threading.Thread(target=waiting)
        waiter.start()
        time.sleep(0.3)
        order.append(f"a {first}")
    waiter.join(10)
    assert order == ["a True", "b True"]  # b waited for a's push to end


def test_a_push_lock_a_frozen_replica_holds_is_waited_for_a_bounded_time(
    pair: tuple[PostgresState, PostgresState],
) -> None:
    """S1, T1: a replica frozen (SIGSTOP, a VM paused) while pushing a proposal keeps its
    connection, so its lock: every other replica's proposal waited for it without end. The
    wait is bounded; the replica keeps serving (the state is not taken for unreachable), and
    the lock is its again once released."""
    a, b = pair
    with a.exclusive("proposal-push", wait=30) as first:
        assert first
        started = time.monotonic()
        with b.exclusive("proposal-push", wait=1.5) as theirs:
            waited = time.monotonic() - started
        assert theirs is False and 1.4 < waited < 10
        assert b.problem() is None
        b.remember("session", [("c1", "h1")], time.time(), 1)  # still answering
    with b.exclusive("proposal-push", wait=1.5) as now_theirs:
        assert now_theirs


def test_waiting_for_a_push_lock_leaves_the_pool_to_other_calls(postgres: Postgres) -> None:
    """S1: proposals waiting for another replica's push held a pooled connection each; with
    pool_size of them, every other call (a hook's session memory, usage, manifests) waited
    timeout_seconds and the replica called PostgreSQL unreachable, degraded while it answered."""
    postgres.reset()
    holder = PostgresState(StateSettings(url=postgres.url), "replica-a")
    waiter = PostgresState(StateSettings(url=postgres.url, pool_size=2, timeout_seconds=1), "b")
    held, waited = threading.Event(), []
    try:
        waiter.counts()

        def push() -> None:
            with holder.exclusive("proposal-push", wait=30):
                held.set()
                time.sleep(3)

        def wait_for_push() -> None:
            with waiter.exclusive("proposal-push", wait=30) as mine:
                waited.append(mine)

        threads = [threading.Thread(target=push)]
        threads[0].start()
        held.wait(5)
        threads += [threading.Thread(target=wait_for_push) for _ in range(3)]
        for t in threads[1:]:
            t.start()
        time.sleep(0.5)
        waiter.remember("session", [("c1", "h1")], time.time(), 1)  # while they wait
        assert waiter.seen("session", time.time(), 1) == {"c1": "h1"}
        assert waiter.problem() is None
        for t in threads:
            t.join(15)
        assert waited == [True, True, True]
    finally:
        holder.close()
        waiter.close()


def test_unreachable_fails_fast_then_recovers(postgres: Postgres) -> None:
    postgres.reset()
    state = PostgresState(StateSettings(url=postgres.url, timeout_seconds=1.0), "replica-a")
    try:
        state.save_usage("b1", ["c1"], None, "2026-01-01T00:00:00+00:00")
        postgres.stop()
        with pytest.raises(StateUnavailableError, match="unreachable"):
            state.save_usage("b2", ["c1"], None, "2026-01-01T00:00:00+00:00")
        started = time.perf_counter()
        with pytest.raises(StateUnavailableError):
            state.seen("s", 0.0, 1)
        assert time.perf_counter() - started < 0.2  # fails at once, no wait on the hook's path
        assert "unreachable" in (state.problem() or "")
        postgres.start()
        deadline = time.monotonic() + 15
        while state.problem() is not None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert state.problem() is None
        state.save_usage("b3", ["c1"], None, "2026-01-01T00:00:00+00:00")
        assert state.counts()["usage_events"] == 2  # nothing else was needed
    finally:
        postgres.start() if state.problem() else None
        state.close()


def test_a_server_back_but_refusing_says_its_new_reason(postgres: Postgres) -> None:
    """S1, O1: the problem kept the reason of the first failure for the whole outage: a
    server restarted without briefd's database still said "Connection refused"."""
    postgres.reset()
    with psycopg.connect(postgres.url, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS gone")
        conn.execute("CREATE DATABASE gone")
    url = postgres.url.rsplit("/", 1)[0] + "/gone"
    state = PostgresState(StateSettings(url=url, timeout_seconds=1.0), "replica-a")
    stopped = False
    try:
        state.counts()
        postgres.stop()
        stopped = True
        with pytest.raises(StateUnavailableError):
            state.counts()
        first = state.problem() or ""
        assert "does not exist" not in first
        postgres.start()
        stopped = False
        with psycopg.connect(postgres.url, autocommit=True) as conn:
            conn.execute("DROP DATABASE gone WITH (FORCE)")
        deadline = time.monotonic() + 10
        while 'database "gone" does not exist' not in (state.problem() or ""):
            assert time.monotonic() < deadline, state.problem()
            time.sleep(0.1)
    finally:
        if stopped:
            postgres.start()
        state.close()


def test_the_url_is_checked_and_its_password_never_shown(settings: Settings) -> None:
    bad = Settings(db=settings.db, state=StateSettings(url="mysql://x"))
    with pytest.raises(ConfigError, match=r"postgresql://"):
        open_state(bad, lambda: pytest.fail("no store"))
    assert redacted("postgresql://u:s3cret@h:5/db") == "postgresql://u:***@h:5/db"
    assert redacted("postgresql://u:s3/cr@et@h:5/db") == "postgresql://u:***@h:5/db"
    assert (
        redacted("postgresql://u@h/db?password=s3cret&x=1")
        == "postgresql://u@h/db?password=***&x=1"
    )
    unreachable = StateSettings(url="postgresql://u:s3cret@127.0.0.1:1/db", timeout_seconds=1)
    state = PostgresState(unreachable, "r")
    try:
        with pytest.raises(StateUnavailableError) as caught:
            state.counts()
        assert "s3cret" not in str(caught.value) and "***" in str(caught.value)
    finally:
        state.close()


def test_a_server_refusing_briefd_says_why_and_what_to_do(postgres: Postgres) -> None:
    """S1, O1: a wrong user or database was 'unreachable: couldn't get a connection after
    1.00 sec' (the pool's timeout, the server's reason only in the pool's log), and a role
    without CREATE on the schema answered three lines (the SQL and a caret under it)."""
    postgres.reset()
    base = postgres.url.rsplit("/", 1)[0]
    refusals = {
        base.replace("briefd@", "nobody_here@") + "/briefd": (
            'role "nobody_here" does not exist (check the user in state.url'
        ),
        base + "/nowhere": 'database "nowhere" does not exist (check the database in state.url',
    }
    for url, reason in refusals.items():
        state = PostgresState(StateSettings(url=url, timeout_seconds=1.0), "r")
        try:
            with pytest.raises(StateUnavailableError) as caught:
                state.counts()
            assert reason in str(caught.value) and "couldn't get a connection" not in str(
                caught.value
            )
            assert reason in (state.problem() or "")
        finally:
            state.close()
    with psycopg.connect(postgres.url, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'reader'").fetchone():
            conn.execute("CREATE ROLE reader LOGIN")
        conn.execute("GRANT USAGE ON SCHEMA public TO PUBLIC")  # as a new database has it
    state = PostgresState(StateSettings(url=base.replace("briefd@", "reader@") + "/briefd"), "r")
    try:
        with pytest.raises(StoreError) as refused:
            state.save_usage("b1", ["c1"], None, "2026-01-01T00:00:00+00:00")
        assert str(refused.value) == (
            "the shared state refused to create briefd's tables: permission denied for schema "
            "public (GRANT USAGE, CREATE ON SCHEMA public TO the user in state.url, or connect as the "
            "database's owner)"
        )
    finally:
        state.close()


def test_a_role_without_rights_to_create_uses_tables_its_owner_migrated(
    postgres: Postgres,
) -> None:
    """S1: a least-privilege role (rights on briefd's tables, none to create any: the database
    owner migrated it) was refused every call, 'the shared state refused to create briefd's
    tables: permission denied for schema public', though every table was there and current:
    each start ran CREATE TABLE IF NOT EXISTS, which PostgreSQL checks against the schema."""
    postgres.reset()
    owner = PostgresState(StateSettings(url=postgres.url), "owner")
    try:
        assert owner.counts()["usage_events"] == 0  # migrated by the owner
    finally:
        owner.close()
    with psycopg.connect(postgres.url, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'app'").fetchone():
            conn.execute("CREATE ROLE app LOGIN")
        conn.execute("GRANT USAGE ON SCHEMA public TO app")
        conn.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO app")
        conn.execute("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO app")
    app = PostgresState(StateSettings(url=postgres.url.replace("briefd@", "app@")), "r")
    try:
        assert app.save_usage("b1", ["c1"], None, "2026-01-01T00:00:00+00:00") == 1
        assert app.counts()["usage_events"] == 1
        assert app.problem() is None
    finally:
        app.close()


def test_tables_gone_from_a_database_made_anew_are_made_again(postgres: Postgres) -> None:
    """S1: a database dropped and made anew under running replicas (restored from a dump made
    before briefd, a server replaced without its volume) left every state call refused,
    'relation "usage_events" does not exist', for good, while health said ok: the tables
    were made by each process's first call only."""
    postgres.reset()
    state = PostgresState(StateSettings(url=postgres.url), "r")
    try:
        assert state.save_usage("b1", ["c1"], None, "2026-01-01T00:00:00+00:00") == 1
        postgres.reset()
        with pytest.raises(StoreError, match='relation "usage_events" does not exist'):
            state.save_usage("b2", ["c1"], None, "2026-01-01T00:00:00+00:00")
        assert state.save_usage("b3", ["c1"], None, "2026-01-01T00:00:00+00:00") == 1
        assert state.counts()["usage_events"] == 1
    finally:
        state.close()


def test_the_first_call_after_a_server_restart_is_not_refused(postgres: Postgres) -> None:
    """S1: after PostgreSQL restarted (a minor upgrade, a failover: down a second or two), a
    replica that had not called it meanwhile still held its pooled connections to the old
    server; the pool checked them one at a time, waiting a second after the second dead one,
    so the first call, with the default timeout_seconds, waited 2 s and failed 'unreachable:
    couldn't get a connection after 2.00 sec' (a usage report 503, a sync's status lost,
    health degraded) though the server answered again."""
    postgres.reset()
    state = PostgresState(StateSettings(url=postgres.url), "r")
    try:
        state.save_usage("b1", ["c1"], None, "2026-01-01T00:00:00+00:00")
        pool = state._pool  # as a busy replica's: several connections in it
        held = [pool.getconn() for _ in range(3)]
        for conn in held:
            pool.putconn(conn)
        postgres.stop()
        postgres.start()
        started = time.perf_counter()
        assert state.save_usage("b2", ["c1"], None, "2026-01-01T00:00:00+00:00") == 1
        assert time.perf_counter() - started < 0.5
        assert state.problem() is None
    finally:
        state.close()


def test_a_call_waiting_on_a_held_lock_fails_within_the_timeout(postgres: Postgres) -> None:
    """S1: a call waiting on a lock another session held (a replica frozen mid-transaction, an
    operator's VACUUM FULL or LOCK TABLE, an overloaded server) waited as long as it was held:
    a bundle, a hook's recall or a usage report hung with it, for good if it never ended."""
    postgres.reset()
    state = PostgresState(StateSettings(url=postgres.url, timeout_seconds=1.0), "r")
    try:
        assert state.counts()["usage_events"] == 0
        with psycopg.connect(postgres.url) as holder:
            holder.execute("LOCK TABLE bundle_manifests, usage_events IN ACCESS EXCLUSIVE MODE")
            let_go = threading.Timer(8, holder.rollback)  # without a bound, the call waits this
            let_go.start()
            started = time.perf_counter()
            with pytest.raises(StateUnavailableError) as caught:
                state.save_manifest("b1", Manifest("k", (("c1", "h1", 4),), "c"), "2026")
            assert time.perf_counter() - started < 3
            let_go.cancel()
            assert " did not answer within 1 s (state.timeout_seconds; a lock held on " in str(
                caught.value
            )
            assert "statement timeout" in str(caught.value)
        deadline = time.monotonic() + 10  # the lock gone: it answers again, nothing else done
        while state.problem() is not None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert state.save_usage("b1", ["c1"], None, "2026-01-01T00:00:00+00:00") == 1
        assert state.manifest("b1") == Manifest("k", (("c1", "h1", 4),), "c", "r")  # kept
    finally:
        state.close()


def test_a_pushed_proposal_is_recorded_after_a_held_lock(postgres: Postgres) -> None:
    """S1, T1: the record of a proposal comes after its push, so it is not cut short by the
    timeout a bundle or a hook's call has: a proposal pushed and unrecorded is lost."""
    postgres.reset()
    state = PostgresState(StateSettings(url=postgres.url, timeout_seconds=1.0), "r")
    pushed = Proposal(
        "p1", "briefd/proposal-p1", "domain/a.md", "d", "c1", None, "pushed", None, "2026"
    )
    try:
        assert state.proposals() == []
        with psycopg.connect(postgres.url) as holder:
            holder.execute("LOCK TABLE proposals IN ACCESS EXCLUSIVE MODE")
            let_go = threading.Timer(2, holder.rollback)
            let_go.start()
            state.save_proposal(pushed)
            let_go.join()
        assert state.proposals() == [pushed]
    finally:
        state.close()


def test_health_is_answered_while_the_server_is_frozen(postgres: Postgres) -> None:
    """S1: a server that accepts but answers nothing (its process stopped, a paused VM, packets
    dropped) held the health check on a pooled connection's check for as long as it lasted:
    /api/health hung, a load balancer's or Docker's probe timed out, and every replica read as
    down together. The check now says within about state.timeout_seconds that it did not
    answer, and the replica is degraded until the server answers again."""
    postgres.reset()
    with Relay(postgres.port) as relay:
        url = f"postgresql://briefd@127.0.0.1:{relay.port}/briefd"
        state = PostgresState(StateSettings(url=url, timeout_seconds=1.0), "r")
        try:
            assert state.problem() is None
            relay.frozen.set()
            said: list[str | None] = []
            asking = threading.Thread(target=lambda: said.append(state.problem()), daemon=True)
            started = time.perf_counter()
            asking.start()
            asking.join(8)
            assert said and " did not answer within 1 s " in (said[0] or ""), said
            assert time.perf_counter() - started < 3
            started = time.perf_counter()
            with pytest.raises(StateUnavailableError, match="did not answer within 1 s"):
                state.save_usage("b1", ["c1"], None, "2026-01-01T00:00:00+00:00")
            assert time.perf_counter() - started < 0.2  # the others fail at once meanwhile
            relay.frozen.clear()
            deadline = time.monotonic() + 10
            while state.problem() is not None and time.monotonic() < deadline:
                time.sleep(0.2)
            assert state.save_usage("b2", ["c1"], None, "2026-01-01T00:00:00+00:00") == 1
        finally:
            relay.frozen.clear()
            state.close()


def test_a_broadcast_missed_while_the_server_was_away_is_caught_up(
    pair: tuple[PostgresState, PostgresState],
    postgres: Postgres,
) -> None:
    """S1, K3: a webhook reaching one replica while PostgreSQL was away synced that replica
    alone; its broadcast failed, and the others, listening again once the server was back,
    never synced (with sync.interval 0, until the next push): replicas at two commits."""
    a, b = pair
    heard: list[str] = []

    def sync(payload: str) -> None:  # as a sync does: it records the replica's status
        try:
            b.save_replica(ReplicaStatus("replica-b", "c1", None, "2026-01-01T00:00:00+00:00"))
        except StoreError as exc:
            payload = f"{payload} (not recorded: {exc})"
        heard.append(payload)

    b.listen(SYNC_CHANNEL, sync)
    deadline = time.monotonic() + 10
    while not heard and time.monotonic() < deadline:  # the listener connects meanwhile
        a.broadcast(SYNC_CHANNEL, "sync")
        time.sleep(0.2)
    assert heard
    postgres.stop()
    try:
        heard.clear()
        with pytest.raises(StateUnavailableError):
            a.broadcast(SYNC_CHANNEL, "sync")
        with pytest.raises(StateUnavailableError):
            b.counts()  # b knows the server is away too (a prober watches for it)
    finally:
        postgres.start()
    deadline = time.monotonic() + 15
    while not heard and time.monotonic() < deadline:
        time.sleep(0.2)
    assert heard == [MISSED]


def test_a_bundle_made_while_the_server_was_away_is_known_to_the_others_once_back(
    pair: tuple[PostgresState, PostgresState], postgres: Postgres
) -> None:
    """S1, B5, T2: a bundle compiled on one replica while PostgreSQL was away stayed unknown
    to the others after it was back: its report_usage through them answered 404 'no bundle
    … was issued by this index' and its base= a full bundle, for as long as it was kept."""
    a, b = pair
    held = Manifest("key-1", (("c1", "h1", 40),), "commit-1")
    assert a.counts()["usage_events"] == 0
    postgres.stop()
    try:
        with pytest.raises(StateUnavailableError):
            a.save_manifest("bundle-during", held, "2026-12-01T00:00:00+00:00")
    finally:
        postgres.start()
    deadline = time.monotonic() + 15
    while b.manifest("bundle-during") is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert b.manifest("bundle-during") == Manifest(
        "key-1", (("c1", "h1", 40),), "commit-1", "replica-a"
    )


def test_a_sessions_memory_holds_through_an_outage_and_reaches_the_others(
    pair: tuple[PostgresState, PostgresState], postgres: Postgres
) -> None:
    """S1, I8: while PostgreSQL was away a session's every prompt got the same sections again
    (nothing remembered, nothing read), and what it was given then was unknown to the other
    replicas once the server was back, so they gave it again too."""
    a, b = pair
    now = time.time()
    assert a.seen("s", now, 1) == {}
    postgres.stop()
    try:
        with pytest.raises(StateUnavailableError):
            a.remember("s", [("c1", "h1")], now, 1)
        assert a.seen("s", now + 1, 1) == {"c1": "h1"}  # this replica's own memory meanwhile
        with pytest.raises(StateUnavailableError):
            a.seen("another session", now + 1, 1)
    finally:
        postgres.start()
    deadline = time.monotonic() + 15
    while b.seen("s", now + 2, 1) == {} and time.monotonic() < deadline:
        time.sleep(0.2)
    assert b.seen("s", now + 2, 1) == {"c1": "h1"}


def test_a_server_that_refuses_writes_is_a_problem(postgres: Postgres) -> None:
    """S1: a database set read-only (a standby, default_transaction_read_only) or a role whose
    write rights were revoked answered SELECT 1, so problem() was None and health said ok
    while every query log flush, usage report and proposal record was refused."""
    postgres.reset()
    owner = PostgresState(StateSettings(url=postgres.url), "owner")
    try:
        assert owner.problem() is None  # briefd's tables, made by their owner
    finally:
        owner.close()
    admin = postgres.url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("ALTER DATABASE briefd SET default_transaction_read_only = on")
    state = PostgresState(StateSettings(url=postgres.url), "r")
    try:
        with pytest.raises(StoreError, match="read-only transaction"):
            state.save_usage("b1", ["c1"], None, "2026-01-01T00:00:00+00:00")
        assert (state.problem() or "").startswith(
            "the shared state refuses writes: its transactions are read-only"
        )
    finally:
        state.close()
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute("ALTER DATABASE briefd RESET default_transaction_read_only")
    with psycopg.connect(postgres.url, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'nodelete'").fetchone():
            conn.execute("CREATE ROLE nodelete LOGIN")
        conn.execute("GRANT USAGE ON SCHEMA public TO nodelete")
        conn.execute("GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO nodelete")
        conn.execute("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO nodelete")
        conn.execute("REVOKE USAGE ON SEQUENCE usage_events_id_seq FROM nodelete")
    state = PostgresState(StateSettings(url=postgres.url.replace("briefd@", "nodelete@")), "r")
    try:
        problem = state.problem() or ""
        assert problem.startswith("the shared state refuses writes: the user in state.url lacks")
        assert "DELETE on query_log" in problem and "USAGE on public.usage_events_id_seq" in problem
        assert "INSERT on" not in problem and "UPDATE on" not in problem
    finally:
        state.close()
