"""Reading and writing documents, chunks and links in the index."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence

from briefd.markdown.passages import passage_hash, passage_text
from briefd.model import Chunk, Document, FrontMatter, Heading, Link, ResolvedLink
from briefd.store import surfaces, vocabulary
from briefd.store.changes import Delta

DATES_STATE = "dates-state"  # index_meta key: the digest of the documents' "updated" days


def document_hashes(conn: sqlite3.Connection) -> dict[str, str]:
    return {
        row["path"]: row["content_hash"]
        for row in conn.execute("SELECT path, content_hash FROM documents")
    }


UNSCOPED = "unscoped"  # index_meta: the files outside every scope (found, not indexed), JSON


def unscoped_files(conn: sqlite3.Connection) -> list[str]:
    """The files of the knowledge folder the last index run found outside every scope."""
    listed: list[str] = json.loads(meta(conn, UNSCOPED) or "[]")
    return listed


SKIPPED = "skipped"  # index_meta: the files of a scope found but not indexed (path → why), JSON


def skipped_files(conn: sqlite3.Connection) -> dict[str, str]:
    """The files the last index run found and did not index though in a scope (unreadable,
    too large, left out by index.exclude or a .gitignore…), each with why."""
    found: dict[str, str] = json.loads(meta(conn, SKIPPED) or "{}")
    return found


MOVED = "moved"  # index_meta: documents seen moving, content unchanged (former → current), JSON
MOVES_KEPT = 2_000  # the latest moves kept


def moved_documents(conn: sqlite3.Connection) -> dict[str, str]:
    """Former path → current path of the documents index runs saw move (renamed, or into
    another folder) with their content unchanged, while they are still there."""
    found: dict[str, str] = json.loads(meta(conn, MOVED) or "{}")
    return found


def record_moves(
    conn: sqlite3.Connection, moved: Mapping[str, str], current: Iterable[str]
) -> None:
    """Add this run's moves (old → new) to those recorded: one moved on again (a → b, then
    b → c) leads to where it is now; a move whose document is gone, or whose former path is
    a document again, is dropped; the latest ``MOVES_KEPT`` are kept."""
    before = moved_documents(conn)
    recorded = {former: moved.get(now, now) for former, now in before.items()}
    for old, new in moved.items():
        recorded.pop(old, None)
        recorded[old] = new  # the latest last
    there = set(current)
    kept = {old: new for old, new in recorded.items() if new in there and old not in there}
    latest = dict(list(kept.items())[-MOVES_KEPT:])
    if latest != before:  # most runs move nothing, and write nothing
        set_meta(conn, MOVED, json.dumps(latest, ensure_ascii=False, separators=(",", ":")))


def meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM index_meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    """Set ``key``; writing the value it already has changes nothing (and so does not move
    the content version the search caches follow)."""
    conn.execute(
        "INSERT INTO index_meta (key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value WHERE value IS NOT excluded.value",
        (key, value),
    )


def delete_documents(conn: sqlite3.Connection, paths: Iterable[str], delta: Delta) -> None:
    for path in paths:
        row = conn.execute("SELECT id FROM documents WHERE path = ?", (path,)).fetchone()
        if row is None:
            continue
        delta.forget(conn, row["id"])
        rows = vocabulary.chunk_rows(conn, row["id"])
        vocabulary.adjust(conn, vocabulary.chunk_words(rows), -1)
        surfaces.adjust(conn, surfaces.chunk_forms(rows), -1)
        conn.execute("DELETE FROM chunks WHERE doc_id = ?", (row["id"],))
        conn.execute("DELETE FROM links WHERE doc_id = ?", (row["id"],))
        conn.execute("DELETE FROM documents WHERE id = ?", (row["id"],))


def delete_everything(conn: sqlite3.Connection, delta: Delta) -> None:
    delta.full = True
    conn.execute("DELETE FROM links")
    conn.execute("DELETE FROM chunks")
    conn.execute("DELETE FROM documents")
    conn.execute("DELETE FROM vocabulary")
    conn.execute("DELETE FROM surfaces")
    conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('delete-all')")


def write_document(
    conn: sqlite3.Connection, doc: Document, indexed_at: str, updated_at: str | None, delta: Delta
) -> None:
    """Insert or replace one document with its chunks and links."""
    delete_documents(conn, [doc.path], delta)
    doc_id = _insert_document(conn, doc, indexed_at, updated_at)
    aliases = " ".join(doc.front_matter.aliases)
    _insert_chunks(conn, doc, doc_id)
    delta.remember(conn, doc_id)
    rows = [(doc.title, aliases, " ".join(c.heading_path), c.content) for c in doc.chunks]
    vocabulary.adjust(conn, vocabulary.chunk_words(rows), +1)
    surfaces.adjust(conn, surfaces.chunk_forms(rows), +1)
    _insert_links(conn, doc, doc_id)


def _insert_document(
    conn: sqlite3.Connection, doc: Document, indexed_at: str, updated_at: str | None
) -> int:
    cursor = conn.execute(
        """INSERT INTO documents (path, scope, title, tags, aliases, refs, front_matter, body,
               body_start_line, headings, problems, content_hash, updated_at, indexed_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        (*_document_values(doc), updated_at, indexed_at),
    )
    assert cursor.lastrowid is not None
    return cursor.lastrowid


