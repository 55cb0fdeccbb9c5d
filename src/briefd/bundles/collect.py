"""Collection in tiers (B1, B8): mandatory content, structural relations, governing
documents, linked sections, ranked hits, then sections linked from the hits. Tier always
dominates score: the packer fills the budget tier by tier, in the order collected here."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, replace
from typing import Any

from briefd.bundles.candidates import Found, from_hit
from briefd.bundles.governed import governed
from briefd.bundles.model import Candidate, Exclusion
from briefd.bundles.structure import ISSUE_TITLE_CHARS, linked, mandatory, relations, structural
from briefd.model import DocumentView, SearchResult
from briefd.settings import Settings


@dataclass(frozen=True, slots=True)
class Ask:
    """What collection needs from a request, resolved: scopes, normalised paths and tags, the
    tracker issue, the target document, the retrieval query and the weak-match floor."""

    scopes: tuple[str, ...]
    paths: tuple[str, ...]
    tags: tuple[str, ...]
    issue: str | None
    target: DocumentView | None
    query: str
    floor: float = 0.0


def retrieval_query(task: str, issue: str | None, target_title: str | None = None) -> str:
    """The task, joined by the issue's title line when an issue is given; a document
    context without a task searches for the target's title."""
    parts = [task.strip()]
    if issue and issue.strip():
        parts.append(issue.strip().splitlines()[0][:ISSUE_TITLE_CHARS])
    if not any(parts) and target_title:
        parts.append(target_title)
    return " ".join(p for p in parts if p)


def collect(
    conn: sqlite3.Connection, result: SearchResult, ask: Ask, settings: Settings
) -> tuple[list[Candidate], tuple[Exclusion, ...]]:
    """Every candidate, tier by tier, each tier in its own order, and the sections a tier's
    cap left out. A ranked hit scoring under ``ask.floor`` times the best hit's score is
    marked weak (the packer leaves it out): the smallest sufficient context does not fill the
    budget with near-misses."""
    direct = [h for h in result.hits if h.related_to is None]
    ranks = {h.chunk_id: (rank, h.score) for rank, h in enumerate(direct)}
    found = Found()
    found.add(mandatory(conn, ask.issue, ask.target, ask.scopes))
    related = relations(conn, ask.target, ask.scopes)
    if ask.target is not None:
        found.add(structural(conn, ask.target, related, ranks, ask.scopes))
    governed_tier = governed(
        conn, ask.scopes, ask.paths, ask.tags, ask.query, ranks, settings.search
    )
    governing = {c.chunk_id for c in found.add(governed_tier)}
    if ask.target is not None:
        linked(conn, ask.target, related, ask.scopes, ranks, settings.bundles, found)
    dates = _updated_at(conn, {h.doc_path for h in result.hits})
    best = max((h.score for h in direct), default=0.0)
    for rank, hit in enumerate(direct, start=1):
        candidate = from_hit(hit, "ranked", (f"ranked #{rank}",), dates)
        if best > 0 and hit.score < ask.floor * best:
            weak = f"weak match: score {hit.score:.4f} is under {ask.floor:.0%} of the best"
            candidate = replace(candidate, weak=f"{weak} ({best:.4f})")
        if not found.add([candidate]) and candidate.chunk_id in governing:
            # a governing section the task ranked: when the governed share has no room for
            # it, it competes again as the hit it is (the packer takes a section once), or
            # naming the code a task touches would cost the bundle its best hits
            found.candidates.append(candidate)
    for hit in result.hits:
        if hit.related_to is not None:
            found.add([from_hit(hit, "related", (f"linked from {hit.related_to}",), dates)])
    return found.candidates, found.left_out()


def _updated_at(conn: sqlite3.Connection, paths: set[str]) -> dict[str, str]:
    if not paths:
        return {}
    marks = ",".join("?" * len(paths))
    rows: list[Any] = conn.execute(
        f"SELECT path, coalesce(updated_at, indexed_at) FROM documents WHERE path IN ({marks})",
        tuple(sorted(paths)),
    ).fetchall()
    return {r[0]: r[1] or "" for r in rows}
