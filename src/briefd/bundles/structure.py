"""The tiers that come from the knowledge's own structure (B8), before any text match:
mandatory content (the tracker issue, the target document, ``always: true`` documents),
structural relations declared in the target's front matter (``depends_on``, ``parent``…),
and the linked tier: the wikilinks and backlinks of the target and its relations, then one
bounded second hop. Every candidate says why it is here."""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import replace

from briefd.bundles.candidates import Found, Ranks, by_rank, from_row
from briefd.bundles.model import Candidate, Exclusion
from briefd.model import DocumentView, ResolvedLink
from briefd.settings import BundleSettings
from briefd.store.documents import stored_links
from briefd.store.sections import (
    SectionFinder,
    always_documents,
    document_scope,
    document_sections,
    links_within,
    section_at,
    section_finder,
    sections,
)
from briefd.text import whole_characters
from briefd.tokens import count_tokens, head_tokens

ISSUE_TITLE_CHARS = 120
# what the marker of issue text cut to its share says (a live issue's says: ask jira_issue)
ISSUE_ASK = "shorten the issue text, or raise hard_limit to have it whole"
# a tracker key heading the issue's text, as Jira writes it ("PAY-12 …", "SHOP-42: …", "[OPS-7]")
_ISSUE_KEY = re.compile(r"\[?([A-Z][A-Z0-9_]*-[1-9][0-9]{0,9})\b")
EVERY_LINE = 1 << 30
# a linked section: its row id, its reason and the chunk id of the section it was reached from
# (a second hop; None for the first)
_Pick = tuple[int, str, str | None]
BROKEN = "broken"  # the status of a link that matches no document (graph.resolve)
ELSEWHERE_NAMED = 3  # relations or links into scopes not requested a warning names


def mandatory(
    conn: sqlite3.Connection,
    issue: str | None,
    target: DocumentView | None,
    scopes: Sequence[str],
) -> list[Candidate]:
    """The issue, the target document's sections and those of ``always: true`` documents in
    ``scopes``, each whole and in document order."""
    found = [issue_candidate(issue)] if issue and issue.strip() else []
    if target is not None:
        rows = document_sections(conn, target.path)
        found += [from_row(r, "mandatory", ("target document",)) for r in rows]
    for path in always_documents(conn, scopes):
        if target is None or path != target.path:
            reason = ("always: true in its front matter",)
            found += [from_row(r, "mandatory", reason) for r in document_sections(conn, path)]
    return found


def issue_candidate(text: str) -> Candidate:
    """The issue, whole. Its title is the key its text starts with (or none): the attribution
    line names the issue, the text below it is never sent twice."""
    body = text.strip()
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]
    key = _ISSUE_KEY.match(body)
    return Candidate(
        chunk_id=f"issue:{digest}",
        doc_path="",
        scope="",
        title=key.group(1) if key else "",
        heading_path=(),
        content=body,
        score=0.0,
        tier="mandatory",
        reasons=("tracker issue given with the request",),
        start_line=0,
        end_line=0,
        updated_at="",
    )


def issue_head(text: str, max_tokens: int) -> str:
    """``text`` cut from its end to at most ``max_tokens`` (at a line end when one is past
    its middle) with the marker a live Jira issue cut to its share carries."""
    total = count_tokens(text)
    if total <= max_tokens:
        return text
    marker = "\n\n[… cut to max_tokens: {} of " + f"{total} tokens shown; {ISSUE_ASK}]"
    allowance = max_tokens - count_tokens(marker.format(total))
    while allowance > 0:
        head = text[: whole_characters(text, len(head_tokens(text, allowance)))].rstrip()
        line_end = head.rfind("\n")
        head = head[:line_end].rstrip() if line_end > len(head) // 2 else head
        cut = head + marker.format(count_tokens(head))
        if count_tokens(cut) <= max_tokens:
            return cut
        allowance -= max(2, count_tokens(cut) - max_tokens)
    return marker.format(0).lstrip()


