"""Link suggestions (T5): unlinked mentions of other documents and broken links, among the
documents a caller may see, dismissed ones left out."""

from __future__ import annotations

import functools
import json
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import replace

from briefd.errors import NotFoundError, QueryError
from briefd.graph import suggest
from briefd.graph.resolve import findings, path_key
from briefd.model import LinkFindings
from briefd.settings import Settings
from briefd.sources.layout import in_scopes
from briefd.store import activity, views
from briefd.store import documents as docs_table
from briefd.store.db import Store, opened
from briefd.store.documents import headings_from_json
from briefd.store.scopes import resolve_scopes
from briefd.text import shown

MAX_TARGETS = 10  # targets named when a dismissal names none of them
ALL_SUGGESTIONS = 1_000_000  # suggestions are filtered to the visible documents, then capped


class _CodeBlocks:
    """The code blocks (first and last line) of documents' bodies by the hash of their file,
    each found once in a process: CommonMark-parsing every body is most of a suggestions run
    over all documents (~4.5 of 7.3 s at 1,175 reference documents); the hash names the body,
    and the blocks are two numbers each."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._known: OrderedDict[str, tuple[tuple[int, int], ...]] = OrderedDict()
        self._lock = threading.Lock()

    def offsets(self, content_hash: str, body: str) -> frozenset[int]:
        """The line offsets of the body's code blocks."""
        with self._lock:
            blocks = self._known.get(content_hash)
            if blocks is not None:
                self._known.move_to_end(content_hash)
        if blocks is None:
            blocks = suggest.code_blocks(body)
            with self._lock:
                self._known[content_hash] = blocks
                if len(self._known) > self._size:
                    self._known.popitem(last=False)
        return suggest.code_offsets(body, blocks)


_CODE = _CodeBlocks(size=50_000)


def suggest_links(
    store: Store,
    settings: Settings,
    doc_path: str | None = None,
    limit: int = 20,
    scopes: Sequence[str] | None = None,
) -> suggest.Suggestions:
    """Suggestions for ``doc_path`` (None: every document) among the documents in ``scopes``
    (default: the configured default scopes): a suggestion never names a document outside
    them; with how many were left out (dismissed, or broken links the scopes do not see)."""
    if limit < 1:
        raise QueryError(f"limit must be at least 1, got {limit}")
    with store.read() as conn:
        resolved, catalog = views.link_catalog(conn)
        links = findings(resolved, catalog)
        rows = activity.documents_for_suggestions(conn)
        if doc_path is not None:
            doc_path = as_indexed(doc_path, (r["path"] for r in rows))
        visible = visible_paths(conn, settings, scopes, doc_path)
        targets = activity.link_targets(conn)
        dismissed = activity.dismissed_links(conn)
        moves = suggest.Moves.of(docs_table.moved_documents(conn))
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
            _CODE.offsets(r["content_hash"], r["body"]),
            _heading_offsets(r["headings"], r["body_start_line"]),
        )
        for r in rows
        if r["path"] in visible  # a suggestion never leaves the visible documents
    ]
    subject = [d for d in docs if doc_path is None or d.path == doc_path]
    found = [
        *suggest.unlinked_mentions(subject, docs),
        *suggest.broken_link_suggestions(links.broken, docs, moves),
        *suggest.unknown_anchor_suggestions(
            r for r in links.unknown_anchors if r.target_path in visible
        ),
    ]
    checked = [
        *suggest.broken_link_suggestions(links.broken),
        *suggest.unknown_anchor_suggestions(links.unknown_anchors),
    ]
    chosen = suggest.left_out(found, checked, dismissed, doc_path, visible)
    return suggest.Suggestions(
        chosen[:limit], chosen.dismissed, chosen.dismissed_broken, chosen.other_scopes
    )