def _document_values(doc: Document) -> tuple[object, ...]:
    """The document's row as :func:`write_document` stores it, but for its times."""
    fm = doc.front_matter
    return (
        doc.path,
        doc.scope,
        doc.title,
        json.dumps(fm.tags, ensure_ascii=False),
        json.dumps(fm.aliases, ensure_ascii=False),
        json.dumps(fm.refs, ensure_ascii=False),
        json.dumps(_fm_dict(fm), ensure_ascii=False),
        doc.body,
        doc.body_start_line,
        json.dumps([[h.level, h.text, h.anchor, h.line] for h in doc.headings], ensure_ascii=False),
        json.dumps(doc.problems, ensure_ascii=False),
        doc.content_hash,
    )


def stored_as_parsed(conn: sqlite3.Connection, doc: Document) -> bool:
    """Whether the index holds ``doc`` exactly as :func:`write_document` would write it (its
    row, chunks and links; its times aside): a document read again by another chunker
    (``briefd.ingest``'s re-chunk) that comes out the same need not be written again."""
    sql = (
        "SELECT id, path, scope, title, tags, aliases, refs, front_matter, body, "
        "body_start_line, headings, problems, content_hash FROM documents WHERE path = ?"
    )
    row = conn.execute(sql, (doc.path,)).fetchone()
    if row is None or tuple(row)[1:] != _document_values(doc):
        return False
    chunks = conn.execute(
        "SELECT id, scope, title, aliases, heading, heading_path, anchor, content, tokens, "
        "content_hash, position, start_line, end_line, embed_hash FROM chunks "
        "WHERE doc_id = ? ORDER BY position",
        (row[0],),
    )
    if [tuple(c) for c in chunks] != [v[:1] + v[2:] for v in _chunk_values(doc, row[0])]:
        return False
    links = conn.execute(
        "SELECT source_path, section, line, kind, target, fragment, display FROM links "
        "WHERE doc_id = ? ORDER BY id",
        (row[0],),
    )
    return [tuple(ln) for ln in links] == [v[1:] for v in _link_values(doc, row[0])]


def _insert_chunks(conn: sqlite3.Connection, doc: Document, doc_id: int) -> None:
    conn.executemany(
        """INSERT INTO chunks (id, doc_id, scope, title, aliases, heading, heading_path, anchor,
               content, tokens, content_hash, position, start_line, end_line, embed_hash)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        _chunk_values(doc, doc_id),
    )


def _chunk_values(doc: Document, doc_id: int) -> list[tuple[object, ...]]:
    aliases = " ".join(doc.front_matter.aliases)
    return [
        (
            c.id,
            doc_id,
            doc.scope,
            doc.title,
            aliases,
            c.heading,
            json.dumps(c.heading_path, ensure_ascii=False),
            c.anchor,
            c.content,
            c.tokens,
            c.content_hash,
            c.position,
            c.start_line,
            c.end_line,
            passage_hash(passage_text(doc.title, c.heading_path, c.content)),
        )
        for c in doc.chunks
    ]


def _insert_links(conn: sqlite3.Connection, doc: Document, doc_id: int) -> None:
    conn.executemany(
        """INSERT INTO links (doc_id, source_path, section, line, kind, target, fragment, display)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
        _link_values(doc, doc_id),
    )


