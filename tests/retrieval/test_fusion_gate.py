from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from statistics import NormalDist

import numpy as np
import pytest

from briefd.api import Briefd
from briefd.bundles import BundleRequest
from briefd.embeddings.base import EmbeddingKind, Vectors
from briefd.embeddings.fake import FakeEmbedder
from briefd.errors import EmbeddingError, QueryError
from briefd.retrieval import gate_evidence, gate_fit
from briefd.retrieval.bm25 import Lexicon
from briefd.retrieval.fusion import Evidence, score_fusion
from briefd.retrieval.gate import (
    COVERAGE_WEIGHT,
    LANGUAGE_QUANTILE,
    MIN_PER_LANGUAGE,
    PARTIAL_CHANCE,
    QUANTILE,
    Calibration,
    GateDecision,
    LexicalEvidence,
    by_language,
    calibrate,
    decide,
    guessed,
    language_gaps,
    probe_score,
    section_margin,
)
from briefd.retrieval.search import SearchRequest
from briefd.retrieval.spelling import Speller
from briefd.settings import Settings
from tests.conftest import WriteFiles

# two small documents: a partial refund section, a dispute section, a settlement cutoff
REFUNDS_AND_SETTLEMENT = {
    "domain/refunds.md": "# Refunds\n\n## Partial refunds\n\n"
    "A partial refund returns part of a captured payment.\n\n"
    "## Disputes\n\nA disputed payment cannot be refunded.\n",
    "domain/settlement.md": "# Settlement\n\nThe daily settlement cutoff is 22:00.\n",
}


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


def test_score_fusion_weighs_the_share_of_query_words_squared() -> None:
    """Two sections the vector and BM25 sides rate alike: the one holding more of the query's
    words leads, by the coverage bonus times the square of its share."""
    fused = score_fusion(
        [
            Evidence(1, cosine=0.80, bm25=-5.0, all_terms=False, coverage=1 / 3),
            Evidence(2, cosine=0.80, bm25=-5.0, all_terms=False, coverage=2 / 3),
            Evidence(3, cosine=0.70, bm25=-5.0, all_terms=True, coverage=1.0),
        ],
        vector_weight=0.7,
        all_terms_bonus=0.1,
        coverage_bonus=0.3,
    )
    by_key = {f.key: f for f in fused}
    assert [f.key for f in fused] == [2, 1, 3]
    assert dict(by_key[1].contributions)["coverage"] == pytest.approx(0.3 / 9)
    assert dict(by_key[2].contributions)["coverage"] == pytest.approx(0.3 * 4 / 9)
    assert by_key[3].score == pytest.approx(0.0 + 0.3 + 0.1 + 0.3)
    assert by_key[2].score == pytest.approx(0.7 + 0.3 + 0.3 * 4 / 9)


def test_score_fusion_ties_keep_input_order() -> None:
    fused = score_fusion([Evidence(7, None, -1.0, False), Evidence(3, None, -1.0, False)], 0.5, 0.1)
    assert [f.key for f in fused] == [7, 3]


def test_calibration_fits_the_threshold_to_the_probes_left_out_by_topic() -> None:
    eye = np.eye(4, dtype=np.float32)
    vectors = np.stack([eye[0], eye[0], eye[1], eye[2], eye[3]])
    probes = (("a", "en"), ("a", "en"), ("b", "en"), ("c", "en"), ("recipes", "en"))
    best = np.array([0.5, 0.5, 0.6, 0.7, 0.9], dtype=np.float32)
    cal = calibrate("m", "fp", vectors, probes, best, (False, False, False, False, True))
    assert cal.left_out == ("recipes",) and len(cal.probe_vectors) == 4
    # each probe against the others' topics: a's nearest are b and c (0.0), so its margin is
    # its best cosine; the threshold is the QUANTILE of 0.5, 0.5, 0.6, 0.7
    assert cal.margins[0] == pytest.approx(0.55) and cal.margins[2] == pytest.approx(0.7)
    assert cal.threshold == pytest.approx(float(np.quantile([0.5, 0.5, 0.6, 0.7], QUANTILE)))
    query = np.array([0.8, 0.6, 0.0, 0.0], dtype=np.float32)
    assert probe_score(cal, query) == pytest.approx((0.8 + 0.8 + 0.6) / 3)
    assert cal.knobs()["left_out_topics"] == ["recipes"]


