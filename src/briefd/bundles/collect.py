"""Collection in tiers (B1): the tracker issue, documents whose ``refs`` cover the request's
paths, ranked hits, then sections linked from them. Tier always dominates score."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from briefd.bundles.model import Candidate
from briefd.model import Hit, SearchResult
from briefd.sources.refs import covering

ISSUE_TITLE_CHARS = 120


def retrieval_query(task: str, issue: str | None) -> str:
    """The task, joined by the issue's title line when an issue is given."""
    parts = [task.strip()]
    if issue and issue.strip():
        parts.append(issue.strip().splitlines()[0][:ISSUE_TITLE_CHARS])
    return " ".join(p for p in parts if p)


def collect(
    conn: sqlite3.Connection,
    result: SearchResult,
    scopes: Sequence[str],
    paths: Sequence[str],
    issue: str | None,
    floor: float = 0.0,
) -> list[Candidate]:
    """Every candidate, tier by tier, each tier in its rank order. A ranked hit scoring under
    ``floor`` times the best hit's score is marked weak (the packer leaves it out): the
    smallest sufficient context does not fill the budget with near-misses."""
    dates = _updated_at(conn, {h.doc_path for h in result.hits})
    found: list[Candidate] = []
    if issue and issue.strip():
        found.append(_issue(issue))
    governed = _governed_sections(conn, scopes, paths, result)
    found += governed
    taken = {c.chunk_id for c in governed}
    direct = [h for h in result.hits if h.related_to is None]
    best = max((h.score for h in direct), default=0.0)
    for rank, hit in enumerate(direct, start=1):
        if hit.chunk_id not in taken:
            taken.add(hit.chunk_id)
            reason = f"ranked #{rank} by {result.mode} search (score {hit.score:.4f})"
            candidate = _from_hit(hit, 3, (reason,), dates)
            if best > 0 and hit.score < floor * best:
                weak = f"weak match: score {hit.score:.4f} is under {floor:.0%} of the best"
                candidate = replace(candidate, weak=f"{weak} ({best:.4f})")
            found.append(candidate)
    for hit in result.hits:
        if hit.related_to is not None and hit.chunk_id not in taken:
            taken.add(hit.chunk_id)
            reason = f"linked from {hit.related_to}"
            found.append(_from_hit(hit, 4, (reason,), dates, hit.related_to))
    return found


def _issue(text: str) -> Candidate:
    body = text.strip()
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]
    return Candidate(
        chunk_id=f"issue:{digest}",
        doc_path="",
        scope="",
        title=body.splitlines()[0][:ISSUE_TITLE_CHARS],
        heading_path=(),
        content=body,
        score=0.0,
        tier=1,
        reasons=("tracker issue given with the request",),
        start_line=0,
        end_line=0,
        updated_at="",
    )


def _from_hit(
    hit: Hit,
    tier: int,
    reasons: tuple[str, ...],
    dates: dict[str, str],
    related_to: str | None = None,
) -> Candidate:
    return Candidate(
        chunk_id=hit.chunk_id,
        doc_path=hit.doc_path,
        scope=hit.scope,
        title=hit.title,
        heading_path=hit.heading_path,
        content=hit.content,
        score=round(hit.score, 4),
        tier=3 if tier == 3 else 4,
        reasons=reasons,
        start_line=hit.start_line,
        end_line=hit.end_line,
        updated_at=dates.get(hit.doc_path, ""),
        related_to=related_to,
    )


def _governed_sections(
    conn: sqlite3.Connection, scopes: Sequence[str], paths: Sequence[str], result: SearchResult
) -> list[Candidate]:
    """Sections of documents whose front-matter ``refs`` cover one of ``paths``: sections the
    search ranked come first, in rank order, then the rest in document order."""
    if not paths or not scopes:
        return []
    marks = ",".join("?" * len(scopes))
    docs = conn.execute(
        f"SELECT id, path, scope, title, front_matter, coalesce(updated_at, indexed_at) AS age "
        f"FROM documents WHERE scope IN ({marks}) ORDER BY path",
        tuple(scopes),
    ).fetchall()
    ranks = {h.chunk_id: (i, h.score) for i, h in enumerate(result.hits) if h.related_to is None}
    found: list[tuple[tuple[int, int], Candidate]] = []
    for doc in docs:
        reason = covering(json.loads(doc["front_matter"]).get("refs") or [], paths)
        if reason is None:
            continue
        for row in conn.execute(
            "SELECT * FROM chunks WHERE doc_id = ? ORDER BY position", (doc["id"],)
        ):
            rank, score = ranks.get(row["id"], (len(ranks), 0.0))
            found.append(((rank, len(found)), _from_row(row, doc, score, reason)))
    return [c for _, c in sorted(found, key=lambda pair: pair[0])]


def _from_row(row: sqlite3.Row, doc: sqlite3.Row, score: float, reason: str) -> Candidate:
    return Candidate(
        chunk_id=row["id"],
        doc_path=doc["path"],
        scope=doc["scope"],
        title=doc["title"],
        heading_path=tuple(json.loads(row["heading_path"])),
        content=row["content"],
        score=round(score, 4),
        tier=2,
        reasons=(reason,),
        start_line=row["start_line"],
        end_line=row["end_line"],
        updated_at=doc["age"] or "",
    )


def _updated_at(conn: sqlite3.Connection, paths: set[str]) -> dict[str, str]:
    if not paths:
        return {}
    marks = ",".join("?" * len(paths))
    rows: list[Any] = conn.execute(
        f"SELECT path, coalesce(updated_at, indexed_at) FROM documents WHERE path IN ({marks})",
        tuple(sorted(paths)),
    ).fetchall()
    return {r[0]: r[1] or "" for r in rows}
