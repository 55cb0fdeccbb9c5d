"""Embedding what an index run brings (``briefd.ingest``): every passage of the coming index
without a vector of the model, before the run's write transaction commits. Vectors are keyed
by the hash of the embedded text (:mod:`briefd.vectors.store`), so a passage embedded once,
by an earlier run or by one that was stopped, is never embedded again."""

from __future__ import annotations

from dataclasses import dataclass

from briefd.embeddings.base import Embedder
from briefd.errors import EmbeddingError
from briefd.markdown.passages import passage_hash, passage_text
from briefd.markdown.spool import Spool
from briefd.retrieval import calibration
from briefd.settings import Settings
from briefd.store.db import Store
from briefd.vectors import store as vector_store
from briefd.vectors.embed import Progress, embed_missing


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
    try:
        pending, windows = _to_embed(store, embedder, parsed, replaced, rebuild, settings)
        if (pending or rebuild) and _resized(store, embedder):
            pending, windows = _to_embed(store, embedder, parsed, replaced, rebuild, settings)
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
    if windows:  # recorded once their vectors are in: an interrupted run cuts them again
        with store.write() as conn:
            vector_store.save_windows(conn, settings.embeddings.window_words, windows)
    return outcome


Windows = dict[str, list[tuple[str, str]]]


def _to_embed(
    store: Store,
    embedder: Embedder,
    parsed: Spool,
    replaced: set[str],
    rebuild: bool,
    settings: Settings,
) -> tuple[dict[str, str], Windows]:
    """The passages without a vector of the model (hash → text), and the section windows to
    record once theirs are in."""
    model, words = embedder.model_id, settings.embeddings.window_words
    with store.read() as conn:
        pending = {} if rebuild else vector_store.missing(conn, model, replaced)
        chunks = [(doc.title, c.heading_path, c.content) for doc in parsed for c in doc.chunks]
        fresh = {passage_hash(passage_text(*chunk)): chunk for chunk in chunks}
        windows = vector_store.windows_missing(conn, words, replaced) if words > 0 else {}
        windows.update((h, vector_store.windows_of(*c, words)) for h, c in fresh.items() if words)
        texts = {h: passage_text(*chunk) for h, chunk in fresh.items()}
        texts.update((h, text) for cut in windows.values() for h, text in cut)
        known = vector_store.present(conn, model, texts)
    pending.update((h, t) for h, t in texts.items() if h not in known)
    return pending, windows


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
