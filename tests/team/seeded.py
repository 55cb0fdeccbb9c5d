"""A knowledge checkout and a code repository that drifted from it (real git, real dates), and
two weeks of a seeded query log: the ``health_api`` fixture shared by the dashboard, REST,
MCP and CLI tests of the knowledge-health reports."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.retrieval.search import SearchRequest
from briefd.store.activity import QueryLogEntry
from tests.team.coderepo import LEDGER_DOC, RETRY_DOC, Repo, settings_for

GLOSSARY = """
# Glossary

## Settlement
Settlement is when the acquirer pays the merchant.
"""


def logged(
    kind: str,
    query: str,
    at: str,
    top: float | None,
    latency: float,
    surface: str,
    sections: tuple[str, ...] = (),
    bundle_id: str | None = None,
) -> QueryLogEntry:
    gate = "kept" if sections else "empty"
    scopes = ("domain",)
    return QueryLogEntry(
        kind,
        query,
        scopes,
        len(sections),
        top,
        latency,
        surface,
        at,
        surface,
        gate,
        sections,
        bundle_id,
    )


def seeded_log(api: Briefd) -> list[QueryLogEntry]:
    """Two weeks of requests: answered searches, bundles and hook prompts, and two gaps."""
    retry = api.search(SearchRequest("soft decline retried", mode="bm25"))
    hits = tuple(h.chunk_id for h in retry.hits)
    today = datetime.now(UTC).replace(hour=12, minute=0, second=0, microsecond=0)
    entries = []
    for back in range(14):
        at = (today - timedelta(days=back)).isoformat(timespec="seconds")
        for n in range(1 + back % 4):
            entries.append(
                logged(
                    "search",
                    "soft decline retries",
                    at,
                    2.5,
                    4.0 + back + 3 * n,
                    "mcp",
                    sections=hits,
                )
            )
        entries.append(
            logged(
                "bundle",
                "retry a soft decline",
                at,
                2.1,
                9.0 + back,
                "rest",
                sections=hits[:1],
                bundle_id="b" * 16,
            )
        )
        if back % 2 == 0:
            entries.append(logged("search", "kafka consumer lag alerts", at, None, 3.0, "mcp"))
        if back % 3 == 0:
            entries.append(logged("recall", "how do we rotate the hsm keys", at, None, 2.0, "hook"))
    return entries


@pytest.fixture
def health_api(tmp_path: Path) -> Iterator[Briefd]:
    knowledge = Repo(tmp_path / "knowledge")
    knowledge.commit(
        {
            "domain/retry.md": RETRY_DOC,
            "domain/ledger.md": LEDGER_DOC,
            "domain/glossary.md": GLOSSARY,
        },
        "Knowledge",
        "2026-03-10T09:00:00+00:00",
    )
    app = Repo(tmp_path / "app")
    app.commit(
        {"services/payment/retry.py": "LIMIT = 5\n"},
        "Raise the soft decline retry limit to 5",
        "2026-03-15T12:00:00+00:00",
        author="Dev One",
    )
    settings = settings_for(tmp_path, knowledge, {"source": str(app.path), "name": "payments"})
    with Briefd(settings, embedder=None) as api:
        api.index()
        api.log_queries(seeded_log(api))
        yield api
