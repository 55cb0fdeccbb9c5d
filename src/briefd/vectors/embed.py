"""Embedding what is missing: sorted by length, in batches, each batch committed on its own.

Vectors are keyed by the hash of the embedded text, so a batch written before a crash or an
interruption is never computed again, and no reader ever sees a half-written batch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from briefd.embeddings.base import Embedder
from briefd.store.db import Store
from briefd.vectors import store as vector_store

Progress = Callable[[str, int, int], None]


def embed_missing(
    store: Store,
    embedder: Embedder,
    pending: Mapping[str, str],
    batch_size: int,
    progress: Progress,
) -> int:
    """Embed ``pending`` (hash → text) as passages; returns how many vectors were written."""
    order = sorted(pending, key=lambda h: (len(pending[h]), h))
    done = 0
    for start in range(0, len(order), max(1, batch_size)):
        hashes = order[start : start + batch_size]
        vectors = embedder.embed_batch([pending[h] for h in hashes], "passage")
        with store.write() as conn:
            vector_store.save(conn, embedder.model_id, hashes, vectors)
        done += len(hashes)
        progress("embed", done, len(order))
    return done
