from __future__ import annotations

import numpy as np
import pytest

from briefd.api import Briefd
from briefd.embeddings.fake import FakeEmbedder
from briefd.errors import QueryError
from briefd.retrieval.fusion import Evidence, score_fusion
from briefd.retrieval.gate import calibrate, on_topic, probe_cosine
from briefd.retrieval.search import SearchRequest
from briefd.settings import Settings
from tests.conftest import WriteFiles


def test_score_fusion_weighs_normalised_signals() -> None:
    fused = score_fusion(
        [
            Evidence(1, cosine=0.90, bm25=-2.0, all_terms=False),  # strong vector, weak lexical
            Evidence(2, cosine=0.80, bm25=-10.0, all_terms=True),  # best lexical, all terms
            Evidence(3, cosine=0.85, bm25=None, all_terms=False),  # vector only
        ],
        vector_weight=0.6,
        all_terms_bonus=0.2,
    )
    assert [f.key for f in fused] == [1, 2, 3]
    by_key = {f.key: f for f in fused}
    assert by_key[1].contributions == (
        ("vector", 0.6),
        ("lexical", pytest.approx(0.4 * 0.2)),
        ("all-terms", 0.0),
    )
    assert by_key[1].score == pytest.approx(0.68)
    assert by_key[2].score == pytest.approx(0.0 + 0.4 + 0.2)
    assert by_key[3].score == pytest.approx(0.6 * 0.5)


def test_score_fusion_ties_keep_input_order() -> None:
    fused = score_fusion([Evidence(7, None, -1.0, False), Evidence(3, None, -1.0, False)], 0.5, 0.1)
    assert [f.key for f in fused] == [7, 3]


def test_calibration_uses_the_probes_of_the_index_language() -> None:
    en, tr = np.eye(3, dtype=np.float32)[:2], np.eye(3, dtype=np.float32)[1:]
    cal = calibrate("m", "fp", {"en": (en, [0.70, 0.72]), "tr": (tr, [0.80, 0.90])})
    assert cal.language == "tr" and cal.probe_vectors is tr
    assert (cal.mean, cal.maximum) == (pytest.approx(0.85), 0.90)
    assert probe_cosine(cal, np.array([0.0, 0.6, 0.8], dtype=np.float32)) == pytest.approx(0.8)


def test_gate_margin_zones() -> None:
    strong, weak = 0.01, -0.02
    assert on_topic(0.85, 0.83, corroborated=False, strong=strong, weak=weak)
    assert not on_topic(0.84, 0.84, corroborated=False, strong=strong, weak=weak)
    assert on_topic(0.84, 0.84, corroborated=True, strong=strong, weak=weak)
    assert not on_topic(0.80, 0.83, corroborated=True, strong=strong, weak=weak)
    assert on_topic(None, 0.9, corroborated=True, strong=strong, weak=weak)
    assert not on_topic(None, 0.9, corroborated=False, strong=strong, weak=weak)


def test_a_model_without_vectors_falls_back_to_bm25_or_says_how_to_embed(
    settings: Settings, write_files: WriteFiles
) -> None:
    write_files({"domain/refunds.md": "# Refunds\n\nPartial refunds of a captured payment.\n"})
    with Briefd(settings, embedder=FakeEmbedder(name="fake-a")) as api:
        api.index()
    with Briefd(settings, embedder=FakeEmbedder(name="fake-b")) as other:
        result = other.search(SearchRequest("partial refunds"))
        assert result.mode == "bm25" and result.embedding_model is None
        assert result.hits[0].doc_path == "domain/refunds.md"
        with pytest.raises(QueryError, match=r"needs vectors of fake-b.*vectors of fake-a"):
            other.search(SearchRequest("partial refunds", mode="hybrid"))
        other.index()  # embeds with fake-b
        assert other.search(SearchRequest("partial refunds")).mode == "hybrid"
