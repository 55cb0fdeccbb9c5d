"""The e5 graph file compiled by OpenVINO's CPU plugin: windows in, mean hidden states out.

Used two ways: the default model embeds every passage with it in ``f32`` (its query path stays
on onnxruntime, see :mod:`.e5onnx`), and the opt-in ``multilingual-e5-small-openvino`` runs
queries and passages on it (:mod:`.e5openvino`). The plugin reads the graph's 4-bit
``MatMulNBits`` products as its own compressed-weight products and runs them with oneDNN.

Windows run one at a time on every thread (one compiled model; a second would hold its
weights twice); concurrent callers take turns on a few infer requests. Each window runs
padded to one of a few lengths (:func:`bucket`), masked out of attention and of the mean: the
plugin keeps memory for every input shape it has run.
"""

from __future__ import annotations

import os
import queue
import sys
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from briefd.errors import EmbeddingError

CACHE_FOLDER = "openvino-cache"  # compiled graphs, beside the graph file
CONVERTER = "openvino.tools.ovc"  # imported by openvino, sends telemetry: kept out
OPTIONS = {"PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1}
BUCKETS = ((32, 4), (64, 8), (128, 16), (512, 32))  # (up to this many tokens, pad to a multiple)


class OpenVinoEngine:
    """One compiled e5 graph; :meth:`mean` runs a window's embedded tokens through it."""

    def __init__(self, graph: Path, threads: int, precision: str) -> None:
        openvino = openvino_module()
        threads = threads or os.cpu_count() or 1  # 0: every core (OpenVINO's own default
        # under its latency hint is one thread per physical core: one on a 2-vCPU VM)
        self.version: str = openvino.get_version()
        compiled = _compile(openvino, graph, threads, precision)
        self._requests: queue.SimpleQueue[Any] = queue.SimpleQueue()
        for _ in range(min(threads, 4)):
            self._requests.put(compiled.create_infer_request())

    def mean(self, x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """The mean hidden state of one window whose embedded tokens (with positions) are the
        rows of ``x``, run padded to its :func:`bucket`."""
        size, dim = x.shape
        padded = np.zeros((1, bucket(size), dim), dtype=np.float32)
        padded[0, :size] = x
        mask = np.zeros((1, padded.shape[1]), dtype=np.float32)
        mask[0, :size] = 1.0
        return self.infer(padded, mask)

    def infer(
        self, x: npt.NDArray[np.float32], mask: npt.NDArray[np.float32]
    ) -> npt.NDArray[np.float32]:
        """The graph's pooled output for one batch of inputs, as given (no padding)."""
        request = self._requests.get()
        try:
            request.infer({"x": x, "mask": mask})
            pooled = np.array(request.get_output_tensor(0).data, dtype=np.float32, copy=True)
        finally:
            self._requests.put(request)
        first: npt.NDArray[np.float32] = pooled[0]
        return first


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


def openvino_module() -> Any:
    """The openvino module (untyped), with no telemetry (O3); a clear error when it is not
    installed.

    ``import openvino`` also imports its model converter (``openvino.tools.ovc``), which
    writes a client id under ``~/intel`` and sends a usage event to Google Analytics unless
    the user ran OpenVINO's own opt-out script. briefd converts nothing: the converter is kept
    out (openvino's import goes on without it, as it does where the converter is missing)."""
    sys.modules.setdefault(CONVERTER, None)  # type: ignore[arg-type]
    try:
        import openvino
    except ImportError:
        raise EmbeddingError(
            "OpenVINO is not installed: pip install openvino==2026.4.1 (a dependency of "
            "briefd on Linux x86_64), or set embeddings.passage_engine: onnxruntime"
        ) from None
    return openvino


def _compile(openvino: Any, graph: Path, threads: int, precision: str) -> Any:
    """The graph compiled for the CPU, from OpenVINO's model cache beside the graph file when it
    can: 0.12-0.15 s and ~27 MB less RSS than compiling (0.49 s), measured on 2 vCPUs; the
    cache holds ~14 MB per precision. A cache that cannot be written (a read-only model
    directory, as in the container image) only costs the compile."""
    config = {**OPTIONS, "INFERENCE_PRECISION_HINT": precision, "INFERENCE_NUM_THREADS": threads}
    try:
        core = openvino.Core()
        core.set_property({"CACHE_DIR": str(graph.parent / CACHE_FOLDER)})
        return core.compile_model(str(graph), "CPU", config)
    except Exception:  # no cache here: compile as if there were none
        pass
    try:
        core = openvino.Core()
        return core.compile_model(core.read_model(str(graph)), "CPU", config)
    except Exception as exc:  # OpenVINO raises its own RuntimeError subclasses
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise EmbeddingError(
            f"OpenVINO cannot load {graph} ({first}); delete the file to rebuild it, or set "
            "embeddings.passage_engine: onnxruntime"
        ) from None
