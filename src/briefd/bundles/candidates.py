"""Candidates from what the collectors find (search hits, stored sections), and the running
list that keeps each section once, in the first tier that claims it."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from briefd.bundles.model import Candidate, Exclusion, Tier
from briefd.model import Hit

Ranks = Mapping[str, tuple[int, float]]  # chunk id → (rank among direct hits, score)


@dataclass
class Found:
    """Candidates in collection order; a section claimed by an earlier tier is not added
    again (local to one collection)."""

    candidates: list[Candidate] = field(default_factory=list)
    taken: set[str] = field(default_factory=set)
    # sections a tier's cap left out (the linked tier's): said in the exclusions unless
    # another tier claims them
    capped: list[Exclusion] = field(default_factory=list)

    def left_out(self) -> tuple[Exclusion, ...]:
        """The capped sections no tier took, each once."""
        seen = set(self.taken)
        out = []
        for exclusion in self.capped:
            if exclusion.chunk_id not in seen:
                seen.add(exclusion.chunk_id)
                out.append(exclusion)
        return tuple(out)

    def add(self, candidates: Iterable[Candidate]) -> list[Candidate]:
        """Add the new ones; returns those added."""
        added = []
        for candidate in candidates:
            if candidate.chunk_id not in self.taken:
                self.taken.add(candidate.chunk_id)
                self.candidates.append(candidate)
                added.append(candidate)
        return added


def from_row(
    row: sqlite3.Row, tier: Tier, reasons: tuple[str, ...], score: float = 0.0
) -> Candidate:
    """A stored section (``briefd.store.sections`` columns) as a candidate."""
    return Candidate(
        chunk_id=row["id"],
        doc_path=row["path"],
        scope=row["scope"],
        title=row["title"],
        heading_path=tuple(json.loads(row["heading_path"])),
        content=row["content"],
        score=round(score, 4),
        tier=tier,
        reasons=reasons,
        start_line=row["start_line"],
        end_line=row["end_line"],
        updated_at=row["age"] or "",
    )


def from_hit(hit: Hit, tier: Tier, reasons: tuple[str, ...], dates: Mapping[str, str]) -> Candidate:
    return Candidate(
        chunk_id=hit.chunk_id,
        doc_path=hit.doc_path,
        scope=hit.scope,
        title=hit.title,
        heading_path=hit.heading_path,
        content=hit.content,
        score=round(hit.score, 4),
        tier=tier,
        reasons=reasons,
        start_line=hit.start_line,
        end_line=hit.end_line,
        updated_at=dates.get(hit.doc_path, ""),
        related_to=hit.related_to,
    )


def by_rank(rows: Iterable[sqlite3.Row], ranks: Ranks) -> list[sqlite3.Row]:
    """A document's sections: those the search ranked first (in rank order), then the rest
    in document order."""
    return sorted(rows, key=lambda r: (ranks.get(r["id"], (len(ranks), 0.0))[0], r["position"]))
