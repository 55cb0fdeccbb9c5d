"""Section windows (R2, ``embeddings.window_words``): a long chunk is also embedded as runs of
its sentences, and a candidate scores a query as its closest vector — its own or a window's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace

import pytest

from briefd.api import Briefd
from briefd.cli.index_fast import _report, report_lines
from briefd.cli.search import _cell
from briefd.embeddings.fake import FakeEmbedder
from briefd.markdown.passages import passage_text, passage_windows
from briefd.retrieval.search import SearchRequest
from briefd.settings import Settings
from briefd.store import sync_state
from briefd.vectors.windows import WindowCache
from tests.conftest import WriteFiles

LONG = (
    "Refunds are issued to the original payment method. "
    "A partial refund returns part of a captured payment. "
    "Partial refunds are allowed within 180 days of capture. "
    "Each refund posts a ledger entry against the merchant balance. "
    "Chargebacks follow a separate dispute flow with evidence deadlines. "
    "A disputed payment cannot be refunded until the dispute closes. "
    "Marketplace refunds split the amount across every sub-merchant."
)
DOCS = {
    "domain/refunds.md": f"# Refunds\n\n## Rules\n\n{LONG}\n",
    "domain/settlement.md": "# Settlement\n\n## Cutoff\n\nThe daily settlement cutoff is 22:00 CET.\n",
}


def test_a_long_chunk_is_cut_at_sentences_into_windows_with_its_breadcrumb() -> None:
    windows = passage_windows("Refunds", ["Refunds", "Rules"], LONG, 20)
    head = "Refunds > Refunds > Rules\n"
    assert len(windows) >= 3 and all(w.startswith(head) for w in windows)
    bodies = [w[len(head) :] for w in windows]
    assert " ".join(bodies) == LONG  # every sentence once, in order, none split
    assert all(len(b.split()) <= 20 for b in bodies)
    assert all(b.endswith(".") for b in bodies)


def test_a_chunk_within_the_window_size_has_no_windows() -> None:
    assert passage_windows("T", ["H"], "One short sentence. And another one.", 20) == []
    assert passage_windows("T", ["H"], LONG, 0) == []  # off
    one = "word " * 30  # one sentence longer than a window: still one window, so none
    assert passage_windows("T", ["H"], one.strip(), 20) == []


def test_lines_without_punctuation_end_a_sentence() -> None:
    listing = "\n".join(f"- item {i} of the list of settings" for i in range(12))
    windows = passage_windows("", ["Settings"], listing, 20)
    assert len(windows) >= 3
    assert all(w.startswith("Settings\n- item") for w in windows)


def _windowed(settings: Settings, words: int = 20) -> Settings:
    return replace(settings, embeddings=replace(settings.embeddings, window_words=words))


@pytest.fixture
def windowed(settings: Settings, write_files: WriteFiles) -> Iterator[tuple[Briefd, FakeEmbedder]]:
    """The two documents, and an API with windows of 20 words over them (not yet indexed)."""
    write_files(DOCS)
    fake = FakeEmbedder()
    with Briefd(_windowed(settings), embedder=fake) as api:
        yield api, fake


def test_a_candidate_scores_as_its_closest_window(windowed: tuple[Briefd, FakeEmbedder]) -> None:
    api, fake = windowed
    api.index()
    conn = api.store.conn
    rows = {
        r[1]: (r[0], r[2], json.loads(r[3]), r[4])
        for r in conn.execute("SELECT rowid, heading, title, heading_path, content FROM chunks")
    }
    rules, title, path, content = rows["Rules"]
    cutoff = rows["Cutoff"][0]
    semantic = api.semantic
    assert semantic is not None
    assert len(semantic.index(conn)) == 2  # in memory: one row per chunk, no window
    texts = passage_windows(title, path, content, 20)
    windows = fake.embed_batch(texts, "passage")
    for words in ("partial refunds within 180 days", "dispute evidence deadlines", "cutoff"):
        query = fake.embed_batch([words], "query")[0]
        got = semantic.window_cosines(conn, [cutoff, rules, 999_999], query)
        assert set(got) == {rules}  # the short chunk has no window; no such chunk: none
        assert got[rules] == pytest.approx(max(float(w @ query) for w in windows), abs=1e-5)
    assert semantic.window_cosines(conn, [], query) == {}


def test_windows_are_embedded_recorded_and_found(windowed: tuple[Briefd, FakeEmbedder]) -> None:
    api, fake = windowed
    report = api.index()
    conn = api.store.conn
    cut = conn.execute(
        "SELECT position, window_hash FROM chunk_windows WHERE words = 20 AND position >= 0"
    ).fetchall()
    assert len(cut) >= 3
    vectors = {r[0] for r in conn.execute("SELECT embed_hash FROM chunk_vectors")}
    assert {w for _, w in cut} <= vectors  # every window's vector is stored
    assert report.chunks == 2 and report.embedded == 2 + len(cut)  # the chunks, the windows
    assert (report.window_words, report.windows) == (20, len(cut))
    said = "\n".join(report_lines(report))
    assert f"also as {len(cut)} windows of at most 20 words" in said
    short = conn.execute("SELECT count(*) FROM chunk_windows WHERE position = -1").fetchone()
    assert short[0] == 1  # settlement's one sentence: nothing to cut
    # a query worded like one window: the whole chunk is far, the window is close
    content = conn.execute("SELECT content FROM chunks WHERE heading = 'Rules'").fetchone()[0]
    query = passage_windows("Refunds", ["Rules"], content, 20)[-1]
    with api.store.read() as read:
        index = api.semantic.index(read)  # type: ignore[union-attr]
    assert len(index) == 2  # windows stay in the file: they re-score candidates
    vector = fake.embed_batch([query], "query")[0]
    whole_text = passage_text("Refunds", ["Rules"], content)
    whole = float(fake.embed_batch([whole_text], "passage")[0] @ vector)
    for mode in ("vector", "hybrid"):
        request = SearchRequest(query, ("all",), mode=mode, related=0, explain=True)  # type: ignore[arg-type]
        top = api.search(request).hits[0]
        assert top.heading == "Rules" and top.explain is not None
        assert top.explain.cosine == pytest.approx(1.0, abs=1e-3) and whole < 0.9
        assert top.explain.window_cosine == pytest.approx(1.0, abs=1e-3)
        assert "cosine 1.000 (closest window 1.000)" in str(_cell(top, explain=True))
    assert api.index().embedded == 0  # nothing new: windows are not cut or embedded again
    fitted = api.gate_calibration()[fake.model_id]
    assert fitted["section_windows"] == 20  # briefd version --json: the gate saw the windows
    last = sync_state.index_report(conn)  # what a no-change run answers from
    stamped = _report(last, "knowledge", (), 0.01)
    assert stamped is not None and (stamped.window_words, stamped.windows) == (20, len(cut))


def test_changing_the_window_size_runs_the_index_again(
    settings: Settings, write_files: WriteFiles
) -> None:
    write_files(DOCS)
    with Briefd(settings, embedder=FakeEmbedder()) as api:
        assert api.index().embedded == 2
    windowed = _windowed(settings)
    with Briefd(windowed, embedder=FakeEmbedder()) as api:
        again = api.index()
        assert again.embedded >= 3  # the windows of the long chunk, none of the chunks again
        cut = api.store.conn.execute(
            "SELECT count(*) FROM chunk_windows WHERE words = 20 AND position >= 0"
        ).fetchone()[0]
        assert again.embedded == cut
    with Briefd(settings, embedder=FakeEmbedder()) as api:
        assert api.index().embedded == 0
        conn = api.store.conn
        assert conn.execute("SELECT count(*) FROM chunk_windows").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM chunk_vectors").fetchone()[0] == 2  # pruned
        with api.store.read() as read:
            assert len(api.semantic.index(read)) == 2  # type: ignore[union-attr]


def test_window_vectors_are_cached_within_a_bound_and_dropped_on_change(
    windowed: tuple[Briefd, FakeEmbedder], write_files: WriteFiles
) -> None:
    write_files(
        {"domain/writeoffs.md": f"# Payouts\n\n## Schedule\n\n{LONG.replace('efund', 'ayout')}\n"}
    )
    api, fake = windowed
    api.index()
    conn = api.store.conn
    rowid = {r[0]: r[1] for r in conn.execute("SELECT heading, rowid FROM chunks")}
    model = fake.model_id
    query = fake.embed_batch(["partial refunds within 180 days"], "query")[0]
    fresh = WindowCache(model, 20).cosines(conn, [rowid["Rules"], rowid["Schedule"]], query)
    small = WindowCache(model, 20, capacity=4)
    assert small.cosines(conn, [rowid["Rules"]], query) == {rowid["Rules"]: fresh[rowid["Rules"]]}
    held = len(small)
    assert 3 <= held <= 4  # the long chunk's windows
    both = small.cosines(conn, [rowid["Rules"], rowid["Schedule"]], query)
    assert both == fresh  # cached or read, the same cosines
    assert len(small) == held  # only the last chunk's: the least recently used one went
    # an edited section: the next query sees its new windows, not the cached ones
    semantic = api.semantic
    assert semantic is not None
    semantic.index(conn)
    last = max(rowid.values())
    heading = next(h for h, r in rowid.items() if r == last)
    assert heading == "Schedule"  # the file indexed last
    before = semantic.window_cosines(conn, [last], query)[last]
    write_files({"domain/writeoffs.md": f"# Payouts\n\n## Schedule\n\n{LONG}\n"})
    api.index()
    again = conn.execute("SELECT rowid FROM chunks WHERE heading = 'Schedule'").fetchone()[0]
    assert again == last  # SQLite gave the new section the freed rowid
    semantic.index(conn)
    after = semantic.window_cosines(conn, [again], query)[again]
    read = WindowCache(model, 20).cosines(conn, [again], query)[again]
    assert after == read and abs(after - before) > 0.01  # the new windows, not the cached


def test_a_cached_chunk_does_not_keep_the_rest_of_its_read_alive(
    windowed: tuple[Briefd, FakeEmbedder], write_files: WriteFiles
) -> None:
    write_files({"domain/writeoffs.md": f"# Payouts\n\n## Schedule\n\n{LONG}\n"})
    api, fake = windowed
    api.index()
    conn = api.store.conn
    rowids = [r[0] for r in conn.execute("SELECT rowid FROM chunks")]
    cache = WindowCache(fake.model_id, 20)
    query = fake.embed_batch(["refunds"], "query")[0]
    assert len(cache.cosines(conn, rowids, query)) == 2  # two long chunks in one read
    for rows in cache._rows.values():
        assert rows.base is None  # its own copy, not a view of the whole read
