"""A search of two or more words weighs how common each is against the index's chunk count
(the any-term list leaves out the very common ones); ``count(*)`` walks a whole index of the
chunks table, 3.6 CPU-ms a search at a million chunks, so it is counted once per index state."""

from __future__ import annotations

from briefd.api import Briefd
from briefd.retrieval.lexical import chunk_count
from briefd.retrieval.search import SearchRequest
from tests.conftest import WriteFiles

COUNT = "count(*) FROM chunks"


def _statements(api: Briefd, query: str) -> list[str]:
    seen: list[str] = []
    api.store.conn.set_trace_callback(seen.append)
    try:
        api.search(SearchRequest(query, mode="bm25", scopes=("all",)))
    finally:
        api.store.conn.set_trace_callback(None)
    return seen


def test_the_chunk_count_is_read_once_per_index_state(api: Briefd, write_files: WriteFiles) -> None:
    source = write_files(
        {f"domain/page-{n}.md": f"# Page {n}\n\nRefund rule {n}.\n" for n in range(4)}
    )
    api.index(source)
    assert any(COUNT in s for s in _statements(api, "refund rule"))  # the first search counts
    assert not any(COUNT in s for s in _statements(api, "refund page"))
    write_files({"domain/more.md": "# More\n\nAnother refund rule.\n\n## Two\n\nAnd a page.\n"})
    api.index(source)
    with api.store.read() as conn:
        counted = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
        assert chunk_count(conn) == counted > 4  # the new index state is counted again
    assert not any(COUNT in s for s in _statements(api, "refund rule"))