def relations(
    conn: sqlite3.Connection, target: DocumentView | None, scopes: Sequence[str]
) -> list[tuple[str, str]]:
    """(relation, document path) declared in the target's front matter and resolved to a
    document in ``scopes``, in the order written."""
    if target is None:
        return []
    return [
        (r.link.display or "relation", r.target_path)
        for r in target.links
        if r.link.kind == "relation"
        and r.target_path is not None
        and r.target_path != target.path
        and document_scope(conn, r.target_path) in scopes
    ]


def elsewhere(
    conn: sqlite3.Connection, target: DocumentView | None, scopes: Sequence[str]
) -> tuple[str, ...]:
    """The warnings a context carries when the target relates or links it to documents in
    scopes the request did not name (a project spec's ``depends_on`` a domain document, or its
    link to a domain ADR, asked with ``scopes=["projects/x"]``): the structural and linked
    tiers leave them out, and an agent holding the context would never know they were
    there. Each is named as written, as get_document names a link into a scope not
    requested."""
    if target is None:
        return ()
    where = "WHERE source_path = ? AND target_path IS NOT NULL"
    relations: list[tuple[str, str]] = []
    links: list[tuple[str, str]] = []
    for _, r in stored_links(conn, where, (target.path,)):
        scope = document_scope(conn, r.target_path) if r.target_path else None
        if scope is None or scope in scopes or r.target_path == target.path:
            continue
        if r.link.kind == "relation":
            relations.append((f"{r.link.display or 'relation'} {r.link.target}", scope))
        elif r.link.target not in {written for written, _ in links}:
            links.append((r.link.target, scope))
    said = [
        f"{target.path} {what} documents in scopes not requested ({_scopes(found)}): "
        f"{_named(found)}; add them to the requested scopes to get them"
        for what, found in (("declares relations to", relations), ("links to", links))
        if found
    ]
    return tuple(said)


def unresolved(target: DocumentView | None) -> tuple[str, ...]:
    """The warning a context carries when the target's front matter declares a relation that
    matches no indexed document (``depends_on: missing.md``): the structural tier cannot hold
    it, and without a word the agent would take the context as complete while ``briefd
    links`` lists the relation as broken."""
    if target is None:
        return ()
    found = [
        (f"{r.link.display or 'relation'} {r.link.target}", "")
        for r in target.links
        if r.link.kind == "relation" and r.status == BROKEN
    ]
    if not found:
        return ()
    return (
        f"{target.path} declares relations in its front matter that match no indexed document, "
        f"so this context lacks them: {_named(found)}; fix the front matter (briefd links lists "
        "broken links)",
    )


def _scopes(found: Sequence[tuple[str, str]]) -> str:
    return ", ".join(sorted({scope for _, scope in found}))


def _named(found: Sequence[tuple[str, str]]) -> str:
    """The first few of ``found``, the rest counted."""
    named = "; ".join(written for written, _ in found[:ELSEWHERE_NAMED])
    more = len(found) - ELSEWHERE_NAMED
    return named + (f" and {more} more" if more > 0 else "")


def structural(
    conn: sqlite3.Connection,
    target: DocumentView,
    related: Sequence[tuple[str, str]],
    ranks: Ranks,
    scopes: Sequence[str],
) -> list[Candidate]:
    """Every section of each related document: the one the relation names
    (``depends_on: [domain/money.md#Units]``) first, then those the search ranked, then the
    rest in document order."""
    named = _named_sections(target, section_finder(conn, scopes))
    found: list[Candidate] = []
    for relation, path in related:
        reason = (f"{relation} of {target.path} (front matter)",)
        rows = by_rank(document_sections(conn, path), ranks)
        if path in named:
            rows.sort(key=lambda r: r["rowid"] != named[path])  # stable: the rest keep order
        found += [from_row(r, "structural", reason) for r in rows]
    return found