def _link_values(doc: Document, doc_id: int) -> list[tuple[object, ...]]:
    return [
        (doc_id, ln.source_path, ln.section, ln.line, ln.kind, ln.target, ln.fragment, ln.display)
        for ln in doc.links
    ]


def save_history(conn: sqlite3.Connection, history: Mapping[str, tuple[str, str]]) -> None:
    """Per document path its last commit and that commit's time (git sources, K3)."""
    conn.executemany(
        "UPDATE documents SET updated_commit = ?, updated_at = ? WHERE path = ? "
        "AND (updated_commit IS NOT ? OR updated_at IS NOT ?)",
        [(commit, at, path, commit, at) for path, (commit, at) in history.items()],
    )


def dates_state(conn: sqlite3.Connection) -> str:
    """A digest of every document's "updated" day as :func:`save_dates_state` last recorded it
    ('' before the first): part of a bundle's cache key, since its attribution lines show it."""
    return meta(conn, DATES_STATE) or ""


def save_dates_state(conn: sqlite3.Connection) -> None:
    """Record the digest of the documents' "updated" days. A day can move with no content
    changed (an edit indexed before it was committed, then committed), which the index
    fingerprint does not see; an unchanged digest writes nothing."""
    rows = conn.execute(
        "SELECT path, substr(coalesce(updated_at, indexed_at), 1, 10) FROM documents ORDER BY path"
    )
    canonical = json.dumps([list(row) for row in rows], separators=(",", ":"))
    set_meta(conn, DATES_STATE, hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16])


def _fm_dict(fm: FrontMatter) -> dict[str, object]:
    return {
        "title": fm.title,
        "tags": fm.tags,
        "aliases": fm.aliases,
        "refs": fm.refs,
        "relations": fm.relations,
        "always": fm.always,
    }


def chunk_from_row(row: sqlite3.Row, doc_path: str) -> Chunk:
    return Chunk(
        id=row["id"],
        doc_path=doc_path,
        heading=row["heading"],
        heading_path=tuple(json.loads(row["heading_path"])),
        anchor=row["anchor"],
        content=row["content"],
        tokens=row["tokens"],
        content_hash=row["content_hash"],
        position=row["position"],
        start_line=row["start_line"],
        end_line=row["end_line"],
    )


def headings_from_json(raw: str) -> tuple[Heading, ...]:
    return tuple(
        Heading(level, text, anchor, line) for level, text, anchor, line in json.loads(raw)
    )


def front_matter_from_row(row: sqlite3.Row) -> FrontMatter:
    data = json.loads(row["front_matter"])
    return FrontMatter(
        title=data.get("title"),
        tags=tuple(data.get("tags", ())),
        aliases=tuple(data.get("aliases", ())),
        refs=tuple(data.get("refs", ())),
        relations=tuple((r, t) for r, t in data.get("relations", ())),
        always=bool(data.get("always", False)),
    )


def stored_links(
    conn: sqlite3.Connection, where: str = "", args: Sequence[object] = ()
) -> list[tuple[int, ResolvedLink]]:
    rows = conn.execute(
        "SELECT id, source_path, section, line, kind, target, fragment, display, target_path, "
        f"status, detail FROM links {where} ORDER BY source_path, line, id",
        tuple(args),
    )
    return [
        (
            row["id"],
            ResolvedLink(
                link=Link(
                    row["source_path"],
                    row["section"],
                    row["line"],
                    row["target"],
                    row["fragment"],
                    row["display"],
                    row["kind"],
                ),
                target_path=row["target_path"],
                status=row["status"],
                detail=row["detail"],
            ),
        )
        for row in rows
    ]


def save_resolutions(
    conn: sqlite3.Connection, resolved: Sequence[tuple[int, ResolvedLink]]
) -> None:
    conn.executemany(
        "UPDATE links SET target_path = ?, status = ?, detail = ? WHERE id = ?",
        [(r.target_path, r.status, r.detail, link_id) for link_id, r in resolved],
    )
