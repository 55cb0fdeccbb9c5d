"""The governed tier (B1, B8): documents whose front-matter ``refs`` cover a path the task
touches, the most specific glob first, and of each only the sections that match the task.

A broad glob (``services/payment-gateway/**``) covers much and says little; a narrow one
(``services/payment-gateway/internal/refunds/**``) names the code. Within a document, the
sections the search ranked for the task come (in rank order); a document none of whose
sections ranked gives its best match for the task, else its first section. A task without a
searchable word ("fix this") takes the governing documents whole. The packer caps the tier's
share of the budget so ranked hits keep room.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from briefd.bundles.candidates import Ranks, by_rank, from_row
from briefd.bundles.model import Candidate, Exclusion
from briefd.retrieval.governed import governing_elsewhere, matching_sections
from briefd.settings import SearchSettings
from briefd.sources.refs import Cover, most_specific_cover
from briefd.store.scopes import add_to_scopes
from briefd.store.sections import document_sections, documents_with_refs
from briefd.store.tags import tagged_paths
from briefd.text import query_terms


def governed(
    conn: sqlite3.Connection,
    scopes: Sequence[str],
    paths: Sequence[str],
    tags: Sequence[str],
    query: str,
    ranks: Ranks,
    settings: SearchSettings,
) -> list[Candidate]:
    """Sections of the documents governing ``paths``, most specific document first."""
    if not paths:
        return []
    covers: list[tuple[Cover, int, str]] = []
    for doc_id, path, refs in documents_with_refs(conn, scopes):
        cover = most_specific_cover(refs, paths)
        if cover is not None:
            covers.append((cover, doc_id, path))
    if tags:
        tagged = tagged_paths(conn, [path for _, _, path in covers], tags)
        covers = [c for c in covers if c[2] in tagged]
    covers.sort(key=lambda c: (tuple(-n for n in c[0].specificity), c[2]))
    found: list[Candidate] = []
    for cover, doc_id, path in covers:
        rows = _matching(conn, path, doc_id, query, ranks, settings)
        found += [from_row(r, "governed", (cover.reason,), _score(r, ranks)) for r in rows]
    return found


def unrequested(
    conn: sqlite3.Connection, scopes: Sequence[str], paths: Sequence[str]
) -> tuple[Exclusion, ...]:
    """Documents governing ``paths`` in scopes the request did not name: left out, and said
    in the exclusions, or a caller that did not think of ``scopes`` would never know of them."""
    return tuple(
        Exclusion(
            "",
            path,
            "governed",
            f"{why}, but scope '{scope}' was not requested: {add_to_scopes()}",
            0,
        )
        for path, scope, why in governing_elsewhere(conn, scopes, paths)
    )


def _matching(
    conn: sqlite3.Connection,
    path: str,
    doc_id: int,
    query: str,
    ranks: Ranks,
    settings: SearchSettings,
) -> list[sqlite3.Row]:
    rows = document_sections(conn, path)
    if not query_terms(query):
        return rows
    ranked = [r for r in by_rank(rows, ranks) if r["id"] in ranks]
    if ranked:
        return ranked
    best = matching_sections(conn, query, None, [doc_id], settings).get(doc_id)
    return [r for r in rows if r["rowid"] == best] or rows[:1]


def _score(row: sqlite3.Row, ranks: Ranks) -> float:
    return ranks.get(row["id"], (0, 0.0))[1]