def test_a_probe_topic_scoring_far_past_the_others_is_left_out_as_covered() -> None:
    """R4: a Docker knowledge base scored its Docker probe +0.138 (the next +0.090): kept, it
    raised the threshold past real Docker questions. A topic past Tukey's far-out fence of
    the probes' scores (3 interquartile ranges over the third quartile) is this index's own."""
    eye = np.eye(10, dtype=np.float32)
    topics = tuple((t, "en") for t in "abcdefghij")
    best = np.array([0.50, 0.52, 0.54, 0.56, 0.58, 0.60, 0.62, 0.64, 0.70, 0.95], np.float32)
    lexical = (False,) * 10
    cal = calibrate("m", "fp", eye, topics, best, lexical)
    assert cal.left_out == ("j",) and len(cal.probe_vectors) == 9
    assert cal.threshold == pytest.approx(float(np.quantile(best[:9], QUANTILE)), abs=1e-6)
    assert cal.knobs()["left_out_topics"] == ["j"]
    near = best.copy()
    near[9] = 0.80  # 2 ranges past the quartile: a high probe, not the index's own topic
    assert calibrate("m", "fp", eye, topics, near, lexical).left_out == ()


def test_probes_of_another_language_count_less_by_their_language_gap() -> None:
    best = np.array([0.80, 0.82, 0.70, 0.72], dtype=np.float32)
    gaps = language_gaps(("en", "en", "tr", "tr"), best)
    assert gaps.tolist() == pytest.approx([0.0, 0.0, 0.20, 0.20])  # twice the 0.10 gap


def test_a_query_in_another_language_is_weighed_against_that_languages_probes() -> None:
    rng = np.random.default_rng(3)
    n = MIN_PER_LANGUAGE
    home, foreign = rng.normal(0.08, 0.02, n), rng.normal(0.01, 0.02, n)  # tr scores lower
    margins = np.concatenate([home, foreign])
    levels = {name: (m, q) for name, m, q in by_language(margins, ("en",) * n + ("tr",) * n)}
    spread = math.sqrt((np.var(home) + np.var(foreign)) / 2)  # of both languages' probes
    deviate = NormalDist().inv_cdf(LANGUAGE_QUANTILE)
    assert levels["tr"][1] == pytest.approx(float(np.median(foreign)) + deviate * spread)
    assert levels["en"][0] == pytest.approx(float(np.median(home)))
    assert by_language(margins[: n - 1], ("en",) * (n - 1)) == ()  # too few for levels
    eye = np.eye(4, dtype=np.float32)
    vectors = np.stack([eye[i % 2] for i in range(n)] + [eye[2 + i % 2] for i in range(n)])
    languages = ("en",) * n + ("tr",) * n
    cal = Calibration(
        "m", "fp", vectors, np.zeros(2 * n, np.float32), 0.10, 2 * n, (), (0.05, 0.10, 0.12),
        (("en", 0.06, 0.11), ("tr", 0.0, 0.03)), languages,
    )  # fmt: skip
    turkish = np.array([0.0, 0.0, 0.7, 0.7], dtype=np.float32)
    assert cal.language_of(turkish) == "tr" and cal.language_of(eye[0]) == "en"
    assert cal.levels("tr") == (0.0, 0.03)  # its own language's, lower
    assert cal.levels("en") == (0.05, 0.10)  # never above the pooled levels
    assert cal.levels(None) == (0.05, 0.10) and cal.levels("de") == (0.05, 0.10)
    assert cal.knobs()["by_language"] == {
        "en": {"median": 0.06, "threshold": 0.11},
        "tr": {"median": 0.0, "threshold": 0.03},
    }
    probes = tuple((str(i), language) for i, language in enumerate(languages))
    fitted = calibrate(
        "m", "fp", vectors, probes, np.full(2 * n, 0.5, np.float32), (False,) * 2 * n
    )
    assert [name for name, _, _ in fitted.languages] == ["en", "tr"]
    assert fitted.probe_languages == languages


