from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from briefd.api import Briefd
from briefd.cli.index_fast import report_lines
from briefd.embeddings.fake import FakeEmbedder
from briefd.retrieval import calibration as calibration_module
from briefd.retrieval.gate import QUANTILE
from briefd.retrieval.probes import probe_list
from briefd.retrieval.search import SearchRequest
from briefd.settings import Settings
from briefd.vectors.index import VectorIndex
from briefd.vectors.store import from_blobs, load_quantized, to_blob
from tests.conftest import WriteFiles

DOCS = {
    "domain/refunds.md": "# Refunds\n\n## Partial refunds\n\nA partial refund returns part of a captured payment within 180 days.\n\nSee [[settlement#Cutoff]].\n\n## Disputes\n\nA disputed payment cannot be refunded.\n",
    "domain/settlement.md": "# Settlement\n\n## Cutoff\n\nThe daily settlement cutoff is 22:00 CET.\n",
    "conventions/logging.md": "# Logging\n\nNever log card numbers.\n",
}


def test_blob_round_trip_is_float32_little_endian() -> None:
    vector = np.array([1.0, -0.5, 0.25], dtype=np.float32)
    blob = to_blob(vector)
    assert blob == vector.astype("<f4").tobytes() and len(blob) == 12
    assert np.array_equal(from_blobs([blob, blob], 3)[1], vector)


def test_exact_top_k_with_scopes_and_stable_ties() -> None:
    matrix = np.array([[1, 0], [0.6, 0.8], [0.6, 0.8], [0, 1]], dtype=np.float32)
    index = VectorIndex.build("m", [10, 11, 12, 13], ["a", "a", "b", "b"], matrix)
    query = np.array([0.6, 0.8], dtype=np.float32)
    assert [r for r, _ in index.top(query, ["a", "b"], 3)] == [11, 12, 13]
    assert [r for r, _ in index.top(query, ["b"], 5)] == [12, 13]
    assert index.cosines([13, 99], query) == {13: pytest.approx(0.8)}


