from __future__ import annotations

import inspect
import json
import re
import shutil
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path

import psycopg
import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.embeddings.base import EmbeddingKind, Vectors
from briefd.embeddings.fake import FakeEmbedder
from briefd.errors import SourceError, StoreError
from briefd.service import create_app
from briefd.service.metrics import CountingEmbedder, Metrics, labels_key
from briefd.settings import Settings, with_overrides
from briefd.tokens import count_tokens
from tests.ports import free_port
from tests.postgres import Postgres
from tests.service.conftest import service_config
from tests.service.live import TOKEN
from tests.service.test_bounded import WORDS, served
from tests.service.test_nothing_lost import another_process_writing

AUTH = {"authorization": f"Bearer {TOKEN}"}


def sample(metrics: str, series: str) -> float:
    match = re.search(rf"^{re.escape(series)} (\S+)$", metrics, re.MULTILINE)
    assert match, f"{series} missing from /metrics"
    return float(match.group(1))


def serve_once(settings: Settings, *paths: str) -> dict[str, str]:
    """Start the app on a fresh Briefd, GET each path, stop it (the lifespan flushes)."""
    with (
        Briefd(settings, embedder=None) as api,
        TestClient(create_app(api, service_config())) as http,
    ):
        return {p: http.get(p, headers=AUTH).text for p in paths}


def test_counters_survive_a_restart_until_reset(service_settings: Settings) -> None:
    with (
        Briefd(service_settings, embedder=None) as api,
        TestClient(create_app(api, service_config())) as http,
    ):
        http.headers.update(AUTH)
        for query in ("retry policy", "chargeback", "settlement"):
            http.get("/api/search", params={"q": query})
        for _ in range(2):
            http.post("/api/bundle", json={"task": "add retries to card payments"})
        before = http.get("/metrics").text
    assert sample(before, 'briefd_requests_total{name="search",outcome="ok",surface="rest"}') == 3
    tokens = sample(before, 'briefd_tokens_served_total{name="search",surface="rest"}')
    assert tokens > 0

    after = serve_once(service_settings, "/metrics")["/metrics"]
    assert sample(after, 'briefd_requests_total{name="search",outcome="ok",surface="rest"}') == 3
    assert sample(after, 'briefd_tokens_served_total{name="search",surface="rest"}') == tokens
    assert sample(after, 'briefd_bundle_cache_total{result="hit"}') == 1
    assert sample(after, 'briefd_bundle_cache_total{result="miss"}') == 1
    assert sample(after, 'briefd_request_duration_seconds_count{name="search",surface="rest"}') == 3

    with (
        Briefd(service_settings, embedder=None) as api,
        TestClient(create_app(api, service_config())) as http,
    ):
        assert http.post("/api/admin/reset-counters", headers=AUTH).status_code == 200
    reset = serve_once(service_settings, "/metrics")["/metrics"]
    assert 'name="search"' not in reset
    assert not re.search(r"^briefd_tokens_served_total\{", reset, re.MULTILINE)
    assert not re.search(r"^briefd_bundle_cache_total\{", reset, re.MULTILINE)