def _named_sections(target: DocumentView, find: SectionFinder) -> dict[str, int]:
    """The section each relation with a fragment names, by the related document's path (the
    first such relation to a document wins)."""
    named: dict[str, int] = {}
    for r in target.links:
        if r.link.kind != "relation" or not r.link.fragment or r.target_path is None:
            continue
        rowid = None if r.target_path in named else find(r.target_path, r.link.fragment)
        if rowid is not None:
            named[r.target_path] = rowid
    return named


def linked(
    conn: sqlite3.Connection,
    target: DocumentView,
    related: Sequence[tuple[str, str]],
    scopes: Sequence[str],
    ranks: Ranks,
    settings: BundleSettings,
    found: Found,
) -> None:
    """Add the first hop (links written in the target and its related documents, then
    backlinks to the target), at most ``settings.linked`` sections, then the second hop
    (links written in those sections), at most ``settings.second_hop``. A second-hop section
    is packed only beside the section it was reached from (as a related hit beside its hit):
    its reason names that section, which a reader would look for in vain."""
    sources = [target.path, *(path for _, path in related)]
    find = section_finder(conn, scopes)
    first: list[_Pick] = []
    for source in sources:
        for path, fragment, line in links_within(conn, source, 0, EVERY_LINE):
            rowid = _target_section(conn, find, path, fragment, ranks)
            if rowid is not None:
                first.append((rowid, f"linked from {source}:{line}", None))
    for back in target.backlinks:
        rowid = section_at(conn, back.link.source_path, back.link.line)
        if rowid is not None:
            first.append((rowid, _backlink_reason(back, target.path), None))
    added = _add(conn, first, (settings.linked, "linked"), found, exclude=set(sources))
    second: list[_Pick] = []
    for candidate in added:
        for path, fragment, line in links_within(
            conn, candidate.doc_path, candidate.start_line, candidate.end_line
        ):
            rowid = find(path, fragment)
            if rowid is not None:
                reason = f"second hop: linked from {candidate.doc_path}:{line}"
                second.append((rowid, reason, candidate.chunk_id))
    _add(conn, second, (settings.second_hop, "second_hop"), found, exclude={target.path})


def _add(
    conn: sqlite3.Connection,
    picks: Sequence[_Pick],
    limit: tuple[int, str],
    found: Found,
    exclude: set[str],
) -> list[Candidate]:
    """Up to ``cap`` new sections of ``picks`` (none of the documents in ``exclude``), each
    packed only beside the section it was reached from, when it names one; those past the cap
    (the setting ``bundles.<name>``) are noted in ``found.capped``, or a verbose answer would
    not say why a linked document is missing."""
    cap, name = limit
    rows = sections(conn, [rowid for rowid, _, _ in picks])
    added: list[Candidate] = []
    for rowid, reason, via in picks:
        row = rows.get(rowid)
        if row is None or row["path"] in exclude:
            continue
        if len(added) >= cap:
            why = f"{reason}; past the first {cap} (bundles.{name})"
            found.capped.append(Exclusion(row["id"], row["path"], "linked", why, 0))
            continue
        added += found.add([replace(from_row(row, "linked", (reason,)), related_to=via)])
    return added


def _target_section(
    conn: sqlite3.Connection,
    find: SectionFinder,
    path: str,
    fragment: str | None,
    ranks: Ranks,
) -> int | None:
    """The section a link brings: the one its fragment names, else the linked document's best
    ranked section, else its first (None: the document is not in ``scopes``)."""
    if not fragment:
        ranked = [r for r in document_sections(conn, path) if r["id"] in ranks]
        if ranked:
            return int(by_rank(ranked, ranks)[0]["rowid"])
    return find(path, fragment)


def _backlink_reason(back: ResolvedLink, target: str) -> str:
    where = f"{back.link.source_path}:{back.link.line}"
    if back.link.kind == "relation":
        return f"backlink: {where} declares {back.link.display} {target}"
    return f"backlink: {where} links to {target}"