def test_ann_answers_like_the_exact_scan() -> None:
    rng = np.random.default_rng(7)
    matrix = rng.normal(size=(2000, 32)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    rowids = list(range(2000))
    exact = VectorIndex.build("m", rowids, ["a"] * 2000, matrix)
    approx = VectorIndex.build("m", rowids, ["a"] * 2000, matrix, ann_threshold=1000)
    assert approx.ann is not None and exact.ann is None
    overlap = []
    for query in matrix[:20]:
        want = {r for r, _ in exact.top(query, ["a"], 10)}
        got = {r for r, _ in approx.top(query, ["a"], 10)}
        overlap.append(len(want & got) / 10)
    assert np.mean(overlap) >= 0.9


def test_only_new_passages_are_embedded(settings: Settings, write_files: WriteFiles) -> None:
    root = write_files(DOCS)
    fake = FakeEmbedder()
    with Briefd(settings, embedder=fake) as api:
        first = api.index()
        assert first.embedded == 4 and first.vectors_missing == 0
        assert first.embedding_model == "fake-bow@fake-1"
        (root / "conventions/logging.md").write_text(
            "# Logging\n\nNever log card numbers or CVV.\n"
        )
        second = api.index()
        assert second.changed == ("conventions/logging.md",) and second.embedded == 1
        third = api.index(rebuild=True)
        assert third.embedded == 0  # vectors are keyed by passage text, a rebuild reuses them
        count = api.store.conn.execute("SELECT count(*) FROM chunk_vectors").fetchone()[0]
        assert count == 4  # the replaced passage's vector was pruned


def test_model_change_re_embeds_and_never_mixes(
    settings: Settings, write_files: WriteFiles
) -> None:
    write_files(DOCS)
    with Briefd(settings, embedder=FakeEmbedder(name="fake-a")) as api:
        api.index()
    other = FakeEmbedder(dim=32, name="fake-b")
    with Briefd(settings, embedder=other) as api:
        report = api.index()
        assert report.embedded == 4 and report.embedding_model == "fake-b@fake-1"
        assert report.replaced_models == ("fake-a@fake-1",)
        said = "\n".join(report_lines(report))
        assert "the embedding model changed (fake-a@fake-1 → fake-b@fake-1)" in said
        models = {r[0] for r in api.store.conn.execute("SELECT DISTINCT model FROM chunk_vectors")}
        assert models == {"fake-b@fake-1"}
        result = api.search(SearchRequest("partial refund", scopes=("all",), mode="vector"))
        assert result.embedding_model == "fake-b@fake-1" and result.hits
        assert api.index().replaced_models == ()  # said once, on the run that re-embedded


def test_hybrid_explain_shows_every_signal(hybrid_api: Briefd, write_files: WriteFiles) -> None:
    write_files(DOCS)
    hybrid_api.index()
    result = hybrid_api.search(
        SearchRequest("partial refund", scopes=("all",), explain=True, related=0)
    )
    assert result.mode == "hybrid" and result.ranking_version == "r13"
    top = result.hits[0]
    assert top.heading == "Partial refunds"
    assert top.explain is not None
    assert top.explain.and_rank == 1 and top.explain.vector_rank is not None
    assert top.explain.cosine is not None and top.explain.cosine > 0
    assert [name for name, _ in top.explain.contributions] == ["vector", "lexical", "all-terms"]


def test_coverage_bonus_is_opt_in_and_explained(
    settings: Settings, write_files: WriteFiles
) -> None:
    """``search.coverage_bonus`` (R1, opt-in): each hit's explain carries its coverage part,
    the bonus times the square of the share of the query's words the section holds."""
    write_files(DOCS)
    search = replace(settings.search, coverage_bonus=0.3)
    with Briefd(replace(settings, search=search), embedder=FakeEmbedder()) as api:
        api.index()
        result = api.search(
            SearchRequest("partial refund unknownword", scopes=("all",), explain=True, related=0)
        )
    top = result.hits[0]
    assert top.heading == "Partial refunds" and top.explain is not None
    parts = dict(top.explain.contributions)
    assert list(parts) == ["vector", "lexical", "all-terms", "coverage"]
    # "unknownword" is in no section: it keeps none from the all-terms bonus (r12)
    assert parts["all-terms"] == settings.search.all_terms_bonus
    assert parts["coverage"] == pytest.approx(0.3 * (2 / 3) ** 2)


def test_related_sections_follow_links_and_come_last(
    hybrid_api: Briefd, write_files: WriteFiles
) -> None:
    write_files(DOCS)
    hybrid_api.index()
    hits = hybrid_api.search(
        SearchRequest("partial refund 180 days", scopes=("all",), top_k=1)
    ).hits
    assert [(h.heading, h.related_to) for h in hits] == [
        ("Partial refunds", None),
        ("Cutoff", hits[0].chunk_id),
    ]
    assert hits[1].score == 0.0
    none = hybrid_api.search(SearchRequest("partial refund", scopes=("all",), top_k=1, related=0))
    assert len(none.hits) == 1


def test_bm25_only_when_embeddings_are_off(api: Briefd, write_files: WriteFiles) -> None:
    from briefd.errors import QueryError

    write_files(DOCS)
    assert api.index().embedding_model is None
    assert api.search(SearchRequest("refund", scopes=("all",))).mode == "bm25"
    with pytest.raises(QueryError, match="search mode 'hybrid' needs embeddings"):
        api.search(SearchRequest("refund", mode="hybrid"))


def test_embedding_failure_is_reported_and_documents_still_indexed(
    settings: Settings, write_files: WriteFiles, tmp_path: Path
) -> None:
    from briefd.embeddings.base import Embedder
    from briefd.errors import EmbeddingError

    class Down(Embedder):
        name, runtime, dim = "down", "x", 8

        def embed_batch(self, texts, kind):  # type: ignore[no-untyped-def]
            raise EmbeddingError("ollama at http://127.0.0.1:9 cannot be reached; start it")

    write_files(DOCS)
    with Briefd(settings, embedder=Down()) as api:
        report = api.index()
        assert report.documents == 3 and report.vectors_missing == 4
        assert report.embedding_error == "ollama at http://127.0.0.1:9 cannot be reached; start it"
        assert report.fitting_seconds == 0  # no gate fitted to vectors it could not make
        hits = api.search(SearchRequest("refund", scopes=("all",), mode="bm25")).hits
        assert hits


def test_gate_empties_off_topic_queries_with_a_calibrated_index(
    hybrid_api: Briefd, write_files: WriteFiles
) -> None:
    write_files(DOCS)
    hybrid_api.index()
    calibration = hybrid_api.store.conn.execute(
        "SELECT probes, fingerprint FROM calibration"
    ).fetchone()
    assert calibration[0] == len(probe_list()) and calibration[1].startswith(
        f"v{calibration_module.VERSION}:"
    )
    on = hybrid_api.search(SearchRequest("partial refund of a captured payment", scopes=("all",)))
    assert on.gate == "kept" and on.hits[0].heading == "Partial refunds"
    assert on.gate_reasons[0].startswith("lexical: strong: one section holds every query word")
    off = hybrid_api.search(SearchRequest("knit me a warm scarf", scopes=("all",)))
    assert (off.gate, off.hits) == ("empty", ())
    assert off.gate_reasons[0] == (
        "lexical: weak: no section holds every query word (knit, warm, scarf); "
        "not in the index: knit, warm, scarf"
    )
    (knobs,) = hybrid_api.gate_calibration().values()
    # none of its words is in the index: weighed as a question in its own language (the fake
    # model's nearest probes decide which), at that language's level where it is lower
    levels = knobs["by_language"]
    assert isinstance(levels, dict) and set(levels) == {"en", "tr", "de"}
    reason = off.gate_reasons[1]
    if "for questions in " in reason:  # that language's level: lower than the pooled one,
        # or another language than the index's own (its level holds where higher too)
        language = reason.split("for questions in ")[-1].split()[0]
        expected = levels[language]["threshold"]
        home = knobs["index_languages"]
        assert isinstance(home, list)
        assert expected < knobs["threshold"] or language not in home  # type: ignore[operator]
        assert reason.endswith(
            f"this index's threshold for questions in {language} {expected:+.3f}"
        )
    else:
        assert reason.endswith(f"this index's threshold {knobs['threshold']:+.3f}")
    assert knobs["probes"] == len(probe_list()) and knobs["quantile"] == QUANTILE
    bm25 = hybrid_api.search(SearchRequest("knit me a warm scarf", mode="bm25"))
    assert (bm25.gate, bm25.gate_reasons) == ("off", ())


def test_calibration_is_refitted_when_the_index_changes_and_reuses_the_probe_vectors(
    settings: Settings, write_files: WriteFiles
) -> None:
    embedder = FakeEmbedder()
    write_files(DOCS)
    with Briefd(settings, embedder=embedder) as api:
        api.index()
        (first,) = api.gate_calibration().values()
        size = len(probe_list())  # the gate's probes, one batch (recall embeds its own set)
        probe_batches = [n for kind, n in embedder.calls if kind == "query" and n == size]
        assert probe_batches == [size]  # embedded once per model and probe set
        write_files({"domain/knitting.md": "# Knitting\n\nHow to knit a scarf with wool.\n"})
        api.index()
        again = [n for kind, n in embedder.calls if kind == "query" and n == size]
        assert again == probe_batches  # reused from the index
        (second,) = api.gate_calibration().values()
    assert "knitting" in second["left_out_topics"]  # the index now documents that topic
    assert "knitting" not in first["left_out_topics"]


def test_loading_reads_only_chunks_with_vectors_into_rows_of_their_own(
    settings: Settings, write_files: WriteFiles
) -> None:
    notes = {
        f"domain/note-{i}.md": f"# Note {i}\n\nSettlement rule number {i}.\n" for i in range(12)
    }
    write_files(notes)
    fake = FakeEmbedder()
    with Briefd(settings, embedder=fake) as api:
        api.index()
        conn = api.store.conn
        rows = [
            (int(r[0]), str(r[1]))
            for r in conn.execute("SELECT rowid, embed_hash FROM chunks ORDER BY rowid")
        ]
        kept = rows[::4]  # three chunks of twelve keep their vector
        gone = [(embed_hash,) for row, embed_hash in rows if (row, embed_hash) not in kept]
        conn.executemany("DELETE FROM chunk_vectors WHERE embed_hash = ?", gone)
        stored = [
            conn.execute(
                "SELECT embedding FROM chunk_vectors WHERE embed_hash = ?", (h,)
            ).fetchone()[0]
            for _, h in kept
        ]
        rowids, scopes, quantized = load_quantized(conn, fake.model_id)
    assert rowids == [row for row, _ in kept] and scopes == ["domain"] * len(kept)
    assert quantized.coarse.shape == (len(kept), fake.dim)
    assert quantized.coarse.base is None  # not a view into the 12 rows first allocated
    assert np.abs(quantized.matrix() - from_blobs(stored, fake.dim)).max() < 1e-5
