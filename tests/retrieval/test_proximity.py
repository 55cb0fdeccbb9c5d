"""Term proximity (r13): of two sections holding the same words as often (the same BM25 and,
with the bag-of-words fake embedder, the same cosine), the one whose query words stand
together in its own structure ranks first. The words' places come from the token streams
the index run stores (store.streams), kept in step with the chunks."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from briefd.api import Briefd
from briefd.embeddings.fake import FakeEmbedder
from briefd.retrieval.search import SearchRequest
from briefd.settings import Settings
from briefd.store import streams
from briefd.store.streams import Segment, segments
from tests.conftest import WriteFiles

# sections without the query words, so that theirs are rare enough to have an IDF
FILLER = {
    f"domain/other-{n}.md": f"# Other {n}\n\nCapture, void and chargeback rules number {n}.\n"
    for n in range(8)
}
# a.md comes first in chunk order: without proximity the tie goes to it
PAYOUTS = {
    **FILLER,
    "domain/a.md": "# Payouts\n\nThe window is fixed. Settlement runs nightly, and the "
    "merchant sees the payout on the next business day after the refund.\n",
    "domain/b.md": "# Payouts\n\nThe refund window is fixed. Settlement runs nightly, and "
    "the merchant sees the payout on the next business day after the.\n",
}


def _hits(api: Briefd, query: str) -> list[tuple[str, float]]:
    result = api.search(SearchRequest(query, mode="hybrid", top_k=5, related=0))
    assert result.gate != "empty"
    return [(hit.doc_path, hit.score) for hit in result.hits]


def _ranked(settings: Settings, query: str) -> list[str]:
    with Briefd(settings, embedder=FakeEmbedder()) as api:
        api.index()
        return [path for path, _ in _hits(api, query)]


def test_words_next_to_each_other_rank_a_section_first(
    settings: Settings, write_files: WriteFiles
) -> None:
    write_files(PAYOUTS)
    assert _ranked(settings, "refund window")[:2] == ["domain/b.md", "domain/a.md"]


def test_a_table_header_is_next_to_the_cells_of_its_column(
    settings: Settings, write_files: WriteFiles
) -> None:
    """ "Jewellery" under the header "Sector", with "limit" beside it: the table holds the
    three words as the prose does, in the same order and as far apart in reading order, but
    the header cell stands right above the cell it names."""
    write_files(
        {
            **FILLER,
            "domain/a.md": "# Installments\n\nSector limit jewellery none fuel none\n",
            "domain/b.md": "# Installments\n\n| Sector | Limit |\n|---|---|\n| Jewellery | none |\n"
            "| Fuel | none |\n",
        }
    )
    assert _ranked(settings, "jewellery sector limit")[:2] == ["domain/b.md", "domain/a.md"]


def test_without_the_postings_fts5_ranks_with_the_same_proximity(
    settings: Settings, write_files: WriteFiles
) -> None:
    """Postings out of step (a writer that knows nothing of them): FTS5 answers, and the
    re-score counts each word's sections through FTS5, so the ranking and scores are the
    same."""
    write_files(PAYOUTS)
    with Briefd(settings, embedder=FakeEmbedder()) as api:
        api.index()
        with_postings = _hits(api, "refund window")
        with api.store.write() as conn:
            conn.execute("DELETE FROM postings_state")
        api._lexicon.invalidate()
        without = _hits(api, "refund window")
    assert [p for p, _ in with_postings][:2] == ["domain/b.md", "domain/a.md"]
    assert without == with_postings


def test_an_index_without_streams_ranks_as_before_until_its_next_index_run(
    settings: Settings, write_files: WriteFiles
) -> None:
    """An index built before the streams (migration 23 adds the tables empty) is not
    re-scored, so it ranks as r12 did (the tie to a.md); the next index run writes every
    chunk's stream, though no file changed, and the re-score applies."""
    write_files(PAYOUTS)
    with Briefd(settings, embedder=FakeEmbedder()) as api:
        api.index()
        with api.store.write() as conn:  # as migration 23 leaves an older index
            conn.execute("DELETE FROM proximity")
            conn.execute("DELETE FROM proximity_state")
        before = [p for p, _ in _hits(api, "refund window")]
        report = api.index()
        after = [p for p, _ in _hits(api, "refund window")]
        with api.store.read() as conn:
            written = streams.state(conn)
    assert before[:2] == ["domain/a.md", "domain/b.md"]
    assert report.added == () and report.changed == ()
    assert written is not None and written.chunks == 10
    assert after[:2] == ["domain/b.md", "domain/a.md"]


