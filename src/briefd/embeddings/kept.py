"""Calibration probes' vectors kept beside the model (R4, I8): the same model embeds the same
probe texts to the same vectors in every index, so the first index on a machine embeds them
and every later one reads them (~350 short queries, 2-8 CPU-s on 2 cores: a fresh index, a
``--rebuild``, each eval subset and the daemon's first prompt on each of them paid it again).

Only a model that names its weights and runtime in its id keeps them (a local one, whose
:attr:`~briefd.embeddings.base.Embedder.cache_dir` is set): a service's model may change
behind its name. A file that cannot be read back as the vectors asked for is embedded again
and replaced; a folder that cannot be written (read-only, full) only costs embedding them.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from briefd.embeddings.base import Embedder, EmbeddingKind, Vectors
from briefd.folders import write_atomically

log = logging.getLogger(__name__)

FORMAT = "1"  # bump when the file's layout changes


def probe_file(embedder: Embedder, label: str, texts: Sequence[str], kind: EmbeddingKind) -> Path:
    """Where ``embedder`` (one with a ``cache_dir``) keeps the vectors of ``texts``."""
    if embedder.cache_dir is None:
        raise ValueError(f"{embedder.model_id} keeps no vectors (no cache_dir)")
    key = "\x00".join((FORMAT, embedder.model_id, kind, *texts))
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
    return embedder.cache_dir / f"probes-{label}-{digest}.npy"


def probe_vectors(
    embedder: Embedder, label: str, texts: Sequence[str], kind: EmbeddingKind = "query"
) -> Vectors:
    """The vectors of the probe set ``label`` (``texts``): kept ones when the model keeps
    them, else embedded now (and kept). Other files of the same ``label`` (an earlier
    release's probes) are removed when a new one is written."""
    if embedder.cache_dir is None:
        return embedder.embed_batch(texts, kind)
    target = probe_file(embedder, label, texts, kind)
    found = _read(target, len(texts), embedder.dim)
    if found is not None:
        return found
    vectors = embedder.embed_batch(texts, kind)
    _keep(target, label, vectors)
    return vectors


def _read(path: Path, rows: int, dim: int) -> Vectors | None:
    try:
        array = np.load(io.BytesIO(path.read_bytes()), allow_pickle=False)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, EOFError) as exc:  # damaged, truncated, not ours
        log.debug("embedding the probes again: %s unreadable (%s)", path, exc)
        return None
    if array.shape != (rows, dim) or array.dtype != np.float32 or not np.isfinite(array).all():
        log.debug("embedding the probes again: %s holds %s %s", path, array.shape, array.dtype)
        return None
    vectors: Vectors = array
    return vectors


def _keep(target: Path, label: str, vectors: Vectors) -> None:
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(vectors, dtype=np.float32), allow_pickle=False)
    try:
        write_atomically(target, buffer.getvalue())
    except OSError as exc:  # read-only or full: embedded again next time, nothing lost
        log.debug("probe vectors not kept in %s: %s", target.parent, exc)
        return
    for older in target.parent.glob(f"probes-{label}-*.npy"):
        if older != target:
            with contextlib.suppress(OSError):
                older.unlink()
