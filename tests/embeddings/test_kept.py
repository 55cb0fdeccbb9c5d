"""Calibration probes' vectors kept beside the model (R4, I8): the first index embeds the gate's
and recall's probes, a second index with the same model reads them instead of embedding them
again; a damaged file is embedded again, a read-only folder only costs the embedding, and a
model without a folder of its own (a service's) embeds them every time."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from briefd.api import Briefd
from briefd.embeddings import kept
from briefd.embeddings.fake import FakeEmbedder
from briefd.embeddings.registry import create_embedder
from briefd.recall.engine import RecallRequest
from briefd.recall.generic import GENERIC_PROMPTS
from briefd.retrieval.calibration import load
from briefd.retrieval.probes import probe_list
from briefd.settings import Settings
from tests.conftest import WriteFiles

GATE = len(probe_list())
GENERIC = sum(len(group) for group in GENERIC_PROMPTS.values())
NOTES = {
    "domain/refunds.md": "# Refunds\n\n## Refund window\n\nA refund is allowed for 180 days.\n",
    "domain/retries.md": "# Retries\n\n## Backoff\n\nRetry soft declines after 4 hours.\n",
}


def indexed(settings: Settings, db: str, embedder: FakeEmbedder) -> Briefd:
    """An index of the notes at ``db`` with ``embedder``, recalled once (recall's generic
    probes are embedded on its first hybrid prompt)."""
    api = Briefd(dataclasses.replace(settings, db=settings.db.with_name(db)), embedder=embedder)
    api.index()
    api.recall(RecallRequest("how long is the refund window", mode="hybrid"))
    return api


def probe_batches(embedder: FakeEmbedder) -> list[int]:
    """The sizes of the query batches ``embedder`` was given that were probe sets."""
    return [n for kind, n in embedder.calls if kind == "query" and n in (GATE, GENERIC)]


def test_a_second_index_reads_the_probes_the_first_embedded(
    settings: Settings, write_files: WriteFiles, tmp_path: Path
) -> None:
    write_files(NOTES)
    first, second = FakeEmbedder(), FakeEmbedder()
    first.cache_dir = second.cache_dir = tmp_path / "models" / "fake-bow"
    with indexed(settings, "one.db", first) as one:
        assert sorted(probe_batches(first)) == sorted([GATE, GENERIC])
        files = sorted(p.name.split("-")[1] for p in first.cache_dir.glob("probes-*.npy"))
        assert files == ["gate", "generic"]
        with one.store.read() as conn:
            fitted = load(conn, first.model_id)
    with indexed(settings, "two.db", second) as two:
        assert probe_batches(second) == []  # neither set embedded again
        with two.store.read() as conn:
            again = load(conn, second.model_id)
    assert fitted is not None and again is not None
    assert np.array_equal(fitted.probe_vectors, again.probe_vectors)


def test_a_damaged_file_is_embedded_again_and_replaced(tmp_path: Path) -> None:
    embedder = FakeEmbedder()
    embedder.cache_dir = tmp_path / "models"
    texts = ["first probe", "second probe"]
    target = kept.probe_file(embedder, "gate", texts, "query")
    target.parent.mkdir(parents=True)
    target.write_bytes(b"\x93NUMPY half a file")
    vectors = kept.probe_vectors(embedder, "gate", texts)
    assert embedder.calls == [("query", 2)]
    assert np.array_equal(np.load(target), vectors)
    np.save(target, np.zeros((3, embedder.dim), dtype=np.float32))  # another set's shape
    kept.probe_vectors(embedder, "gate", texts)
    assert embedder.calls == [("query", 2), ("query", 2)]
    assert kept.probe_vectors(embedder, "gate", texts) == pytest.approx(vectors)
    assert len(embedder.calls) == 2  # the replaced file is read


def test_a_new_probe_set_replaces_the_older_ones_of_its_kind_only(tmp_path: Path) -> None:
    embedder = FakeEmbedder()
    embedder.cache_dir = tmp_path
    kept.probe_vectors(embedder, "gate", ["old probe"])
    kept.probe_vectors(embedder, "generic", ["a generic prompt"])
    kept.probe_vectors(embedder, "gate", ["new probe"])
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(
        [
            kept.probe_file(embedder, "gate", ["new probe"], "query").name,
            kept.probe_file(embedder, "generic", ["a generic prompt"], "query").name,
        ]
    )


def test_a_folder_that_cannot_be_written_only_costs_the_embedding(tmp_path: Path) -> None:
    embedder = FakeEmbedder()
    embedder.cache_dir = tmp_path / "a-file"  # a file where the folder would be: any user
    embedder.cache_dir.write_text("not a folder\n")
    for _ in range(2):
        assert kept.probe_vectors(embedder, "gate", ["a probe"]).shape == (1, embedder.dim)
    assert embedder.calls == [("query", 1), ("query", 1)]
    assert embedder.cache_dir.read_text() == "not a folder\n"


def test_a_model_without_a_folder_embeds_its_probes_every_time(tmp_path: Path) -> None:
    embedder = FakeEmbedder()  # as a service's model: cache_dir None
    for _ in range(2):
        kept.probe_vectors(embedder, "gate", ["a probe"])
    assert embedder.calls == [("query", 1), ("query", 1)]


def test_a_local_model_keeps_its_probes_in_its_folder_of_the_model_dir(
    settings: Settings,
) -> None:
    local = dataclasses.replace(
        settings, embeddings=dataclasses.replace(settings.embeddings, enabled=True)
    )
    deferred = create_embedder(local, deferred=True)
    assert deferred is not None
    assert deferred.cache_dir == settings.embeddings.model_dir / settings.embeddings.model