def test_a_languages_own_level_rejects_its_off_topic_probes_at_the_target_rate() -> None:
    # a level of its own lets questions in that language through below the pooled threshold;
    # held to its probes' 93rd percentile, 2 of these 20 Turkish probes scored at or above it
    # (90% rejected): the target is 95%, and a Turkish off-topic question scoring like
    # the second highest of them was kept
    n = MIN_PER_LANGUAGE
    home, foreign = np.linspace(0.05, 0.10, n), np.linspace(-0.02, 0.02, n)
    levels = {
        name: (median, level)
        for name, median, level in by_language(
            np.concatenate([home, foreign]), ("en",) * n + ("tr",) * n
        )
    }
    median, level = levels["tr"]
    assert float(np.mean(foreign < level)) >= 0.95
    eye = np.eye(4, dtype=np.float32)
    vectors = np.stack([eye[i % 2] for i in range(n)] + [eye[2 + i % 2] for i in range(n)])
    cal = Calibration(
        "m", "fp", vectors, np.zeros(2 * n, np.float32), 0.10, 2 * n, (), (0.07, 0.10, 0.12),
        (("en", *levels["en"]), ("tr", median, level)), ("en",) * n + ("tr",) * n,
    )  # fmt: skip
    turkish = np.array([0.0, 0.0, 0.7, 0.7], dtype=np.float32)
    language = cal.language_of(turkish)
    floor, threshold = cal.levels(language)
    assert (language, threshold) == ("tr", level)
    words = LexicalEvidence(("kedi", "tirmalama"), (0, 0), 40, False)
    second = float(foreign[-2])  # the second highest Turkish probe's score, as a question's
    decision = decide(words, 0.5 + second, 0.5, threshold, floor, language)
    assert decision.decision == "empty", decision.reasons
    assert cal.knobs()["language_quantile"] == LANGUAGE_QUANTILE


def test_a_language_whose_probes_are_phrased_alike_is_held_to_the_spread_of_all_probes() -> None:
    """A language's level is its probes' median plus the normal 95% deviate times the spread
    of every language's probes about their own median. One language's probes, translations of
    the same topics phrased alike, scatter less than users' questions: on an English TV manual
    the Turkish probes' own 95th percentile was +0.005 and "günaydın, kahveni içtin mi" (+0.007)
    got eight sections. The index's own language keeps the pooled threshold where lower;
    another language's level holds where it is higher too."""
    n = MIN_PER_LANGUAGE
    home = np.linspace(0.00, 0.10, n)  # English probes: scattered as users' questions are
    turkish = np.linspace(-0.02, 0.005, n)  # Turkish ones: lower (the gap) and bunched
    levels = {
        name: (median, level)
        for name, median, level in by_language(
            np.concatenate([home, turkish]), ("en",) * n + ("tr",) * n
        )
    }
    median, level = levels["tr"]
    assert level > float(np.quantile(turkish, LANGUAGE_QUANTILE)) + 0.02
    eye = np.eye(4, dtype=np.float32)
    vectors = np.stack([eye[i % 2] for i in range(n)] + [eye[2 + i % 2] for i in range(n)])
    languages = ("en",) * n + ("tr",) * n
    gaps = np.asarray([0.0] * n + [0.03] * n, np.float32)  # Turkish probes pay a gap: not home
    cal = Calibration(
        "m", "fp", vectors, gaps, 0.10, 2 * n, (), (0.05, 0.10, 0.12),
        (("en", *levels["en"]), ("tr", median, level)), languages,
    )  # fmt: skip
    assert cal.home() == frozenset({"en"}) and cal.knobs()["index_languages"] == ["en"]
    floor, threshold = cal.levels("tr")
    assert (floor, threshold) == (min(median, 0.05), level)
    words = LexicalEvidence(("günaydin", "kahveni", "içtin"), (0, 0, 0), 269, False)
    greeting = decide(words, 0.5 + 0.007, 0.5, threshold, floor, "tr")  # above every probe
    assert greeting.decision == "empty", greeting.reasons
    assert greeting.reasons[-1].endswith(f"for questions in tr {level:+.3f}")
    assert decide(words, 0.5 + level + 0.01, 0.5, threshold, floor, "tr").decision == "kept"
    assert cal.levels("en") == (0.05, levels["en"][1])  # lower than the pooled threshold
    # a language whose probes score above the index's own keeps its higher level; the index's
    # own language never goes above the pooled threshold
    high = replace(cal, languages=(("en", 0.06, 0.2), ("tr", 0.09, 0.14)))
    assert high.levels("tr") == (0.05, 0.14) and high.levels("en") == (0.05, 0.10)
    # probes without a gap (one language's index, or no languages known): all capped
    flat = replace(high, probe_offsets=np.zeros(2 * n, np.float32))
    assert flat.levels("tr") == (0.05, 0.10) and flat.home() == frozenset({"en", "tr"})
    assert replace(high, probe_languages=()).levels("tr") == (0.05, 0.10)


