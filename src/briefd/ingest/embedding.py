"""Embedding what an index run brings (``briefd.ingest``): every passage of the coming index
without a vector of the model, before the run's write transaction commits. Vectors are keyed
by the hash of the embedded text (:mod:`briefd.vectors.store`), so a passage embedded once,
by an earlier run or by one that was stopped, is never embedded again."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from briefd.embeddings.base import Embedder
from briefd.errors import EmbeddingError
from briefd.markdown.passages import passage_hash, passage_text
from briefd.markdown.spool import Spool
from briefd.retrieval import calibration
from briefd.settings import Settings
from briefd.store.db import Store
from briefd.vectors import store as vector_store
from briefd.vectors.embed import PendingTexts, Progress, embed_missing


@dataclass(slots=True)
class EmbedOutcome:
    embedded: int = 0
    windows: int = 0
    replaced_models: tuple[str, ...] = ()  # other models' vectors found (replaced once covered)
    missing: int = 0
    error: str | None = None


def embed_changes(
    store: Store,
    embedder: Embedder | None,
    parsed: Spool,
    replaced: set[str],
    rebuild: bool,
    settings: Settings,
    progress: Progress,
) -> EmbedOutcome:
    """Embed every passage of the coming index that has no vector yet, before it commits.

    An embedding failure is reported, not raised: the documents are still indexed (BM25 works)
    and the next run embeds what is missing.
    """
    outcome = EmbedOutcome()
    if embedder is None:
        return outcome
    with store.write() as conn:
        vector_store.backfill_hashes(conn)
    pending = PendingTexts(store.path.expanduser().absolute().parent)
    try:
        windows = _to_embed(store, embedder, parsed, replaced, rebuild, settings, pending)
        if (pending or rebuild) and _resized(store, embedder):
            pending.close()
            pending = PendingTexts(store.path.expanduser().absolute().parent)
            windows = _to_embed(store, embedder, parsed, replaced, rebuild, settings, pending)
        with store.read() as conn:
            outcome.replaced_models = tuple(
                m for m in vector_store.models(conn) if m != embedder.model_id
            )
        outcome.embedded = embed_missing(
            store, embedder, pending, settings.embeddings.batch_size, progress
        )
    except EmbeddingError as exc:
        outcome.error = str(exc)
        return outcome
    finally:
        pending.close()
    if windows:  # recorded once their vectors are in: an interrupted run cuts them again
        with store.write() as conn:
            vector_store.save_windows(conn, settings.embeddings.window_words, windows)
    return outcome


Windows = dict[str, list[tuple[str, str]]]  # chunk hash → its windows' (hash, '')
LOOKUP = 2_000  # passages looked up in the index at a time


def _to_embed(
    store: Store,
    embedder: Embedder,
    parsed: Spool,
    replaced: set[str],
    rebuild: bool,
    settings: Settings,
    pending: PendingTexts,
) -> Windows:
    """Put the passages without a vector of the model in ``pending`` (hash → text); return
    the section windows to record once theirs are in (their hashes). The parsed documents are
    read once and their passages looked up a batch at a time: a list of every passage's text,
    and a dict of them, took a 20,000-document first index +150 MB until it embedded."""
    model, words = embedder.model_id, settings.embeddings.window_words
    windows: Windows = {}
    with store.read() as conn:
        lookup = _Lookup(conn, model, pending)
        if not rebuild:
            for digest, text in vector_store.missing(conn, model, replaced):
                pending.add(digest, text)  # a stored chunk's, known to have no vector
        for chunk, cut in vector_store.windows_missing(conn, words, replaced):
            windows[chunk] = lookup.windows(cut)
        for doc in parsed:
            for c in doc.chunks:
                digest = lookup.offer(passage_text(doc.title, c.heading_path, c.content))
                if words > 0:
                    cut = vector_store.windows_of(doc.title, c.heading_path, c.content, words)
                    windows[digest] = lookup.windows(cut)
        lookup.flush()
    return windows


class _Lookup:
    """Passages offered for embedding, looked up :data:`LOOKUP` at a time: those the model has
    no vector of go to ``pending``."""

    def __init__(self, conn: sqlite3.Connection, model: str, pending: PendingTexts) -> None:
        self.conn, self.model, self.pending = conn, model, pending
        self.offered: dict[str, str] = {}

    def offer(self, text: str) -> str:
        digest = passage_hash(text)
        self.offered[digest] = text
        if len(self.offered) >= LOOKUP:
            self.flush()
        return digest

    def windows(self, cut: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """Offer a chunk's windows; their hashes, as :func:`vector_store.save_windows` takes
        them (the texts are not kept)."""
        for _, text in cut:
            self.offer(text)
        return [(digest, "") for digest, _ in cut]

    def flush(self) -> None:
        known = vector_store.present(self.conn, self.model, self.offered)
        for digest, text in self.offered.items():
            if digest not in known:
                self.pending.add(digest, text)
        self.offered.clear()


def _resized(store: Store, embedder: Embedder) -> bool:
    """Whether the model's stored vectors have another size than it gives now: another model
    answers under its name (a remote service's tag pulled again, a server swapped). Those
    vectors are dropped, with the record of cut windows and the gate's fit: everything is
    embedded again."""
    model = embedder.model_id
    with store.read() as conn:
        stored = vector_store.dims(conn, model)
    if not stored or stored == {embedder.dim}:
        return False
    with store.write() as conn:
        vector_store.drop(conn, model)
        calibration.forget(conn, model)
    return True
