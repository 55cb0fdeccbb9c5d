"""Every SQLite connection briefd opens is closed by the time the API is: Python 3.13 warns of
one left to the garbage collector (ResourceWarning: unclosed database), which ``-W error`` (or a
test suite's filterwarnings) turns into a failure of the command that left it."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.embeddings.fake import FakeEmbedder
from briefd.retrieval.search import SearchRequest
from briefd.settings import Settings
from tests.conftest import WriteFiles


def _opened(monkeypatch: pytest.MonkeyPatch) -> list[sqlite3.Connection]:
    """The connections ``sqlite3.connect`` returns from now on (the real ones, only noted)."""
    opened: list[sqlite3.Connection] = []
    real: Callable[..., sqlite3.Connection] = sqlite3.connect

    def connect(*args: object, **kwargs: object) -> sqlite3.Connection:
        conn = real(*args, **kwargs)
        opened.append(conn)
        return conn

    monkeypatch.setattr(sqlite3, "connect", connect)
    return opened


def _still_open(conn: sqlite3.Connection) -> bool:
    try:
        conn.total_changes  # noqa: B018 (raises on a closed connection)
    except sqlite3.ProgrammingError:
        return False
    return True


def test_indexing_and_searching_leave_no_database_open_once_closed(
    settings: Settings, write_files: WriteFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The query tokenizer's in-memory FTS5 table (searches, and the gate's calibration after
    an index run) was never closed: `briefd search` under Python 3.13 warned 'unclosed
    database' as it exited."""
    write_files(
        {
            "domain/retry.md": "# Retry policy\n\nSoft declines are retried three times.\n",
            "domain/refunds.md": "# Refunds\n\nPartial refunds are allowed within 30 days.\n",
        }
    )
    opened = _opened(monkeypatch)
    with Briefd(settings, embedder=FakeEmbedder()) as api:
        api.index()
        hits = api.search(SearchRequest("retried soft declines", mode="hybrid")).hits
        assert hits[0].doc_path == "domain/retry.md"
        assert any(_still_open(conn) for conn in opened)  # the search's own, while open
    left = [conn for conn in opened if _still_open(conn)]
    assert left == [], f"{len(left)} of {len(opened)} connections left open"


def test_a_keyword_search_of_the_example_closes_them_too(
    settings: Settings, example_index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.db.write_bytes(example_index.read_bytes())
    opened = _opened(monkeypatch)
    with Briefd(settings, embedder=None) as api:
        result = api.search(SearchRequest("how many times do we retry a soft decline"))
        assert result.hits
    assert [conn for conn in opened if _still_open(conn)] == []