def test_a_query_whose_words_are_mostly_not_in_the_index_reads_as_foreign() -> None:
    words = ("konteyner", "nasil", "yeniden", "docker")
    assert LexicalEvidence(words, (0, 0, 0, 4), 40, False).foreign()
    assert not LexicalEvidence(words, (2, 3, 0, 4), 40, False).foreign()
    assert not LexicalEvidence((), (), 40, False).foreign()


def test_fusion_counts_a_foreign_querys_lexical_side_by_the_share_of_its_words_present() -> None:
    candidates = [
        Evidence(1, 0.80, -9.0, False),
        Evidence(2, 0.86, -1.0, False),
        Evidence(3, 0.50, None, False),
    ]
    same = score_fusion(candidates, vector_weight=0.7, all_terms_bonus=0.1)
    assert [f.key for f in same] == [1, 2, 3]  # the decisive BM25 match leads
    scaled = score_fusion(candidates, vector_weight=0.7, all_terms_bonus=0.1, lexical_scale=0.25)
    assert [f.key for f in scaled] == [2, 1, 3]  # a quarter of the words: the model leads
    assert dict(scaled[1].contributions)["lexical"] == pytest.approx(0.3 * 0.25)
    words = ("konteyner", "nasil", "yeniden", "docker")
    assert LexicalEvidence(words, (0, 0, 0, 4), 40, False).present() == 0.25
    assert LexicalEvidence((), (), 40, False).present() == 1.0


def test_gate_keeps_strong_lexical_evidence_whatever_the_margin() -> None:
    strong = LexicalEvidence(("sifre", "sifirlama", "baglantisi"), (2, 1, 3), 40, True)
    assert strong.chance == pytest.approx(40 * (2 / 40) * (1 / 40) * (3 / 40)) and strong.strong
    kept = decide(strong, best=0.80, probe=0.85, threshold=0.02)
    assert kept.decision == "kept"
    assert kept.reasons[0].startswith("lexical: strong: one section holds every query word")
    assert "below this index's threshold +0.020" in kept.reasons[1]
    common = LexicalEvidence(("good", "morning"), (30, 20), 40, True)  # 15 by chance
    assert not common.strong
    assert decide(common, best=0.80, probe=0.85, threshold=0.02).decision == "empty"
    absent = LexicalEvidence(("pizza", "recipe"), (0, 3), 40, False)
    empty = decide(absent, best=0.80, probe=0.85, threshold=0.02)
    assert empty.decision == "empty" and empty.reasons[0].endswith("not in the index: pizza")
    assert decide(absent, best=0.88, probe=0.85, threshold=0.02).decision == "kept"
    names = LexicalEvidence(
        ("fuat", "sezgin", "kac", "dogmustur"),
        (2, 2, 0, 0),
        40,
        False,
        ((True, True, False, False),),
    )
    assert names.supporting() == ("fuat", "sezgin")  # both names in the best section
    supported = decide(names, best=0.80, probe=0.81, threshold=0.02, floor=-0.02)
    # the section holds 39% of the IDF mass (two words in 2 of 40 sections, two in none):
    # score = margin -0.010 + 0.05 × 0.392
    assert supported.decision == "kept" and supported.reasons[2].startswith(
        "supported: a best section holds fuat, sezgin; score +0.010 is at or above"
    )
    assert decide(names, best=0.80, probe=0.85, threshold=0.02, floor=-0.02).decision == "empty"
    assert decide(strong, None, None, None).decision == "kept"
    assert decide(absent, None, None, None).decision == "empty"


