"""What a recall ranks before it packs (I8): the direct hits, the sections linked from them
(related context, R6), the gate's verdict, and how sure it is (see
:mod:`briefd.recall.confidence`). Hybrid rankings come from :meth:`briefd.api.Briefd.recall`;
BM25 ones are made here from the store, behind the lexical evidence gate. Light on purpose:
the hook's in-process path imports this (no numpy, no model)."""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from briefd.recall.evidence import LexicalRecall, lexical_recall, rules_of
from briefd.retrieval.related import related_rowids
from briefd.settings import RecallSettings, Settings

Confidence = Literal["strong", "weak", "none"]


@dataclass(frozen=True, slots=True)
class Ranking:
    """``ranked``: (chunk id, score) best first; ``related``: (chunk id, chunk id of the hit it
    is linked from); ``specificity``: the prompt's z against generic requests (None: unknown)."""

    ranked: list[tuple[str, float]]
    gate: str
    reason: str = ""
    specificity: float | None = None
    related: list[tuple[str, str]] = field(default_factory=list)
    lifted: bool = False  # only the prompt's own language's levels make it specific: weak at most
    # BM25: how many sections would hold the best one's matched words by chance (see
    # briefd.recall.evidence.chance); what :func:`by_chance` tiers a stand-in answer on
    chance: float | None = None


# (prompt, scopes, top_k, related) -> the hybrid search's ranking
HybridSearch = Callable[[str, tuple[str, ...], int, int], Ranking]

MOST_WORDS = 0.75  # the share of a prompt's informative words that says its words name a section


def tier(z: float | None, weak_z: float, strong_z: float) -> Confidence:
    """Strong: the sections; weak: one short section; none: nothing. Without a specificity
    (BM25 answers, an index without vectors) the gate's verdict alone decides, as before."""
    if z is None or z >= strong_z:
        return "strong"
    return "weak" if z >= weak_z else "none"


def by_chance(expected: float | None, weak_z: float, strong_z: float) -> Confidence:
    """The tier of a keyword answer standing in for a hybrid one (the first prompt, answered
    in the hook's process while the recall daemon loads the model), from lexical evidence
    alone: how likely it is that some section of the index holds the best section's matched
    words together by chance (Poisson, from ``expected``, the sections that would were the
    words independent; only the words that tell count, :func:`briefd.recall.evidence.telling`). Strong when that is at most the one-sided level of ``strong_z``
    (3.09: 0.1%), weak (one short section) at most that of ``weak_z`` (1.645: 5%), else
    nothing: the same levels the hybrid tiers put on a prompt's specificity."""
    if expected is None:
        return "none"
    chance = -math.expm1(-expected)
    if chance <= _level(strong_z):
        return "strong"
    return "weak" if chance <= _level(weak_z) else "none"


def by_keywords(z: float | None, expected: float | None, config: RecallSettings) -> Confidence:
    """The tier of a keyword answer where a tier is due (see :func:`briefd.recall.engine.answer`)
    from two readings of its lexical evidence, both at the levels the hybrid tiers use: ``z``,
    its best BM25 score against what the generic probes score in this index
    (:mod:`briefd.recall.keywords`; None: too few probes reach it, this reading abstains), and
    :func:`by_chance`. Strong (its sections) only when both are; one short section when either
    is at least weak (a short question's few words score low, and may still be unlikely
    together); else nothing."""
    chance = by_chance(expected, config.weak_z, config.strong_z)
    if z is None:
        return chance
    by_levels = tier(z, config.weak_z, config.strong_z)
    if by_levels == chance == "strong":
        return "strong"
    return "none" if by_levels == chance == "none" else "weak"


def _level(z: float) -> float:
    """The one-sided tail of the normal distribution past ``z``."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def lexical(
    conn: sqlite3.Connection,
    prompt: str,
    scopes: tuple[str, ...],
    settings: Settings,
    related: int,
) -> Ranking:
    """BM25 behind the lexical evidence gate, and the sections the top hits link to."""
    found = _evidence(conn, prompt, scopes, settings)
    rowids = [r for r, _ in found.rows]
    links = related_rowids(conn, rowids, scopes, related) if related and rowids else []
    ids = _chunk_ids(conn, [*rowids, *(r for pair in links for r in pair)])
    ranked = [(ids[r], round(-score, 4)) for r, score in found.rows if r in ids]
    if ranked:
        linked = [(ids[r], ids[s]) for r, s in links if r in ids and s in ids]
        return Ranking(ranked, "kept", related=linked, chance=found.chance)
    if not found.informative:
        return Ranking([], "empty", "no word of the prompt is specific to the knowledge base")
    return Ranking([], "empty", "no section has enough evidence for this prompt")


def lexically_specific(
    conn: sqlite3.Connection, prompt: str, scopes: tuple[str, ...], settings: Settings, best: str
) -> bool:
    """Whether the prompt's words pick the section ``best`` (the hybrid ranking's first) as
    keywords do, and meet there unlikely enough by chance for the strong tier
    (:func:`by_chance`), that section holding at least ``MOST_WORDS`` of its informative
    words: evidence the model's reading of a prompt as generic does not see. Turkish typed
    without its letters ("sifre sifirlama kodu kac dakika gecerli") is read by the model as
    near chatter, while its words, folded as the index folds them, name the one section that
    holds them all. A pasted test report's words ("assert", "failed", "passed", …) may meet
    in an error catalogue unlikely by chance too, but that section holds few of them."""
    config = settings.recall
    found = _evidence(conn, prompt, scopes, settings)
    if not found.rows:
        return False
    agrees = _chunk_ids(conn, [found.rows[0][0]]).get(found.rows[0][0]) == best
    most = len(found.matched) >= MOST_WORDS * len(found.informative)
    return agrees and most and by_chance(found.chance, config.weak_z, config.strong_z) == "strong"


def _evidence(
    conn: sqlite3.Connection, prompt: str, scopes: tuple[str, ...], settings: Settings
) -> LexicalRecall:
    """The prompt's lexical evidence over ``scopes`` (:func:`lexical_recall`)."""
    weights, rules = rules_of(settings)
    known = {r[0] for r in conn.execute("SELECT DISTINCT scope FROM documents")}
    return lexical_recall(conn, prompt, scopes, set(scopes) == known, weights, rules)


def _chunk_ids(conn: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, str]:
    if not rowids:
        return {}
    marks = ", ".join("?" * len(rowids))
    rows = conn.execute(f"SELECT rowid, id FROM chunks WHERE rowid IN ({marks})", list(rowids))
    return dict(rows.fetchall())
