"""The ``tags`` filter (R5): front-matter tags, matched case-insensitively, any of them."""

from __future__ import annotations

import difflib
import json
import sqlite3
from collections.abc import Collection, Sequence

from briefd.errors import QueryError
from briefd.store.scopes import add_to_scopes
from briefd.text import caseless, shown


def tag_key(tag: str) -> str:
    """A tag as it is matched: stripped, without the ``#`` Obsidian writes tags with
    (``tags: ["#payments"]`` is the tag ``payments``), composed and case-folded in full,
    Turkish İ and ı as i (SQLite's ``lower()`` folds ASCII only: "Ödeme" and "İade" matched no
    spelling)."""
    return caseless(tag.strip().lstrip("#").strip())


def normalise_tags(tags: Sequence[str]) -> tuple[str, ...]:
    """Tags as :func:`tag_key` gives them, sorted and without duplicates (the cache key's
    form)."""
    return tuple(sorted({key for t in tags if (key := tag_key(t))}))


def known_tags(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute("SELECT DISTINCT json_each.value FROM documents, json_each(documents.tags)")
    return sorted({key for r in rows if (key := tag_key(str(r[0])))})


def _carries(tags_json: str | None, wanted: Collection[str]) -> bool:
    return any(tag_key(str(t)) in wanted for t in json.loads(tags_json or "[]"))


def check_tags(
    conn: sqlite3.Connection, tags: Sequence[str], scopes: Sequence[str] | None = None
) -> None:
    """Every requested tag is on some document; else an error naming the known ones. With
    ``scopes``, one of them at least is on a document of those scopes: else the filter matches
    nothing there, and the error names the scopes whose documents carry them (an empty answer
    read as "nothing on this topic")."""
    if not tags:
        return
    known = set(known_tags(conn))
    unknown = [t for t in tags if t not in known]
    if unknown:
        listing = _listing(unknown[0], sorted(known))
        raise QueryError(f"tag '{shown(unknown[0])}' is on no document; known tags: {listing}")
    if scopes is None:
        return
    carrying = sorted(set().union(*tag_scopes(conn, tags).values()))
    if not set(carrying) & set(scopes):
        named = ", ".join(f"'{shown(t)}'" for t in tags)
        subject = f"tag {named} is" if len(tags) == 1 else f"tags {named} are"
        add = "it" if len(carrying) == 1 else "one of them"
        raise QueryError(
            f"{subject} on no document in scopes {', '.join(scopes)} (only in "
            f"{', '.join(carrying)}): {add_to_scopes(add)}"
        )


LISTED = 30  # known tags an unknown tag's error names


def _listing(asked: str, known: Sequence[str]) -> str:
    """The known tags, all of them when they are few; else the ``LISTED`` nearest in spelling
    to ``asked`` first, then in order, and how many more: a team's 3,500 tags made an error of
    35 KB, on one line, whatever was mistyped."""
    if not known:
        return "none (no document has tags)"
    if len(known) <= LISTED:
        return ", ".join(known)
    near = difflib.get_close_matches(asked, known, n=LISTED, cutoff=0.6)
    rest = [t for t in known if t not in set(near)][: LISTED - len(near)]
    return f"{', '.join(map(shown, near + rest))} and {len(known) - len(near) - len(rest)} more"


def tag_scopes(conn: sqlite3.Connection, tags: Collection[str]) -> dict[str, set[str]]:
    """The scopes whose documents carry each of ``tags`` (normalised)."""
    rows = conn.execute(
        "SELECT DISTINCT documents.scope, json_each.value FROM documents, json_each(documents.tags)"
    )
    found: dict[str, set[str]] = {t: set() for t in tags}
    for scope, tag in rows:
        key = tag_key(str(tag))
        if key in found:
            found[key].add(str(scope))
    return found


def tagged_rowids(
    conn: sqlite3.Connection, rowids: Collection[int], tags: Sequence[str]
) -> set[int]:
    """Those of ``rowids`` (chunks) whose document carries any of ``tags`` (normalised)."""
    if not rowids or not tags:
        return set()
    ids = sorted(rowids)
    rows = conn.execute(
        "SELECT c.rowid, d.tags FROM chunks c JOIN documents d ON d.id = c.doc_id "
        f"WHERE c.rowid IN ({', '.join('?' * len(ids))})",
        ids,
    )
    return {r[0] for r in rows if _carries(r[1], tags)}


def tagged_paths(conn: sqlite3.Connection, paths: Collection[str], tags: Sequence[str]) -> set[str]:
    """Those of ``paths`` (documents) that carry any of ``tags`` (normalised)."""
    if not paths or not tags:
        return set()
    wanted = sorted(paths)
    rows = conn.execute(
        f"SELECT d.path, d.tags FROM documents d WHERE d.path IN ({', '.join('?' * len(wanted))})",
        wanted,
    )
    return {r[0] for r in rows if _carries(r[1], tags)}