def test_partial_support_counts_every_set_of_query_words_as_specific() -> None:
    """Which words a best section holds is not chosen in advance. "latex table column is too
    wide for the page" against scifact's 5,265 abstracts: the best section holds "table" and
    "column", 0.04 sections by chance, and it was kept as supported; but four other pairs of
    its words are as specific, and the five together come to 0.15 sections. A real question of
    golden-tr keeps its support: the three words its answer holds are among sets as specific
    that add up to 0.04 of its 86 sections."""
    pair = (False, True, True, False, False, False)
    latex = LexicalEvidence(
        ("latex", "table", "column", "too", "wide", "page"),
        (138, 26, 8, 20, 350, 8),
        5265,
        False,
        (pair,),
    )
    assert latex._chance((26, 8)) == pytest.approx(208 / 5265)  # under PARTIAL_CHANCE alone
    assert latex.as_specific((26, 8)) > PARTIAL_CHANCE  # counting stops once past it
    assert latex.supporting() == ()
    assert decide(latex, best=0.838, probe=0.824, threshold=0.044, floor=0.013).decision == (
        "empty"
    )
    void = LexicalEvidence(
        ("void", "istegi", "22", "57", "geldi", "void_window_closed", "aliyoruz"),
        (8, 3, 3, 0, 1, 2, 1),
        86,
        False,
        ((True, False, True, False, False, True, False),),
    )
    # the sets of three present words whose section counts multiply to 48 or less: 300 of 86²
    assert void.as_specific((8, 3, 2)) == pytest.approx(300 / 86**2)
    assert void.supporting() == ("void", "22", "void_window_closed")
    alone = LexicalEvidence(("fuat", "sezgin", "kac"), (2, 2, 0), 40, False, ((True, True, False),))
    assert alone.as_specific((2, 2)) == pytest.approx(0.1)  # the one pair the index could hold
    # a long paste: 300 words in one section each and 200 in a tenth of a million sections; a
    # best section holds two of the rare ones (0.000001 by chance), one of 44,850 pairs as
    # specific. 124,750 pairs of its words leave the bound open, and the count stops after
    # SUBSET_WALK sets: a paste that long gets no support from a few of its words
    paste = LexicalEvidence(
        tuple(f"w{n}" for n in range(500)),
        (1,) * 300 + (100_000,) * 200,
        10**6,
        False,
        ((True, True) + (False,) * 498,),
    )
    assert paste.as_specific((1, 1)) == math.inf
    assert paste.supporting() == ()


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


def test_a_fallback_to_bm25_says_why_and_how_to_embed(
    settings: Settings, write_files: WriteFiles
) -> None:
    """An index embedded by another model id (an earlier briefd's, before `briefd index` ran)
    is searched by keywords only: the answer says so, beside a default scope's warning."""
    write_files({"domain/refunds.md": "# Refunds\n\nPartial refunds of a captured payment.\n"})
    settings = replace(settings, default_scopes=("domain", "ops"))
    with Briefd(settings, embedder=FakeEmbedder(name="fake-a")) as api:
        api.index()
    with Briefd(settings, embedder=FakeEmbedder(name="fake-b")) as other:
        result = other.search(SearchRequest("partial refunds"))
        assert result.mode == "bm25" and result.hits[0].doc_path == "domain/refunds.md"
        assert result.warnings[0] == (
            "searched by keywords only (bm25): this index has no vectors of fake-b@fake-1 (it has "
            "vectors of fake-a@fake-1); run `briefd index` to embed it with this model"
        )
        assert "'ops'" in result.warnings[1]  # the default scope the index lacks
        other.index()
        assert other.search(SearchRequest("partial refunds")).warnings == result.warnings[1:]


def test_a_bundle_on_an_index_of_another_model_falls_back_as_search_does(
    settings: Settings, write_files: WriteFiles
) -> None:
    """Search falls back to bm25 on an index without the model's vectors (an upgrade's new
    model id, an index run still embedding); a bundle failed outright ("needs vectors …, or
    use --mode bm25", which no bundle takes). It is compiled in bm25 and says why, and once
    the vectors are there it is compiled again in hybrid (never served from that cache)."""
    write_files({"domain/refunds.md": "# Refunds\n\nPartial refunds of a captured payment.\n"})
    with Briefd(settings, embedder=FakeEmbedder(name="fake-a")) as api:
        api.index()
    with Briefd(settings, embedder=FakeEmbedder(name="fake-b")) as other:
        bundle = other.compile_bundle(BundleRequest("partial refunds of a captured payment"))
        assert bundle.items[0].doc_path == "domain/refunds.md"
        assert bundle.diagnostics.search_mode == "bm25"
        assert bundle.warnings[0].startswith("searched by keywords only (bm25): this index has ")
        other.index()  # embeds with fake-b
        again = other.compile_bundle(BundleRequest("partial refunds of a captured payment"))
        assert not again.cached and again.diagnostics.search_mode == "hybrid"
        assert again.warnings == ()


class _StopsAfterOneBatch(FakeEmbedder):
    """fake-b embedding passages until its second batch fails (a run stopped halfway)."""

    def embed_batch(self, texts: Sequence[str], kind: EmbeddingKind) -> Vectors:
        if kind == "passage" and len([c for c in self.calls if c[0] == "passage"]) >= 1:
            raise EmbeddingError("the embedding service went away")
        return super().embed_batch(texts, kind)


