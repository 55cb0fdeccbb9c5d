"""An index run's passages waiting to be embedded are held in memory up to a bound (O4, K1):
the rest wait in an unlinked file beside the index. Every passage's text was held twice (a list
and a dict) until embedding: a 20,000-document first index peaked at 350 MB where BM25 alone
took 200 MB, and that grew with the repository."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from briefd.api import Briefd
from briefd.embeddings.base import EmbeddingKind
from briefd.embeddings.fake import FakeEmbedder
from briefd.settings import Settings, with_overrides
from briefd.vectors import embed
from briefd.vectors.embed import PendingTexts
from tests.conftest import WriteFiles
from tests.store.test_index_spool import _spooled

WINDOWED = {"embeddings.window_words": 60}
PAGES = {
    f"domain/page-{n}.md": f"# Page {n}\n\n## Rules\n\n"
    + " ".join(f"Rule {n}.{k} says ledger entry {k} settles on day {n + k}." for k in range(30))
    + f"\n\n## Links\n\nNext: [[page-{(n + 1) % 40}]].\n"
    for n in range(40)
}


class Recording(FakeEmbedder):
    """The fake embedder, keeping every passage it was given in order."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def embed_batch(self, texts: Sequence[str], kind: EmbeddingKind) -> np.ndarray:  # type: ignore[type-arg]
        if kind == "passage":
            self.seen.extend(texts)
        return super().embed_batch(texts, kind)


def _stored(api: Briefd) -> list[tuple[object, ...]]:
    with api.store.read() as conn:
        vectors = conn.execute("SELECT embed_hash, embedding FROM chunk_vectors ORDER BY 1")
        windows = conn.execute("SELECT * FROM chunk_windows ORDER BY 1, 2, 3")
        return [tuple(r) for r in vectors] + [tuple(r) for r in windows]


def test_a_large_run_keeps_the_passages_to_embed_on_disk_and_embeds_them_all(
    settings: Settings,
    write_files: WriteFiles,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_files(PAGES)
    windowed = with_overrides(settings, WINDOWED)
    plain = Recording()
    with Briefd(windowed, embedder=plain) as api:
        first = api.index()
        expected = _stored(api)
    assert first.embedded == len(plain.seen) > 80 and first.windows > 40
    monkeypatch.setattr(embed, "IN_MEMORY", 2_000)  # a repository of 55,000 files, in small
    other = with_overrides(windowed, {"db": str(tmp_path / "bounded" / "index.db")})
    held: list[int] = []

    def progress(stage: str, done: int, total: int) -> None:
        if stage == "embed" and not held:
            held.append(_spooled(other.db.parent))

    bounded = Recording()
    with Briefd(other, embedder=bounded) as api:
        report = api.index(progress=progress)
        assert (report.embedded, report.windows) == (first.embedded, first.windows)
        assert _stored(api) == expected  # every passage and window, the same vectors
    assert bounded.seen == plain.seen  # the same texts, in the same order (shortest first)
    assert held == [1]  # the passages waited in a file for their turn
    assert _spooled(other.db.parent) == 0  # gone with the run


def test_pending_texts_read_back_as_added_in_memory_and_past_the_bound(tmp_path: Path) -> None:
    texts = {f"h{n}": "ş" * (n % 7) + f"passage {n} " * n for n in range(40)}
    pending = PendingTexts(tmp_path, in_memory=100)
    for digest, text in texts.items():
        pending.add(digest, text)
    pending.add("h3", "another text under a hash already added")
    assert dict(pending) == texts and len(pending) == 40
    assert pending.order() == sorted(texts, key=lambda h: (len(texts[h]), h))
    assert _spooled(tmp_path) == 1
    pending.close()
    assert _spooled(tmp_path) == 0 and list(tmp_path.iterdir()) == []


def test_pending_texts_stay_in_memory_where_no_file_can_be_written(tmp_path: Path) -> None:
    """A folder that takes no file (read-only, a full disk): the texts stay in memory."""
    pending = PendingTexts(tmp_path / "missing", in_memory=10)
    pending.add("a", "x" * 50)
    pending.add("b", "y" * 5)
    assert dict(pending) == {"a": "x" * 50, "b": "y" * 5} and pending.order() == ["b", "a"]
    pending.close()


class Timed(FakeEmbedder):
    """The fake embedder on a clock that a passage moves on by its length, as a model's time
    grows with the passage's tokens."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0

    def embed_batch(self, texts: Sequence[str], kind: EmbeddingKind) -> np.ndarray:  # type: ignore[type-arg]
        if kind == "passage":
            self.now += sum(len(t) for t in texts) / 1000
        return super().embed_batch(texts, kind)


def test_the_time_left_an_index_run_logs_holds_from_its_first_line(
    settings: Settings, write_files: WriteFiles
) -> None:
    """Passages of every length: embedded shortest first, the first lines' rate (the short
    ones') said a small part of the time that was left (3x too little on the example
    knowledge)."""
    from briefd.cli.index import ProgressLog

    write_files(
        {
            f"domain/topic-{n}.md": f"# Topic {n}\n\n"
            + "".join(
                f"## Part {k}\n\n"
                + f"Rule {n}.{k} holds for ledger entry {k}. " * (1 + 9 * k)
                + "\n\n"
                for k in range(6)
            )
            for n in range(30)
        }
    )
    timed = Timed()
    lines: list[tuple[float, str]] = []
    log = ProgressLog(
        lambda line: lines.append((timed.now, line)), every=1.0, clock=lambda: timed.now
    )
    with Briefd(with_overrides(settings, {"embeddings.batch_size": 4}), embedder=timed) as api:
        report = api.index(progress=log)
    said = [(at, float(line.split("~")[1].split(" s")[0])) for at, line in lines if "left" in line]
    assert report.embedded >= 150 and len(said) >= 10
    for at, left in said:
        assert abs(left - (timed.now - at)) <= 0.25 * timed.now, (at, left, timed.now)
