"""Link suggestions (T5): unlinked mentions of other documents and broken links, among the
documents a caller may see, dismissed ones left out."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from briefd.errors import NotFoundError, QueryError
from briefd.graph import suggest
from briefd.graph.resolve import findings
from briefd.settings import Settings
from briefd.store import activity, views
from briefd.store.db import Store
from briefd.store.scopes import resolve_scopes

ALL_SUGGESTIONS = 1_000_000  # suggestions are filtered to the visible documents, then capped


def suggest_links(
    store: Store,
    settings: Settings,
    doc_path: str | None = None,
    limit: int = 20,
    scopes: Sequence[str] | None = None,
) -> list[suggest.LinkSuggestion]:
    """Suggestions for ``doc_path`` (None: every document) among the documents in ``scopes``
    (default: the configured default scopes): a suggestion never names a document outside
    them."""
    if limit < 1:
        raise QueryError(f"limit must be at least 1, got {limit}")
    with store.read() as conn:
        resolved, catalog = views.link_catalog(conn)
        broken = findings(resolved, catalog).broken
        visible = visible_paths(conn, settings, scopes, doc_path)
        rows = activity.documents_for_suggestions(conn)
        targets = activity.link_targets(conn)
        dismissed = activity.dismissed_links(conn)
    if doc_path is not None and doc_path not in {r["path"] for r in rows}:
        raise NotFoundError(
            f"no document '{doc_path}' in the index; omit doc_path to check every document"
        )
    docs = [
        suggest.DocNames(
            r["path"],
            (r["title"], *json.loads(r["aliases"])),
            r["body"],
            r["body_start_line"],
            frozenset(targets.get(r["id"], ())),
        )
        for r in rows
        if r["path"] in visible  # a suggestion never leaves the visible documents
    ]
    subject = [d for d in docs if doc_path is None or d.path == doc_path]
    found = suggest.unlinked_mentions(subject, docs) + suggest.broken_link_suggestions(broken)
    chosen = suggest.select(found, dismissed, doc_path, ALL_SUGGESTIONS)
    return suggest.visible(chosen, visible)[:limit]


def dismiss(
    store: Store, settings: Settings, doc_path: str, target: str, scopes: Sequence[str] | None
) -> None:
    """Stop suggesting ``target`` for ``doc_path``, a document in ``scopes`` (default: the
    default scopes)."""
    with store.read() as conn:
        visible_paths(conn, settings, scopes, doc_path)
    with store.write() as conn:
        activity.dismiss_link(conn, doc_path, target, activity.now_iso())


def visible_paths(
    conn: sqlite3.Connection,
    settings: Settings,
    scopes: Sequence[str] | None,
    doc_path: str | None,
) -> set[str]:
    """Paths of the documents in ``scopes`` (default: the default scopes); raises
    :class:`NotFoundError` when ``doc_path`` is given and is not one of them."""
    allowed = resolve_scopes(conn, scopes, settings.default_scopes)
    visible = set(views.paths_in(conn, allowed))
    if doc_path is not None and doc_path not in visible:
        raise NotFoundError(views.not_found(conn, doc_path, allowed))
    return visible