def test_an_index_half_embedded_with_a_new_model_is_not_searched_as_if_it_were_done(
    settings: Settings, write_files: WriteFiles
) -> None:
    """While an index run embeds the index with a new model id (an upgrade's; the old model's
    vectors are kept until the new ones cover every chunk), or after one stopped halfway, a
    search does not use the few new vectors as if they were the index's: it searches by
    keywords, says so, and hybrid comes back once every chunk has its vector."""
    write_files(
        {
            "domain/refunds.md": "# Refunds\n\nPartial refunds of a captured payment.\n",
            "domain/fees.md": "# Fees\n\nInterchange fees are passed through.\n",
            "domain/payouts.md": "# Payouts\n\nPayouts settle daily to the merchant.\n",
        }
    )
    one = replace(settings, embeddings=replace(settings.embeddings, batch_size=1))
    with Briefd(one, embedder=FakeEmbedder(name="fake-a")) as api:
        api.index()
    with Briefd(one, embedder=_StopsAfterOneBatch(name="fake-b")) as stopped:
        assert stopped.index().embedding_error == "the embedding service went away"
    with Briefd(one, embedder=FakeEmbedder(name="fake-b")) as other:
        result = other.search(SearchRequest("partial refunds"))
        assert result.mode == "bm25" and result.hits[0].doc_path == "domain/refunds.md"
        assert result.warnings == (
            "searched by keywords only (bm25): this index has vectors of fake-b@fake-1 for part "
            "of it only (2 sections to go: an index run is embedding them, or stopped before it "
            "was done) (it has vectors of fake-a@fake-1); run `briefd index` to embed it with "
            "this model",
        )
        with pytest.raises(QueryError, match=r"has them for part of it only \(2 sections"):
            other.search(SearchRequest("partial refunds", mode="hybrid"))
        other.index()
        done = other.search(SearchRequest("partial refunds"))
        assert (done.mode, done.warnings) == ("hybrid", ())


def test_coverage_is_the_idf_share_a_best_section_holds_and_adds_to_the_margin() -> None:
    words = ("chargeback", "evidence", "deadline")
    idf = [math.log(1 + 40 / (n + 0.5)) for n in (1, 4, 0)]
    held = LexicalEvidence(words, (1, 4, 0), 40, False, ((False, True, False), (True, True, False)))
    assert held.coverage() == pytest.approx((idf[0] + idf[1]) / sum(idf))  # the better section
    assert LexicalEvidence(words, (1, 4, 0), 40, False).coverage() == 0.0  # no section looked up
    full = LexicalEvidence(words[:2], (1, 4), 40, False, ((True, True),))  # not strong
    assert full.coverage() == pytest.approx(1.0)
    # margin +0.010 alone is below the threshold; the words' coverage lifts the score above it
    kept = decide(full, best=0.80, probe=0.79, threshold=0.01 + COVERAGE_WEIGHT / 2)
    assert kept.decision == "kept" and "holds 100% of the words' IDF mass" in kept.reasons[1]
    bare = LexicalEvidence(words[:2], (1, 4), 40, False)
    assert decide(bare, 0.80, 0.79, 0.01 + COVERAGE_WEIGHT / 2).decision == "empty"


def test_calibration_counts_each_probes_coverage_like_a_querys() -> None:
    eye = np.eye(3, dtype=np.float32)
    probes = (("a", "en"), ("b", "en"), ("c", "en"))
    best = np.array([0.5, 0.6, 0.7], dtype=np.float32)
    cal = calibrate("m", "fp", eye, probes, best, (False,) * 3, (0.0, 1.0, 0.2))
    scores = [0.5, 0.6 + COVERAGE_WEIGHT, 0.7 + 0.2 * COVERAGE_WEIGHT]
    assert cal.threshold == pytest.approx(float(np.quantile(scores, QUANTILE)))
    assert cal.margins[0] == pytest.approx(float(np.median(scores)))


def test_a_probe_is_looked_up_as_a_query_is_corrected_and_in_its_best_sections(
    settings: Settings, write_files: WriteFiles
) -> None:
    write_files(REFUNDS_AND_SETTLEMENT)
    with Briefd(settings) as api:
        api.index()
        with api.store.read() as conn:
            plain = gate_evidence.for_text(conn, "partial refnd of a captured paymnt", Lexicon())
            fixed = gate_evidence.for_text(
                conn, "partial refnd of a captured paymnt", Lexicon(), speller=Speller()
            )
            unknown = gate_evidence.for_text(conn, "partial scarf", Lexicon(), speller=Speller())
    # without the speller two words are unknown; with it every word is in the best BM25 section
    assert plain.missing() == ("refnd", "paymnt") and 0 < plain.coverage() < 0.5
    assert fixed.all_words and fixed.coverage() == pytest.approx(1.0)
    assert unknown.missing() == ("scarf",) and unknown.coverage() < 0.5