def test_counters_are_saved_at_shutdown_while_the_shared_state_is_down(
    service_settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """S1, O5: a replica stopped (docker stop) while PostgreSQL is away cannot hand over its
    query log, but its counters live in the local index and are saved; the log waits."""
    down = with_overrides(
        service_settings,
        {"state.url": f"postgresql://u:secret@127.0.0.1:{free_port()}/x", "state.replica": "r1"},
    )
    with (
        Briefd(down, embedder=None) as api,
        TestClient(create_app(api, service_config(flush_seconds=3600))) as http,
    ):
        http.headers.update(AUTH)
        for query in ("retry policy", "chargeback"):
            assert http.get("/api/search", params={"q": query}).status_code == 200
        state = http.app.state.briefd  # type: ignore[attr-defined]
        with pytest.raises(StoreError, match="unreachable"):
            state.flush()
        assert sorted(e.query for e in state._pending) == ["chargeback", "retry policy"]
    said = [r.getMessage() for r in caplog.records if "at shutdown" in r.getMessage()]
    assert [m.split(": ")[0] for m in said] == ["could not save the query log at shutdown"]
    search = labels_key({"name": "search", "outcome": "ok", "surface": "rest"})
    with Briefd(down, embedder=None) as later:
        assert later.counters()[("briefd_requests", search)] == 2


def test_a_flush_failing_while_the_shared_state_is_down_is_said_once(
    service_settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """S1, O2: every flush (5 s) logged 'could not save the query log' for as long as
    PostgreSQL was away, 720 lines an hour beside the one saying it is unreachable."""
    down = with_overrides(
        service_settings, {"state.url": f"postgresql://u:p@127.0.0.1:{free_port()}/x"}
    )
    with (
        Briefd(down, embedder=None) as api,
        TestClient(create_app(api, service_config(flush_seconds=0.05))) as http,
    ):
        for n in range(5):
            http.get("/api/search", params={"q": f"retry policy {n}"}, headers=AUTH)
            time.sleep(0.2)
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("could not save")]
    assert [m.split(": ")[0] for m in said] == [
        "could not save the query log",
        "could not save the query log at shutdown",
    ]


def test_a_query_log_flush_that_fails_after_saving_saves_each_entry_once(
    service_settings: Settings, postgres: Postgres
) -> None:
    """S1, T3: the shared query log was saved, then pruned; a prune refused (a role that may
    not DELETE) kept the entries for the next flush, which saved them again: every search
    counted once per flush (5 after five seconds), in gaps and usage alike."""
    postgres.reset()
    with Briefd(with_overrides(service_settings, {"state.url": postgres.url}), None) as owner:
        owner.state.counts()  # briefd's tables, made by their owner
    with psycopg.connect(postgres.url, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'keeper'").fetchone():
            conn.execute("CREATE ROLE keeper LOGIN")
        conn.execute("GRANT USAGE ON SCHEMA public TO keeper")
        conn.execute("GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO keeper")
        conn.execute("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO keeper")
    keeper = with_overrides(
        service_settings, {"state.url": postgres.url.replace("briefd@", "keeper@")}
    )
    with (
        Briefd(keeper, embedder=None) as api,
        TestClient(create_app(api, service_config(flush_seconds=3600))) as http,
    ):
        state = http.app.state.briefd  # type: ignore[attr-defined]
        http.get("/api/search", params={"q": "zanzibar onboarding"}, headers=AUTH)
        for _ in range(2):
            with pytest.raises(StoreError, match="permission denied for table query_log"):
                state.flush()
        with psycopg.connect(postgres.url, autocommit=True) as conn:
            conn.execute("GRANT DELETE ON ALL TABLES IN SCHEMA public TO keeper")
        state.flush()
        with psycopg.connect(postgres.url) as conn:
            logged = conn.execute(
                "SELECT count(*) FROM query_log WHERE query = 'zanzibar onboarding'"
            ).fetchone()
        assert logged == (1,)


def test_metrics_are_scraped_while_the_shared_state_is_down(service_settings: Settings) -> None:
    """S1, I4: /metrics reads the counters and the local index, not PostgreSQL, so a degraded
    replica is still scraped (it answered 503 state_unavailable)."""
    down = with_overrides(
        service_settings, {"state.url": f"postgresql://u:p@127.0.0.1:{free_port()}/x"}
    )
    scraped = serve_once(down, "/api/search?q=chargeback", "/metrics")["/metrics"]
    assert sample(scraped, "briefd_index_documents") == 45
    assert sample(scraped, 'briefd_requests_total{name="search",outcome="ok",surface="rest"}') == 1


def test_stats_answer_while_the_shared_state_is_down(service_settings: Settings) -> None:
    """S1, I5: /api/stats answered 503 for the whole outage, so the dashboard of a degraded
    replica went blank; the index's figures answer, the team's counts are unknown (None, not
    0) and the reason is given."""
    down = with_overrides(
        service_settings, {"state.url": f"postgresql://u:p@127.0.0.1:{free_port()}/x"}
    )
    stats = json.loads(serve_once(down, "/api/stats")["/api/stats"])
    assert stats["index"]["documents"] == 45
    assert (stats["proposals"], stats["usage_events"], stats["queries_logged"]) == (None,) * 3
    assert "unreachable" in stats["state_error"] and ":p@" not in stats["state_error"]


def test_the_open_health_probe_never_shows_the_client_keys_password(
    service_settings: Settings,
) -> None:
    """I3, S1: state.url's ``sslpassword`` (the passphrase of the client's TLS key) was shown
    as written in every 'unreachable' line, and so in /api/health's state_error, which anyone
    who reaches the port may read without the token."""
    url = f"postgresql://u@127.0.0.1:{free_port()}/x?sslmode=disable&sslpassword=k3y-pass&application_name=b"
    down = with_overrides(service_settings, {"state.url": url})
    with (
        Briefd(down, embedder=None) as api,
        TestClient(create_app(api, service_config())) as http,
    ):
        http.get("/api/stats", headers=AUTH)
        health = http.get("/api/health", headers=AUTH).json()
    assert "k3y-pass" not in health["state_error"]
    assert (
        "?sslmode=disable&sslpassword=***&application_name=b) is unreachable"
        in health["state_error"]
    )


def test_the_open_health_probe_says_only_that_the_shared_state_is_unreachable(
    service_settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """I3, S1: /api/health, open without the token, showed PostgreSQL's host, port, user and
    database (and what the server said) to anyone who reached the port. Without the token it
    now says only that the shared state is unreachable; the token and the log have the rest."""
    port = free_port()
    down = with_overrides(
        service_settings, {"state.url": f"postgresql://alice@127.0.0.1:{port}/payments_prod"}
    )
    with (
        Briefd(down, embedder=None) as api,
        TestClient(create_app(api, service_config())) as http,
    ):
        http.get("/api/stats", headers=AUTH)
        anonymous = http.get("/api/health").json()  # no token: the load balancer's probe
        wrong = http.get("/api/health", headers={"authorization": "Bearer nope"}).json()
        operator = http.get("/api/health", headers=AUTH).json()
    assert anonymous["status"] == operator["status"] == "degraded"
    assert (
        anonymous["state_error"]
        == wrong["state_error"]
        == (
            "the shared state is unreachable; search and bundles go on from the local index (the "
            "reason is in the server's log, and in /api/health asked with the API token)"
        )
    )
    assert f"alice@127.0.0.1:{port}/payments_prod) is unreachable" in operator["state_error"]
    assert "Connection refused" in operator["state_error"]
    logged = [r.getMessage() for r in caplog.records if r.name == "briefd.state"]
    assert any(f"127.0.0.1:{port}/payments_prod" in line for line in logged), logged


def test_the_open_health_probe_says_only_that_the_shared_state_refuses(
    service_settings: Settings, postgres: Postgres, caplog: pytest.LogCaptureFixture
) -> None:
    """I3, S1: a server that answers but refuses this replica (a role without rights on
    briefd's schema): without the token, health says only that; the log says what it said."""
    postgres.reset()
    with psycopg.connect(postgres.url, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'reader'").fetchone():
            conn.execute("CREATE ROLE reader LOGIN")
    refused = with_overrides(
        service_settings, {"state.url": postgres.url.replace("briefd@", "reader@")}
    )
    with (
        Briefd(refused, embedder=None) as api,
        TestClient(create_app(api, service_config())) as http,
    ):
        anonymous = [http.get("/api/health").json() for _ in range(2)]
    assert anonymous[0]["status"] == "degraded"
    assert anonymous[0]["state_error"].startswith(
        "the shared state refuses this replica's requests; search and bundles go on"
    )
    logged = [r.getMessage() for r in caplog.records if r.name == "briefd.state"]
    assert [line for line in logged if "refused to create briefd's tables" in line] == [
        logged[-1]
    ], logged  # once, not at every probe


def test_health_is_degraded_while_the_shared_state_refuses_writes(
    service_settings: Settings, postgres: Postgres
) -> None:
    """S1: PostgreSQL answering but taking no writes (a standby, a read-only database) left
    /api/health "ok" while every query log flush and usage report was refused."""
    postgres.reset()
    settings = with_overrides(service_settings, {"state.url": postgres.url})
    with Briefd(settings, embedder=None) as owner:
        owner.state.counts()  # briefd's tables, made by their owner
    admin = postgres.url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("ALTER DATABASE briefd SET default_transaction_read_only = on")
    try:
        with (
            Briefd(settings, embedder=None) as api,
            TestClient(create_app(api, service_config())) as http,
        ):
            operator = http.get("/api/health", headers=AUTH).json()
            anonymous = http.get("/api/health").json()
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute("ALTER DATABASE briefd RESET default_transaction_read_only")
    assert operator["status"] == anonymous["status"] == "degraded"
    assert operator["state_error"].startswith(
        "the shared state refuses writes: its transactions are read-only"
    )
    assert anonymous["state_error"].startswith("the shared state refuses writes; search and")


def test_stats_answer_while_the_shared_state_refuses_this_replica(
    service_settings: Settings, postgres: Postgres
) -> None:
    """S1, I5: a role without rights on briefd's schema (the server up, the state refusing)
    still blanked the dashboard: /api/stats answered 503 'store' where bundles, hooks and
    health go on and say why."""
    postgres.reset()
    with psycopg.connect(postgres.url, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'reader'").fetchone():
            conn.execute("CREATE ROLE reader LOGIN")
    url = postgres.url.replace("briefd@", "reader@")
    stats = json.loads(
        serve_once(with_overrides(service_settings, {"state.url": url}), "/api/stats")["/api/stats"]
    )
    assert stats["index"]["documents"] == 45
    assert (stats["proposals"], stats["usage_events"], stats["queries_logged"]) == (None,) * 3
    assert stats["state_error"].startswith("the shared state refused to create briefd's tables")


def test_two_processes_on_one_index_add_up_their_counts(service_settings: Settings) -> None:
    """I4: `briefd serve` and a `briefd mcp` a client spawned count into the same index; each
    adds what it counted, so neither writes its own total over the other's."""
    search = 'briefd_requests_total{name="search",outcome="ok",surface="rest"}'
    with (
        Briefd(service_settings, embedder=None) as first_api,
        TestClient(create_app(first_api, service_config(flush_seconds=60))) as first,
        Briefd(service_settings, embedder=None) as second_api,
        TestClient(create_app(second_api, service_config(flush_seconds=60))) as second,
    ):
        for query in ("retry policy", "chargeback", "settlement"):
            first.get("/api/search", params={"q": query}, headers=AUTH)
        second.get("/api/search", params={"q": "refund window"}, headers=AUTH)
        second.get("/api/search", params={"q": "refund window"}, headers=AUTH)
        assert sample(second.get("/metrics", headers=AUTH).text, search) == 2
    # the first one stopped last, after the second had saved its two
    after = serve_once(service_settings, "/metrics")["/metrics"]
    assert sample(after, search) == 5
    assert sample(after, 'briefd_request_duration_seconds_count{name="search",surface="rest"}') == 5


def test_a_server_shows_the_counts_another_process_saved(service_settings: Settings) -> None:
    """I4: a `briefd mcp` a client spawned beside `briefd serve` saves its counts into the
    index; the server's /metrics (and dashboard) show them after its next flush, not only
    after a restart."""
    search = 'briefd_requests_total{name="search",outcome="ok",surface="rest"}'
    with (
        Briefd(service_settings, embedder=None) as serve_api,
        TestClient(create_app(serve_api, service_config(flush_seconds=3600))) as serve,
    ):
        serve.headers.update(AUTH)
        serve.get("/api/search", params={"q": "retry policy"})
        with (
            Briefd(service_settings, embedder=None) as other_api,
            TestClient(create_app(other_api, service_config(flush_seconds=3600))) as other,
        ):
            for query in ("chargeback", "settlement", "refund window"):
                other.get("/api/search", params={"q": query}, headers=AUTH)
        # the other process stopped and saved its three; the server saves its one and reads
        serve.app.state.briefd.flush()  # type: ignore[attr-defined]
        metrics = serve.get("/metrics").text
        assert sample(metrics, search) == 4
        duration = 'briefd_request_duration_seconds_count{name="search",surface="rest"}'
        assert sample(metrics, duration) == 4
        serve.get("/api/search", params={"q": "payouts"})
        assert sample(serve.get("/metrics").text, search) == 5
        serve.app.state.briefd.flush()  # type: ignore[attr-defined]
        assert sample(serve.get("/metrics").text, search) == 5  # saved once, counted once
        requests = serve.get("/api/stats").json()["requests"]  # the dashboard's table
    row = next(r for r in requests if (r["surface"], r["name"]) == ("rest", "search"))
    assert row["count"] == 5
    assert sample(serve_once(service_settings, "/metrics")["/metrics"], search) == 5


def test_counts_a_busy_index_refused_are_saved_once_later(service_settings: Settings) -> None:
    with (
        Briefd(service_settings, embedder=None) as api,
        TestClient(create_app(api, service_config(flush_seconds=60))) as http,
    ):
        state = http.app.state.briefd  # type: ignore[attr-defined]
        assert http.get("/api/scopes", headers=AUTH).status_code == 200  # counted, not logged
        with another_process_writing(service_settings.db), pytest.raises(StoreError):
            state.flush()
        state.flush()
        state.flush()
    with sqlite3.connect(service_settings.db) as conn:
        stored = conn.execute(
            "SELECT value FROM counters WHERE name = 'briefd_requests' AND labels = ?",
            (labels_key({"name": "list_scopes", "outcome": "ok", "surface": "rest"}),),
        ).fetchone()
    assert stored == (1.0,)


def test_counts_follow_the_index_file_replaced_under_the_server(
    service_settings: Settings, tmp_path: Path
) -> None:
    """A new index file put in place of the served one (`briefd index --rebuild` of a damaged
    file, or one deleted and made again) gets the counts saved into the old one too, once,
    besides those counted since."""
    db = service_settings.db
    built = tmp_path / "built.db"
    shutil.copyfile(db, built)  # an index without counters
    scopes = labels_key({"name": "list_scopes", "outcome": "ok", "surface": "rest"})
    with (
        Briefd(service_settings, embedder=None) as api,
        TestClient(create_app(api, service_config(flush_seconds=3600))) as http,
    ):
        http.headers.update(AUTH)
        state = http.app.state.briefd  # type: ignore[attr-defined]
        for _ in range(3):
            http.get("/api/scopes")
        state.flush()
        built.replace(db)
        for suffix in ("-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        http.get("/api/scopes")
        assert http.get("/api/health").json()["notice"].startswith("the index file was replaced")
        state.flush()
        state.flush()
    with sqlite3.connect(db) as conn:
        stored = conn.execute(
            "SELECT value FROM counters WHERE name = 'briefd_requests' AND labels = ?", (scopes,)
        ).fetchone()
    assert stored == (4.0,)


def test_two_processes_save_their_own_counts_into_an_index_file_made_anew(
    service_settings: Settings, tmp_path: Path
) -> None:
    """Each process shows every process's counts, but into a new index file put in place of
    the served one each saves again only its own: the counts are there once, not once per
    process."""
    db = service_settings.db
    built = tmp_path / "built.db"
    shutil.copyfile(db, built)  # an index without counters
    scopes = labels_key({"name": "list_scopes", "outcome": "ok", "surface": "rest"})
    config = service_config(flush_seconds=3600)
    with (
        Briefd(service_settings, embedder=None) as first_api,
        TestClient(create_app(first_api, config)) as first,
        Briefd(service_settings, embedder=None) as second_api,
        TestClient(create_app(second_api, config)) as second,
    ):
        states = [http.app.state.briefd for http in (first, second)]  # type: ignore[attr-defined]
        for http, times in ((first, 3), (second, 2)):
            for _ in range(times):
                http.get("/api/scopes", headers=AUTH)
        for state in (*states, *states):
            state.flush()
        built.replace(db)
        for suffix in ("-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        for state in (*states, states[0]):
            state.flush()
        series = 'briefd_requests_total{name="list_scopes",outcome="ok",surface="rest"}'
        assert sample(first.get("/metrics", headers=AUTH).text, series) == 5
    with sqlite3.connect(db) as conn:
        stored = conn.execute(
            "SELECT value FROM counters WHERE name = 'briefd_requests' AND labels = ?", (scopes,)
        ).fetchone()
    assert stored == (5.0,)


def test_metrics_text_has_index_gauges_and_histograms(client: TestClient) -> None:
    client.get("/api/search", params={"q": "retry policy"})
    text = client.get("/metrics").text
    assert sample(text, "briefd_index_documents") == 45
    assert sample(text, 'briefd_index_chunks{scope="domain"}') == 129
    assert sample(text, "briefd_index_vectors") == 0
    assert sample(text, 'briefd_last_sync_ok{source="index"}') == 1
    assert sample(text, 'briefd_last_sync_timestamp_seconds{source="index"}') > 1.7e9
    buckets = re.findall(
        r'^briefd_request_duration_seconds_bucket\{le="([^"]+)",name="search",surface="rest"\} (\S+)$',
        text,
        re.MULTILINE,
    )
    assert buckets[-1] == ("+Inf", "1.0")
    counts = [float(v) for _, v in buckets]
    assert counts == sorted(counts)  # cumulative


def test_uptime_is_scraped_while_the_first_index_is_built(
    service_settings: Settings, tmp_path: Path
) -> None:
    """I4: briefd_uptime_seconds is the server's, not the index's: a first index (minutes on
    an empty volume) or no index at all left it out, and an alert on its absence fired."""
    no_index = with_overrides(service_settings, {"db": str(tmp_path / "none" / "index.db")})
    for settings, first in ((service_settings, True), (no_index, False)):
        building = [first]  # over before the server stops (it waits for a first index)
        with (
            Briefd(settings, embedder=None) as api,
            TestClient(create_app(api, service_config(), building=lambda b=building: b[0])) as http,
        ):
            text = http.get("/metrics", headers=AUTH).text
            building[0] = False
        assert 0 <= sample(text, "briefd_uptime_seconds") < 60, settings.db
        assert sample(text, "briefd_index_documents") == 0


def test_a_failed_index_run_is_said_by_its_last_sync_ok(
    service_settings: Settings, tmp_path: Path
) -> None:
    """I4: index runs recorded their successes only, so briefd_last_sync_ok{source="index"}
    was 1 whatever failed (a source folder gone, as for `briefd index` from cron): an alert on
    it could never fire. A failed run marks the index until a run succeeds."""
    assert service_settings.source is not None
    moved = tmp_path / "moved"
    shutil.copytree(service_settings.source, moved)
    gone = with_overrides(service_settings, {"source": str(tmp_path / "unmounted")})
    with Briefd(gone, embedder=None) as api, pytest.raises(SourceError, match="does not exist"):
        api.index()
    assert scraped(service_settings, 'briefd_last_sync_ok{source="index"}') == 0
    assert scraped(service_settings, 'briefd_last_sync_timestamp_seconds{source="index"}') > 1.7e9
    with Briefd(with_overrides(service_settings, {"source": str(moved)}), embedder=None) as api:
        api.index()
    assert scraped(service_settings, 'briefd_last_sync_ok{source="index"}') == 1


def scraped(settings: Settings, series: str) -> float:
    """``series`` as a server over ``settings`` answers /metrics."""
    with (
        Briefd(settings, embedder=None) as api,
        TestClient(create_app(api, service_config()), headers=AUTH) as http,
    ):
        return sample(http.get("/metrics").text, series)


def test_embedding_calls_are_counted(service_settings: Settings) -> None:
    metrics = Metrics()
    embedder = CountingEmbedder(FakeEmbedder(), metrics)
    with Briefd(service_settings, embedder=embedder) as api:
        api.index()  # embeds every passage for the fake model
        with TestClient(create_app(api, service_config(), metrics)) as http:
            http.get("/api/search", params={"q": "retry policy"}, headers=AUTH)
            text = http.get("/metrics", headers=AUTH).text
    assert sample(text, 'briefd_embedding_calls_total{kind="passage"}') >= 1
    assert sample(text, 'briefd_embedding_calls_total{kind="query"}') >= 1
    assert sample(text, "briefd_index_vectors") == 338


def test_a_client_command_costs_the_hook_no_embedding_of_its_own(
    service_settings: Settings,
) -> None:
    """The server embedded a hook prompt as typed before answering it: /clear, which asks
    nothing, cost a query embedding, and /review the refund limits two (as typed, then the
    words recalled for)."""
    metrics = Metrics()
    embedder = CountingEmbedder(FakeEmbedder(), metrics)
    query = 'briefd_embedding_calls_total{kind="query"}'
    with Briefd(service_settings, embedder=embedder) as api:
        api.index()
        with TestClient(create_app(api, service_config(), metrics)) as http:
            http.headers.update(AUTH)

            def embedded(prompt: str) -> float:
                before = sample(http.get("/metrics").text, query)
                body = {"prompt": prompt, "mode": "hybrid"}
                assert http.post("/api/hook/recall?format=json", json=body).status_code == 200
                return sample(http.get("/metrics").text, query) - before

            assert embedded("what is the retry policy") >= 1  # the gate calibrated now
            assert embedded("/clear") == 0
            assert embedded("/review the refund limits") == 1


def test_requests_rejected_for_their_arguments_are_counted_as_invalid(client: TestClient) -> None:
    assert client.get("/api/search", params={"q": "retry", "top_k": 0}).status_code == 422
    assert client.post("/api/bundle", json={"task": "x", "max_tokens": "a"}).status_code == 422
    assert client.get("/api/docs/domain/retry-policy.md", params={"scopes": "domain"}).is_success
    assert client.get("/api/search", params={"q": "retry policy"}).status_code == 200
    text = client.get("/metrics").text
    assert (
        sample(text, 'briefd_requests_total{name="search",outcome="invalid",surface="rest"}') == 1
    )
    assert sample(text, 'briefd_requests_total{name="search",outcome="ok",surface="rest"}') == 1
    invalid_bundle = 'briefd_requests_total{name="compile_bundle",outcome="invalid",surface="rest"}'
    assert sample(text, invalid_bundle) == 1
    # not timed: the histogram holds the search that ran, and no label holds a path or value
    assert sample(text, 'briefd_request_duration_seconds_count{name="search",surface="rest"}') == 1
    assert "/api/" not in text and "top_k" not in text

    rows = {r["name"]: r for r in client.get("/api/stats").json()["requests"]}
    search = rows["search"]
    assert (search["count"], search["errors"], search["invalid"]) == (2, 1, 1)
    assert search["p50_ms"] is not None and search["mean_ms"] is not None
    bundle = rows["compile_bundle"]
    assert (bundle["count"], bundle["errors"], bundle["invalid"]) == (1, 1, 1)
    assert bundle["mean_ms"] is None and bundle["p50_ms"] is None  # nothing ran
    assert rows["get_document"]["invalid"] == 0


def test_every_counted_route_is_named_as_it_counts(client: TestClient) -> None:
    """A 422 is counted under the route's name: it must be the name its handler counts under,
    or a rejected call would land in a row of its own."""
    for route in client.app.routes:  # type: ignore[attr-defined]
        if not isinstance(route, APIRoute):
            continue
        source = inspect.getsource(route.endpoint)
        body = source[source.index("def ") :]
        if '"rest"' in body:
            assert f'"{route.name}"' in body or f".{route.name}(" in body, route.path


def test_a_delta_counts_the_tokens_it_sends_not_those_it_saved(client: TestClient) -> None:
    """B5/B7/I4: ``tokens`` is what the answer costs. Against a base the client holds only the
    difference is sent, and its ``tokens`` said the whole bundle's (1,873 for an answer of
    ~130); it is now the delta answer's own, as sent, and tokens served count that."""
    series = 'briefd_tokens_served_total{name="compile_bundle",surface="rest"}'
    served = 0
    for mode in ("markdown", "package"):
        task = {"task": "refund window partial refunds", "mode": mode}
        full = client.post("/api/bundle", json=task).json()
        served += full["tokens"]
        assert sample(client.get("/metrics").text, series) == served
        answer = client.post("/api/bundle", json={**task, "base": full["bundle_id"]})
        delta = answer.json()
        assert delta["delta"]["tokens_saved"] > 0 and not delta.get("text")  # all reused
        assert delta["tokens"] == count_tokens(answer.text), mode
        served += delta["tokens"]
        assert sample(client.get("/metrics").text, series) == served
        assert client.get("/api/stats").json()["tokens_served"] == served


class SlowOnLongQueries(FakeEmbedder):
    """The fake model, taking 0.6 s for a query over a sentence (a pasted issue or task)."""

    def embed_batch(self, texts: Sequence[str], kind: EmbeddingKind) -> Vectors:
        if kind == "query" and any(len(t) > 600 for t in texts):
            time.sleep(0.6)
        return super().embed_batch(texts, kind)


def test_the_latency_of_a_long_query_includes_its_embedding(
    settings: Settings, tmp_path: Path
) -> None:
    """I4: a query over 500 characters is embedded before the lock is taken; the histogram
    timed only what ran after it, so a search or bundle that took 0.6 s showed as ~10 ms."""
    api = served(settings, tmp_path, SlowOnLongQueries())
    with api, TestClient(create_app(api, service_config())) as http:
        http.headers.update(AUTH)
        for name in ("search", "compile_bundle", "recall"):
            asked = f"{name}: " + WORDS * 10  # each its own first window: embedded anew
            started = time.monotonic()
            if name == "search":
                answer = http.get("/api/search", params={"q": asked, "scopes": "all"})
            elif name == "compile_bundle":
                answer = http.post("/api/bundle", json={"task": asked, "scopes": ["all"]})
            else:
                prompt = {"prompt": asked, "session_id": "s1", "mode": "hybrid"}
                answer = http.post("/api/hook/recall", json=prompt)
            took = time.monotonic() - started
            assert answer.status_code == 200, answer.text
            text = http.get("/metrics").text
            timed = sample(
                text, f'briefd_request_duration_seconds_sum{{name="{name}",surface="rest"}}'
            )
            assert 0.6 <= timed <= took, (name, timed, took)


def test_a_shared_state_away_is_scraped(service_settings: Settings, postgres: Postgres) -> None:
    """I4, S1: while PostgreSQL was away, unreachable or refusing, /api/health said degraded
    but /metrics said nothing of it: a Prometheus alert could not see that usage reports
    failed and the query log piled up in memory (dropped past its bound)."""
    postgres.reset()
    away = f"postgresql://briefd@127.0.0.1:{free_port()}/briefd"
    up = with_overrides(service_settings, {"state.url": postgres.url})
    down = with_overrides(service_settings, {"state.url": away})
    assert scraped(up, "briefd_state_ok") == 1
    assert scraped(down, "briefd_state_ok") == 0
    alone = serve_once(service_settings, "/metrics")["/metrics"]
    assert "briefd_state_ok" not in alone  # one node: no shared state to lose