def link_findings(conn: sqlite3.Connection, settings: Settings) -> LinkFindings:
    """Broken and ambiguous links, unknown and duplicate anchors, orphans and links to
    superseded documents (K5); a broken link to a document moved since, or by what a document
    is called, says so and how to link it, as its suggestion does, naming only a document of
    the linking one's scope or a shared one (another project's is for its own readers)."""
    resolved, catalog = views.link_catalog(conn)
    found = findings(resolved, catalog)
    if not found.broken:
        return found
    rows = conn.execute("SELECT path, scope, title, aliases FROM documents").fetchall()
    scopes = {r["path"]: r["scope"] for r in rows}
    shared = {s for s in scopes.values() if in_scopes(s, settings.default_scopes)}
    called = suggest.called_names(
        (r["path"], (r["title"], *json.loads(r["aliases"]))) for r in rows
    )
    moves = suggest.Moves.of(docs_table.moved_documents(conn))
    broken = []
    for r in found.broken:
        seen = functools.partial(_in_scopes, scopes, {scopes.get(r.link.source_path), *shared})
        detail = moves.detail(r, seen) or suggest.called_detail(r, called, seen)
        broken.append(r if detail is None else replace(r, detail=detail))
    return replace(found, broken=tuple(broken))


def _in_scopes(scopes: Mapping[str, str], seen: Set[str | None], path: str) -> bool:
    return path in scopes and scopes[path] in seen


def _heading_offsets(headings: str, body_start_line: int) -> frozenset[int]:
    """The line offsets in a document's body of its headings (stored JSON)."""
    return frozenset(h.line - body_start_line for h in headings_from_json(headings))


def suggest_links_apart(
    settings: Settings,
    doc_path: str | None = None,
    limit: int = 20,
    scopes: Sequence[str] | None = None,
) -> suggest.Suggestions:
    """:func:`suggest_links` on a connection of its own: every document's text is read and
    searched for names (seconds over thousands of documents), and a server's searches need
    not wait for that on the connection they share."""
    with opened(settings.db, settings.source) as store:
        return suggest_links(store, settings, doc_path, limit, scopes)


def dismiss(
    store: Store, settings: Settings, doc_path: str, target: str, scopes: Sequence[str] | None
) -> None:
    """Stop suggesting ``target`` for ``doc_path``, a document in ``scopes`` (default: the
    default scopes). ``target`` is one of its suggestions' targets, one dismissed before, or
    a document in ``scopes`` (to be suggested later); anything else would be stored and stop
    nothing (a mention's text, a mistyped path), so it is refused (:class:`QueryError`)."""
    with store.read() as conn:
        doc_path = as_indexed(doc_path, views.paths_in(conn, None))
    current = suggest_links(store, settings, doc_path, ALL_SUGGESTIONS, scopes)
    targets = list(dict.fromkeys(s.target for s in current))
    with store.read() as conn:
        seen = visible_paths(conn, settings, scopes, doc_path)
        dismissed = activity.dismissed_links(conn)
        target = as_indexed(target, [*targets, *seen, *(t for d, t in dismissed if d == doc_path)])
        known = target in seen or (doc_path, target) in dismissed
    if not known and target not in targets:
        raise QueryError(_not_a_target(doc_path, target, targets))
    with store.write() as conn:
        activity.dismiss_link(conn, doc_path, target, activity.now_iso())


def as_indexed(path: str, known: Iterable[str]) -> str:
    """``path`` as ``known`` spells it: the same path with its accents composed otherwise
    (``ödeme.md`` copied from a macOS file name, decomposed, for the composed one the index
    holds, or the other way round) is that path; else ``path`` as given."""
    spelled = list(known)
    if path in spelled:
        return path
    wanted = path_key(path)
    return min((p for p in spelled if path_key(p) == wanted), default=path)


def _not_a_target(doc_path: str, target: str, targets: Sequence[str]) -> str:
    listed = ", ".join(map(shown, targets[:MAX_TARGETS]))
    more = f" and {len(targets) - MAX_TARGETS} more" if len(targets) > MAX_TARGETS else ""
    named = f"its suggestions' targets: {listed}{more}" if targets else "it has no suggestions"
    return (
        f"nothing to dismiss: {doc_path} has no suggestion with target '{shown(target)}' "
        "(a target is the document to link, as a path, or a broken link's target as "
        f"written); {named}. Nothing was stored"
    )


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