def test_a_spelling_correction_that_changes_the_stem_is_a_guess() -> None:
    assert not guessed("dedline", ("deadline",))  # a left-out letter
    assert not guessed("subaylari", ("subaylar",))  # the same stem, another ending
    assert not guessed("cizimleri", ("cizimlerine",))
    assert not guessed("settlemant", ("settlement",))  # a slip in the ending
    # German typed with ae, oe, ue for ä, ö, ü, the index folding them to a, o, u
    assert not guessed("zurueckschicken", ("zuruckschicken",))
    assert not guessed("rueckgaengig", ("ruckgangig",))
    assert guessed("soccer", ("docker",))
    assert guessed("venice", ("device",))
    assert not guessed("refund", ())  # no correction: a word as typed


def test_guessed_corrections_give_a_question_no_lexical_support(
    settings: Settings, write_files: WriteFiles
) -> None:
    chores = "".join(f"## Chore {n}\n\nStep {n} of the weekly chores.\n\n" for n in range(10))
    write_files(
        REFUNDS_AND_SETTLEMENT
        | {
            "domain/builds.md": "# Builds\n\n## Images\n\nThe docker image is built outside the "
            "cluster.\n\n## Caches\n\nLayer caches live on the runner.\n",
            "domain/chores.md": "# Chores\n\n" + chores,
        }
    )
    with Briefd(settings) as api:
        api.index()
        with api.store.read() as conn:
            guess, typo = (
                gate_evidence.for_text(conn, text, Lexicon(), speller=Speller())
                for text in ("offside soccer tactics", "outsid dockr tactics")
            )
    # both are corrected to two words of one section, the third word is in none; only the
    # typo keeps the words' stems, and only its two words support the question
    assert guess.missing() == typo.missing() == ("tactics",)
    assert guess.guesses == (True, True, False) and guess.supporting() == ()
    assert typo.guesses == (False, False, False) and typo.supporting() == ("outsid", "dockr")
    reason = decide(guess, best=0.80, probe=0.81, threshold=0.02, floor=-0.02).reasons[0]
    assert reason.endswith(
        "not in the index: tactics; spelling guesses, no support: offside, soccer"
    )


def test_a_gate_fit_of_an_earlier_release_is_said_until_an_index_run_refits_it(
    settings: Settings, write_files: WriteFiles
) -> None:
    """A release that fits the gate another way leaves the stored fit as the earlier release
    made it: searches were gated by it without a word until `briefd index` ran."""
    write_files({"domain/refunds.md": "# Refunds\n\nPartial refunds of a captured payment.\n"})
    with Briefd(settings, embedder=FakeEmbedder()) as api:
        api.index()
        assert api.search(SearchRequest("partial refunds")).warnings == ()
        older = f"v{int(gate_fit.VERSION) - 1}:"
        with api.store.write() as conn:  # the fit as the release before the upgrade left it
            current = f"v{gate_fit.VERSION}:"
            conn.execute(
                "UPDATE calibration SET fingerprint = replace(fingerprint, ?, ?)", (current, older)
            )
            conn.execute("UPDATE index_meta SET value = replace(value, ?, ?)", (current, older))
    with Briefd(settings, embedder=FakeEmbedder()) as api:
        result = api.search(SearchRequest("partial refunds"))
        assert result.gate == "kept" and result.hits[0].doc_path == "domain/refunds.md"
        assert result.warnings == (
            f"the relevance gate was fitted to this index by an earlier briefd (fit {older[:-1]}; "
            f"this one fits v{gate_fit.VERSION}), and gates this search so until an index run "
            "refits it: run `briefd index` (no document needs to change)",
        )
        api.index()
        assert api.search(SearchRequest("partial refunds")).warnings == ()


