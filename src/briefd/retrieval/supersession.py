"""Superseded documents in a ranking (K2, R1), pure: each hit of a document another one
supersedes names it (``Hit.superseded_by``), and goes right after the first hit of the
document that supersedes it when that one ranks lower — the current text first."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from briefd.model import Hit
from briefd.store.supersession import superseded_by


def marked(
    hits: Sequence[Hit], found: Mapping[str, Sequence[tuple[str, str]]], scopes: Sequence[str]
) -> list[Hit]:
    """``hits`` with ``superseded_by`` set, a superseded direct hit moved after the first hit
    of a document superseding it that ranks lower (linked hits stay where they are)."""
    if not found:
        return list(hits)
    hits = [replace(h, superseded_by=superseded_by(found, h.doc_path, scopes)) for h in hits]
    direct = [h for h in hits if h.related_to is None]
    first: dict[str, int] = {}
    for index, hit in enumerate(direct):
        first.setdefault(hit.doc_path, index)
    waiting: dict[int, list[int]] = {}
    placed: list[Hit] = []

    def place(index: int) -> None:
        placed.append(direct[index])
        for later in waiting.pop(index, []):
            place(later)

    for index, hit in enumerate(direct):
        after = [first[p] for p in hit.superseded_by if first.get(p, -1) > index]
        if after:
            waiting.setdefault(min(after), []).append(index)
        else:
            place(index)
    return placed + [h for h in hits if h.related_to is not None]
