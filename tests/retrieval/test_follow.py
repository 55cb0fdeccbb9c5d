"""After a reindex on another connection (a sync, a rebuild), a process that had searched
loads the new index at once, so its next search does not wait for it (O4); a process that
never searched loads nothing."""

from __future__ import annotations

from briefd.api import Briefd
from briefd.embeddings.fake import FakeEmbedder
from briefd.retrieval.search import SearchRequest
from briefd.settings import Settings
from tests.conftest import WriteFiles
from tests.retrieval.test_fusion_gate import REFUNDS_AND_SETTLEMENT

LOADS = ("FROM postings_state", "JOIN chunk_vectors", "SELECT term, chunks FROM vocabulary")


def _search_reads(api: Briefd, query: SearchRequest) -> list[str]:
    statements: list[str] = []
    api.store.conn.set_trace_callback(statements.append)
    try:
        api.search(query)
    finally:
        api.store.conn.set_trace_callback(None)
    return [s for s in statements if any(load in s for load in LOADS)]


def test_a_reindex_loads_what_searches_had_loaded(
    settings: Settings, write_files: WriteFiles
) -> None:
    write_files(REFUNDS_AND_SETTLEMENT)
    query = SearchRequest("partial refund of a capturd payment", mode="hybrid")
    with Briefd(settings, embedder=FakeEmbedder()) as api:
        api.index()
        api.search(query)  # vectors, postings and the vocabulary (a misspelt word) load
        write_files(
            {"domain/chargebacks.md": "# Chargebacks\n\nA chargeback reverses a payment.\n"}
        )
        api.reindex()
        assert _search_reads(api, query) == []  # loaded by the reindex already
        found = api.search(SearchRequest("chargeback reverses", mode="hybrid"))
        assert found.hits[0].doc_path == "domain/chargebacks.md"
    with Briefd(settings, embedder=FakeEmbedder()) as idle:
        write_files({"domain/disputes.md": "# Disputes\n\nA dispute opens before a chargeback.\n"})
        idle.reindex()
        assert _search_reads(idle, query)  # never searched: nothing was loaded for it
