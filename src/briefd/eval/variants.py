"""Variants of a BEIR set for the trust figures (V4): seeded small subsets and ASCII-folded
queries.

Small knowledge bases are the common case for a team and the one where per-index calibration
has least to go on, so every BEIR set is also measured on subsets of a few documents. A subset
is drawn reproducibly: queries in a seeded order each bring their relevant documents while they
fit, the rest of the room is filled with other documents of the set (distractors), and the
subset keeps every query whose relevant documents are all inside it.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import replace

from briefd.errors import EvalError
from briefd.eval.datasets import BeirSet

SUBSET_SEED = 0

# Turkish letters typed without diacritics (a phone or an English keyboard)
_ASCII_TURKISH = str.maketrans("ıİşŞğĞüÜöÖçÇ", "iIsSgGuUoOcC")


def fold_turkish(text: str) -> str:
    return text.translate(_ASCII_TURKISH)


def folded(dataset: BeirSet, name: str | None = None) -> BeirSet:
    """The same corpus and labels, every query typed without Turkish diacritics."""
    queries = tuple((qid, fold_turkish(text), kind) for qid, text, kind in dataset.queries)
    return replace(dataset, name=name or f"{dataset.name}-folded", queries=queries)


def subset(dataset: BeirSet, size: int, seed: int = SUBSET_SEED) -> BeirSet:
    """``size`` documents of ``dataset`` and the queries answered inside them (see module doc)."""
    if size < 1:
        raise EvalError(f"a subset needs at least one document, got {size}")
    rng = random.Random(f"{dataset.path.name}/{size}/{seed}")  # a folded set: the same subset
    ids = [doc_id for doc_id, _, _ in dataset.corpus]
    chosen: dict[str, None] = {}
    order = list(dataset.queries)
    rng.shuffle(order)
    for qid, _, _ in order:
        relevant = _relevant(dataset, qid)
        if relevant and len(chosen) + len(relevant - chosen.keys()) <= size:
            chosen.update(dict.fromkeys(sorted(relevant)))
        if len(chosen) >= size:
            break
    rest = [doc_id for doc_id in ids if doc_id not in chosen]
    chosen.update(dict.fromkeys(rng.sample(rest, min(size - len(chosen), len(rest)))))
    corpus = tuple(doc for doc in dataset.corpus if doc[0] in chosen)
    queries = tuple(
        q
        for q in dataset.queries
        if (wanted := _relevant(dataset, q[0])) and wanted <= chosen.keys()
    )
    digest = hashlib.sha256(f"{dataset.digest}|{'|'.join(sorted(chosen))}".encode()).hexdigest()
    return replace(
        dataset,
        name=f"{dataset.name}@{size}",
        corpus=corpus,
        queries=queries,
        digest=digest,
    )


def _relevant(dataset: BeirSet, qid: str) -> set[str]:
    return {doc for doc, gain in dataset.qrels.get(qid, {}).items() if gain > 0}