def test_a_question_whose_best_section_is_as_near_everyday_talk_keeps_nothing() -> None:
    """The section side of the margin: the off-topic probe nearest the query's best section
    is compared with the query. Each probe's own (against the probes of other topics) sets
    the level: their median. A question scoring above the threshold whose best section is
    nearer some everyday talk than to it is emptied; strong lexical evidence still keeps, and
    lexical support exempts."""
    eye = np.eye(4, dtype=np.float32)
    probes = (("a", "en"), ("b", "en"), ("c", "en"))
    sections = np.array(
        [[0.8, 0.6, 0.0, 0.0], [0.0, 0.6, 0.0, 0.8], [0.0, 0.0, 0.0, 1.0]], dtype=np.float32
    )  # each probe's best section: a's is near b too; b's near itself only; c's near nothing
    best = np.array([0.8, 0.6, 0.0], dtype=np.float32)
    cal = calibrate("m", "fp", eye[:3], probes, best, (False,) * 3, None, sections)
    # a: 0.8 - 0.6 (b at a's section); b: 0.6 - 0.0; c: 0.0 - 0.0 → median 0.2
    assert cal.section_floor == pytest.approx(0.2) and cal.section_languages == ()
    assert cal.section_level(None) == pytest.approx(0.2) and cal.knobs()["section_floor"] == 0.2
    assert section_margin(cal, 0.9, sections[0]) == pytest.approx(0.9 - 0.8)
    weak = LexicalEvidence(("lentil", "soup"), (1, 0), 40, False)
    strong = LexicalEvidence(("settlement", "cutoff"), (1, 1), 40, True)

    def gated(words: LexicalEvidence, section: tuple[float, float] | None) -> GateDecision:
        return decide(words, best=0.9, probe=0.5, threshold=0.1, section=section)  # score +0.4

    vetoed = gated(weak, (0.1, 0.2))
    assert vetoed.decision == "empty", vetoed.reasons
    assert vetoed.reasons[-1] == (
        "section: the best section is nearer this question than the off-topic probe nearest it "
        "by +0.100, below the probes' 50% level +0.200: as near some everyday talk as to this "
        "question"
    )
    assert gated(weak, (0.3, 0.2)).decision == "kept"
    assert gated(weak, None).decision == "kept"  # a fit without section margins
    assert gated(strong, (0.1, 0.2)).decision == "kept"
    # the query's words in a best section support it: a weak model's real question is no
    # nearer its section than to everyday talk, and is not held to the section side
    names = LexicalEvidence(
        ("fuat", "sezgin", "dogdu"), (1, 1, 0), 40, False, ((True, True, False),)
    )
    supported = decide(names, 0.80, 0.81, 0.02, floor=-0.02, section=(-0.5, 0.2))
    assert supported.decision == "kept" and not supported.reasons[-1].startswith("section:")
    assert calibrate("m", "fp", eye[:3], probes, best, (False,) * 3).section_floor is None


def test_a_question_in_another_language_needs_its_languages_section_level() -> None:
    n = MIN_PER_LANGUAGE
    eye = np.eye(4, dtype=np.float32)
    vectors = np.stack([eye[i % 2] for i in range(n)] + [eye[2 + i % 2] for i in range(n)])
    languages = ("en",) * n + ("tr",) * n
    probes = tuple((str(i), language) for i, language in enumerate(languages))
    # every probe's best section is the index's one row, on the English side: the Turkish
    # probes are far from it (as a Turkish question is from English notes)
    row = np.array([0.6, 0.0, 0.0, 0.8], dtype=np.float32)
    best = np.asarray([0.6 if i % 2 == 0 else 0.0 for i in range(n)] + [0.0] * n, np.float32)
    cal = calibrate(
        "m", "fp", vectors, probes, best, (False,) * 2 * n, None, np.tile(row, (2 * n, 1))
    )
    levels = dict(cal.section_languages)
    assert levels["tr"] < levels["en"] and cal.section_floor is not None
    assert cal.section_level("tr") == pytest.approx(min(levels["tr"], cal.section_floor))
    assert cal.section_level("en") == pytest.approx(min(levels["en"], cal.section_floor))
    assert cal.section_level(None) == cal.section_level("de") == cal.section_floor


def test_a_hybrid_search_weighs_its_best_sections_margin_with_the_fitted_level(
    settings: Settings, write_files: WriteFiles
) -> None:
    write_files(REFUNDS_AND_SETTLEMENT)
    with Briefd(settings, embedder=FakeEmbedder()) as api:
        api.index()
        knobs = api.gate_calibration()["fake-bow@fake-1"]
        level = knobs["section_floor"]
        assert isinstance(level, float) and knobs["section_quantile"] == 0.5
        result = api.search(SearchRequest("partial refund of a disputed payment", mode="hybrid"))
    assert result.gate == "kept" and result.hits
    assert result.gate_reasons[-1].startswith(
        "section: the best section is nearer this question than the off-topic probe nearest it"
    )
    assert result.gate_reasons[-1].endswith(f"at or above the probes' 50% level {level:+.3f}")