def _streams_of(db: Path) -> tuple[set[tuple[int, int, bytes, bytes]], tuple[int, int]]:
    with sqlite3.connect(db) as conn:
        rows = set(conn.execute("SELECT chunk, length, terms, cells FROM proximity"))
        state = conn.execute("SELECT chunks, total FROM proximity_state").fetchone()
    return rows, state


def test_an_edit_keeps_the_streams_as_a_rebuild_writes_them(
    settings: Settings, write_files: WriteFiles, tmp_path: Path
) -> None:
    """Changed, added and deleted files: the streams after the incremental run are the ones
    a full build writes, row for row, and so is the lengths' sum."""
    root = write_files(PAYOUTS)
    with Briefd(settings, embedder=FakeEmbedder()) as api:
        api.index()
        (root / "domain/a.md").write_text(
            "# Payouts\n\n| Sector | Refund window |\n|---|---|\n| Fuel | 3 days |\n"
        )
        (root / "domain/other-3.md").unlink()
        (root / "domain/new.md").write_text("# New\n\nA refund window of ten days.\n")
        api.index()
        incremental = _streams_of(settings.db)
        with api.store.write() as conn:
            streams.rebuild(conn)
        rebuilt = _streams_of(settings.db)
    assert incremental == rebuilt
    assert incremental[1][0] == 10
    assert sum(length for _, length, _, _ in incremental[0]) == incremental[1][1]


def test_a_chunks_stream_holds_its_heading_and_body_tokens_as_fts5_counts_them(
    settings: Settings, write_files: WriteFiles
) -> None:
    write_files(
        {
            "domain/t.md": "# Limits\n\nThe cards:\n\n| Sector | Limit |\n|---|---|\n"
            "| Jewellery | none |\n",
        }
    )
    with Briefd(settings, embedder=FakeEmbedder()) as api:
        api.index()
        with api.store.read() as conn:
            (rowid,) = conn.execute("SELECT rowid FROM chunks").fetchone()
            length, terms, cells = streams.read(conn, [rowid])[rowid]
            counted = conn.execute("SELECT lengths FROM postings_state").fetchone()[0]
    words = ["the", "card", "sector", "limit", "jewelleri", "none"]  # stemmed, as FTS5 has them
    assert list(memoryview(terms).cast("I")) == [streams.term_hash(w) for w in words]
    # the heading path's tokens (none: "Limits" is the title), then the table's cells:
    # (start, end, table, row, column)
    assert list(memoryview(cells).cast("i")) == [
        *[0],
        *[2, 3, 0, 0, 0],
        *[3, 4, 0, 0, 1],
        *[4, 5, 0, 2, 0],
        *[5, 6, 0, 2, 1],
    ]
    assert length == int.from_bytes(counted[:4], "little") == 7  # with the title's word


def test_segments_split_a_table_into_cells_and_keep_the_rest_whole() -> None:
    content = (
        "Lead-in line.\n\n| A | B |\n|---|---|\n| x | y \\| z |\n\nAfter.\n```\n| no | table |\n```"
    )
    assert segments(content) == [
        Segment("Lead-in line.\n"),
        Segment(" A ", 0, 0, 0),
        Segment(" B ", 0, 0, 1),
        Segment(" x ", 0, 2, 0),
        Segment(" y \\| z ", 0, 2, 1),
        Segment("\nAfter.\n```\n| no | table |\n```"),
    ]


def test_a_line_of_spaces_under_a_table_row_is_read_in_linear_time() -> None:
    """A row followed by 100,000 spaces (a pasted page, a generated file): the separator test
    tried every split of the run between its two leading \\s* (20,000 spaces: 11 s; this test
    did not end in 120 s), at every index run. Read as text, as before."""
    spaces = " " * 100_000
    content = f"| A | B |\n{spaces}x\n| C | D |\n|  -  |:-:|\n| e | f |{spaces}"
    assert segments(content) == [
        Segment(f"| A | B |\n{spaces}x"),
        Segment(" C ", 0, 0, 0),
        Segment(" D ", 0, 0, 1),
        Segment(" e ", 0, 2, 0),
        Segment(" f ", 0, 2, 1),
    ]
