"""Section windows (R2, ``embeddings.window_words``): a long chunk is also embedded as runs of
its sentences, and scores a query as its closest row — itself or one of its windows."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from briefd.api import Briefd
from briefd.cli.index_fast import _report, report_lines
from briefd.embeddings.fake import FakeEmbedder
from briefd.markdown.passages import passage_text, passage_windows
from briefd.retrieval.search import SearchRequest
from briefd.settings import Settings
from briefd.store import sync_state
from briefd.vectors.index import VectorIndex
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


def _unit(rows: int, dim: int, seed: int) -> np.ndarray:
    matrix = np.random.default_rng(seed).normal(size=(rows, dim)).astype(np.float32)
    normalised: np.ndarray = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    return normalised


@pytest.mark.parametrize("ann", [0, 200])
def test_a_chunk_scores_as_its_closest_row_and_is_listed_once(ann: int) -> None:
    matrix = _unit(600, 24, 3)
    chunks = list(range(100, 400))  # 300 chunks, then 300 window rows of 60 of them
    rowids = chunks + [100 + (i % 60) * 5 for i in range(300)]
    scopes = ["a" if r % 2 else "b" for r in rowids]
    index = VectorIndex.build("m", rowids, scopes, matrix, ann_threshold=ann)
    assert (index.ann is not None) == bool(ann)
    for query in _unit(10, 24, 4):
        best: dict[int, float] = {}
        for rowid, row in zip(rowids, matrix, strict=True):
            best[rowid] = max(best.get(rowid, -2.0), float(row @ query))
        want = sorted(best, key=lambda r: -best[r])[:10]
        got = index.top(query, ["a", "b"], 10)
        assert len({r for r, _ in got}) == 10  # a chunk with several windows is one hit
        if not ann:
            assert [r for r, _ in got] == want
        for rowid, cosine in got:
            assert cosine == pytest.approx(best[rowid], abs=1e-4)
        cosines = index.cosines([130, 101, 999], query)
        assert set(cosines) == {130, 101}
        assert cosines[130] == pytest.approx(best[130], abs=1e-4)
        scoped = index.top(query, ["b"], 5)
        assert all(r % 2 == 0 for r, _ in scoped) and len(scoped) == 5


def test_windows_are_embedded_recorded_and_found(
    settings: Settings, write_files: WriteFiles
) -> None:
    write_files(DOCS)
    fake = FakeEmbedder()
    windowed = replace(settings, embeddings=replace(settings.embeddings, window_words=20))
    with Briefd(windowed, embedder=fake) as api:
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
        assert len(index) == 2 + len(cut)
        vector = fake.embed_batch([query], "query")[0]
        whole_text = passage_text("Refunds", ["Rules"], content)
        whole = float(fake.embed_batch([whole_text], "passage")[0] @ vector)
        request = SearchRequest(query, scopes=("all",), mode="vector", related=0, explain=True)
        top = api.search(request).hits[0]
        assert top.heading == "Rules" and top.explain is not None
        assert top.explain.cosine == pytest.approx(1.0, abs=1e-3) and whole < 0.9
        assert api.index().embedded == 0  # nothing new: windows are not cut or embedded again
        last = sync_state.index_report(conn)  # what a no-change run answers from
    stamped = _report(last, "knowledge", (), 0.01)
    assert stamped is not None and (stamped.window_words, stamped.windows) == (20, len(cut))


def test_changing_the_window_size_runs_the_index_again(
    settings: Settings, write_files: WriteFiles
) -> None:
    write_files(DOCS)
    with Briefd(settings, embedder=FakeEmbedder()) as api:
        assert api.index().embedded == 2
    windowed = replace(settings, embeddings=replace(settings.embeddings, window_words=20))
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
