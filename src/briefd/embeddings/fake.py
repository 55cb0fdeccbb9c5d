"""A deterministic fake embedder for tests: hashed bag of words, so texts sharing words are close.

It is a real :class:`Embedder` (same interface, real vectors), only without a neural model.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from briefd.embeddings.base import Embedder, EmbeddingKind, Vectors, normalise

_WORD = re.compile(r"\w+")


class FakeEmbedder(Embedder):
    def __init__(self, dim: int = 64, name: str = "fake-bow") -> None:
        self.name = name
        self.runtime = "fake-1"
        self.dim = dim
        self.calls: list[tuple[EmbeddingKind, int]] = []

    def embed_batch(self, texts: Sequence[str], kind: EmbeddingKind) -> Vectors:
        self.calls.append((kind, len(texts)))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self.dim
                sign = 1.0 if digest[4] & 1 else -1.0
                out[row, bucket] += sign
        return normalise(out)
