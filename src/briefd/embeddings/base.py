"""The embedder interface: one abstract batch method.

An embedder turns texts into L2-normalised float32 vectors. ``kind`` says whether the texts are
search queries or indexed passages, because asymmetric models (e5) embed them differently.
``model_id`` names the model *and* the runtime that produced the bits: the index never mixes
vectors of two model ids in one query.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

EmbeddingKind = Literal["query", "passage"]
Vectors = npt.NDArray[np.float32]


class Embedder(ABC):
    """Subclasses set ``name``, ``runtime`` and ``dim`` and implement :meth:`embed_batch`."""

    name: str
    runtime: str
    dim: int
    # where vectors this model always gives the same texts may be kept (a local model's folder
    # in embeddings.model_dir, see :mod:`.kept`); None: nowhere (a service's model may change)
    cache_dir: Path | None = None

    @property
    def model_id(self) -> str:
        return f"{self.name}@{self.runtime}"

    @abstractmethod
    def embed_batch(self, texts: Sequence[str], kind: EmbeddingKind) -> Vectors:
        """Vectors for ``texts`` as an (n, dim) float32 array, each row L2-normalised."""

    def embed_query(self, text: str) -> Vectors:
        """A search's query as a (1, dim) array: someone waits for it (a remote service gets
        ``embeddings.query_timeout_seconds`` for it, not the index runs' ``timeout_seconds``)."""
        return self.embed_batch([text], "query")

    def release(self) -> None:  # noqa: B027 (most embedders hold nothing to give back)
        """Give back what an index run took that single queries do not use (a passage engine, a
        batch session), at its end: a long-running server keeps only what answers queries. The
        next batch takes it again."""


def normalise(vectors: npt.NDArray[np.floating]) -> Vectors:
    """Rows scaled to unit length (zero rows stay zero), as float32."""
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim == 1:
        array = array.reshape(1, -1)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    result: Vectors = (array / norms).astype(np.float32, copy=False)
    return result
