"""The lexical relevance gate of a BM25-only recall.

Without embeddings the semantic gate (R4) is off, and BM25 finds *something* for almost any
prompt: "best pizza recipe" matches a section that says "best effort". A hook that injects
that on every off-topic turn is noise, so a BM25-only recall keeps a section only on lexical
evidence:

* a query term is *informative* when the index has it (stemmed, as FTS5 matches it) but in no
  more than ``common_share`` of the chunks — or no more than ``√(max_chance · chunks)``, when
  that is more (an index under 25 chunks at the defaults): two such terms can still be specific
  together, so a share of a handful of chunks never makes a word common (in a 5-chunk index,
  a word in 2 chunks was, and no prompt about its one retry section had two informative terms);
* a section qualifies when it contains at least ``min_terms`` (default 2) distinct informative
  terms of the prompt, or — for a short prompt (≤ 2 terms) with a single informative term —
  when that term is in the section's title or heading path;
* … and those terms must be specific together: either their chance co-occurrence (chunks
  that would hold them all were they independent) is at most ``max_chance``, or they meet at
  least ``min_lift`` times as often as chance has them;
* of the qualifying sections, those scoring below ``relative_floor`` × the best BM25 score
  are dropped (a long tail of weak matches is not worth the agent's context).

Prompts are ranked by FTS5 BM25 over the informative terms (any of them), title and heading
weighted as in search.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from briefd.recall.generic import probe_shares
from briefd.retrieval.lexical import FieldWeights, run_match
from briefd.text import query_terms

if TYPE_CHECKING:
    from briefd.settings import Settings

MAX_TERMS = 64  # distinct prompt terms looked at (a pasted log must not cost seconds)
MAX_INFORMATIVE = 16  # the rarest informative terms carry the evidence
SHORT_PROMPT = 2  # terms; a prompt this short may rest on one informative term in a heading
CANDIDATES = 50


@dataclass(frozen=True, slots=True)
class EvidenceRules:
    min_terms: int = 2
    common_share: float = 0.2
    relative_floor: float = 0.4
    max_chance: float = 1.0
    min_lift: float = 3.0


@dataclass(frozen=True, slots=True)
class LexicalRecall:
    """What the gate saw: the prompt's terms, which were informative, and the kept rows
    (chunk rowid, BM25 — negative, lower is better) best first."""

    terms: tuple[str, ...]
    informative: tuple[str, ...]
    rows: tuple[tuple[int, float], ...]
    candidates: int
    # of the best kept row's matched terms that tell (see :func:`chance`, :func:`telling`)
    chance: float | None = None
    matched: tuple[str, ...] = ()  # the informative terms the best kept row holds


def rules_of(settings: Settings) -> tuple[FieldWeights, EvidenceRules]:
    """The field weights and evidence rules a keyword answer ranks with."""
    config, search = settings.recall, settings.search
    weights = FieldWeights(search.title_weight, search.heading_weight, search.body_weight)
    rules = EvidenceRules(
        config.min_terms,
        config.common_share,
        config.relative_floor,
        config.max_chance,
        config.min_lift,
    )
    return weights, rules


def quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def lexical_recall(
    conn: sqlite3.Connection,
    prompt: str,
    scopes: Sequence[str],
    every_scope: bool,
    weights: FieldWeights,
    rules: EvidenceRules,
) -> LexicalRecall:
    terms = tuple(query_terms(prompt))[:MAX_TERMS]
    total = max(1, conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
    ceiling = max(1.0, rules.common_share * total, math.sqrt(rules.max_chance * total))
    counts = {t: _count(conn, quote(t)) for t in terms}
    rarest = sorted((t for t in terms if 1 <= counts[t] <= ceiling), key=lambda t: counts[t])
    keep = set(rarest[:MAX_INFORMATIVE])
    informative = tuple(t for t in terms if t in keep)
    if not informative:
        return LexicalRecall(terms, informative, (), 0)
    match = " OR ".join(quote(t) for t in informative)
    ranked = run_match(conn, match, scopes, weights, CANDIDATES, every_scope)
    rowids = [r for r, _ in ranked]
    if len(informative) == 1 and len(terms) <= SHORT_PROMPT:
        found = _matched_terms(conn, informative, rowids, "{title heading_path} : ")
        good = {r for r, matched in found.items() if matched}
    else:
        found = _matched_terms(conn, informative, rowids, "")
        judged: dict[tuple[str, ...], bool] = {}
        good = set()
        for rowid, matched in found.items():
            key = tuple(matched)
            if len(key) >= rules.min_terms and key not in judged:
                judged[key] = _specific(conn, key, counts, total, rules)
            if judged.get(key):
                good.add(rowid)
    kept = [(r, s) for r, s in ranked if r in good]
    if kept:
        floor = rules.relative_floor * kept[0][1]  # both negative: floor is nearer zero
        kept = [(r, s) for r, s in kept if s <= floor]
    held = tuple(found[kept[0][0]]) if kept else ()
    best = chance(telling(held, counts, total), counts, total) if kept else None
    return LexicalRecall(terms, informative, tuple(kept), len(ranked), best, held)


def telling(matched: Sequence[str], counts: dict[str, int], total: int) -> list[str]:
    """The matched terms that say the prompt is about this knowledge base: those more of its
    sections hold than of the generic probes (:func:`briefd.recall.generic.probe_shares`).
    A word as common in everyday agent prompts as in the index (main, app, build, step, 12)
    meets the index's words in pasted tool output as often as in a question, so it is no
    evidence that they meet by more than chance."""
    shares = probe_shares()
    return [t for t in matched if counts[t] / total > shares.get(t, 0.0)]


def chance(matched: Sequence[str], counts: dict[str, int], total: int) -> float:
    """How many chunks would contain all of ``matched`` by chance, were the terms independent."""
    expected = float(total)
    for term in matched:
        expected *= counts[term] / total
    return expected


def _specific(
    conn: sqlite3.Connection,
    matched: Sequence[str],
    counts: dict[str, int],
    total: int,
    rules: EvidenceRules,
) -> bool:
    """Terms that meet in a section are evidence when they rarely meet by chance, or meet
    far more often than chance would have them (common words co-occur at chance level, a
    topic's words do not)."""
    expected = chance(matched, counts, total)
    if expected <= rules.max_chance:
        return True
    observed = _count(conn, " AND ".join(quote(t) for t in matched))
    return observed >= rules.min_lift * expected


def _count(conn: sqlite3.Connection, match: str) -> int:
    row = conn.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (match,))
    return int(row.fetchone()[0])


def _matched_terms(
    conn: sqlite3.Connection, terms: Sequence[str], rowids: Sequence[int], column: str
) -> dict[int, list[str]]:
    """For each candidate rowid, which of ``terms`` it contains (``column``: a filter)."""
    found: dict[int, list[str]] = {r: [] for r in rowids}
    if not rowids:
        return found
    # the term's matches read once, kept where they are candidates: FTS5 answers ``MATCH ?
    # AND rowid IN (…)`` by reading the term's whole posting list for each rowid of the list
    # (measured on 5,265 sections: 100-200 ms a term against 1 ms), and an informative term
    # is in at most recall.common_share of the sections
    sql = "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?"
    for term in terms:
        for (rowid,) in conn.execute(sql, (column + quote(term),)):
            if rowid in found:
                found[rowid].append(term)
    return found
