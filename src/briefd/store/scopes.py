"""Which scopes an index has, and which of them a request may read (K1)."""

from __future__ import annotations

import sqlite3
import unicodedata
from collections.abc import Sequence

from briefd.errors import ScopeError
from briefd.settings import DEFAULT_SCOPES
from briefd.sources.layout import in_scopes
from briefd.store import sync_state
from briefd.text import shown

ALL_SCOPES = "all"


def add_to_scopes(what: str = "it") -> str:
    """How to ask for a scope a request left out, said for every surface: ``scopes`` in a REST
    body or query and an MCP tool's arguments, ``--scopes`` on the CLI (one text, built here
    below the surfaces, so it names both)."""
    return f"add {what} to scopes (--scopes on the CLI) or use '{ALL_SCOPES}'"


# Each scope found by one seek in the documents_scope index (the next scope after the last):
# a step per scope. SELECT DISTINCT walks every document's entry, ~3-8 ms a search at 56K
# documents (a million chunks), and every search asks twice (the scopes, their warnings).
_SCOPES_SQL = (
    "WITH RECURSIVE found(scope) AS (SELECT min(scope) FROM documents UNION ALL "
    "SELECT (SELECT min(scope) FROM documents WHERE scope > found.scope) FROM found "
    "WHERE found.scope IS NOT NULL) SELECT scope FROM found WHERE scope IS NOT NULL"
)


def known_scopes(conn: sqlite3.Connection) -> list[str]:
    """The index's scopes, in order."""
    return [r[0] for r in conn.execute(_SCOPES_SQL)]


def resolve_scopes(
    conn: sqlite3.Connection,
    requested: Sequence[str] | None,
    default: Sequence[str],
    known: Sequence[str] | None = None,
) -> tuple[str, ...]:
    """Requested scopes must exist; ``all`` means every scope; defaults that are absent are
    simply not searched (a default may be a folder glob of the ``scopes:`` layout, such as
    ``teams/*``). ``known``: the index's scopes, when the caller has them."""
    known = known_scopes(conn) if known is None else known
    if requested is None:
        named = [s for s in default if s in known]
        found = tuple(dict.fromkeys(named + [s for s in known if in_scopes(s, default)]))
        if not found and known:
            raise ScopeError(
                f"no default scope is in this index (default_scopes: {', '.join(default) or 'none'}"
                f"; indexed scopes: {', '.join(known)}): set default_scopes in briefd.yaml (or "
                f"mark a scopes: rule default: true), or name scopes (or '{ALL_SCOPES}')"
            )
        return found
    requested = check_known(requested, known)
    if ALL_SCOPES in requested:  # with others named too, a typo among them is still one
        return tuple(known)
    return tuple(dict.fromkeys(requested))


def check_known(requested: Sequence[str], known: Sequence[str]) -> list[str]:
    """``requested`` as the index spells its scopes, or a :class:`ScopeError` naming the first
    that is not one of ``known`` (nor ``all``): the one text every surface gives for it."""
    spelled = [_as_known(s, known) for s in requested]
    unknown = [s for s in spelled if s not in known and s != ALL_SCOPES]
    if unknown:
        listing = ", ".join(known) if known else "none (the index is empty)"
        raise ScopeError(
            f"scope '{shown(unknown[0])}' does not exist; known scopes: {listing} (or '{ALL_SCOPES}')"
        )
    return spelled


def _as_known(scope: str, known: Sequence[str]) -> str:
    """``scope`` as the index spells it: named composed otherwise (NFD, as macOS writes the
    folder names scopes come from, or the other way round), it is the same scope."""
    if scope in known:
        return scope
    wanted = unicodedata.normalize("NFC", scope)
    return next((k for k in known if unicodedata.normalize("NFC", k) == wanted), scope)


def default_scope_warnings(default: Sequence[str], known: Sequence[str]) -> tuple[str, ...]:
    """What to tell a user whose ``default_scopes`` name scopes the index does not have (a
    mistyped name would otherwise be dropped without a word while the others serve). Nothing
    for an empty index, or for the shipped defaults (a knowledge base without
    ``conventions/`` chose nothing)."""
    missing = [d for d in default if not any(in_scopes(s, (d,)) for s in known)]
    if not missing or not known or tuple(default) == DEFAULT_SCOPES:
        return ()
    names = ", ".join(f"'{m}'" for m in missing)
    read = [s for s in known if in_scopes(s, default)]
    served = (
        f"searches without scopes read {', '.join(read)} only"
        if read
        else "searches without scopes fail"
    )
    subject = f"default scope {names} is" if len(missing) == 1 else f"default scopes {names} are"
    return (
        f"{subject} not in this index, so {served} (indexed scopes: {', '.join(known)}); set "
        "default_scopes in briefd.yaml to scopes the index has",
    )


def request_warnings(
    conn: sqlite3.Connection, requested: Sequence[str] | None, default: Sequence[str]
) -> tuple[str, ...]:
    """:func:`default_scope_warnings` for a request that names no scopes (one that names its
    scopes reads no default), or :func:`served_none` for an index that holds no document; the
    index's scopes are read only when there can be one."""
    if conn.execute("SELECT 1 FROM documents LIMIT 1").fetchone() is None:
        said = served_none(conn)
        return (said,) if said else ()
    if requested is not None or tuple(default) == DEFAULT_SCOPES:
        return ()
    return default_scope_warnings(default, known_scopes(conn))


SERVED_NONE = "the index holds no document: its last run found"


def served_none(conn: sqlite3.Connection) -> str:
    """Why an index without documents has none, when its last run found files and served
    none (every one outside the scopes, or skipped otherwise): the first file's reason says
    what to change. Another index run changes nothing until then, so that is not the advice
    ('' when the run found no file, or none ran)."""
    stored = sync_state.index_report(conn).get("skipped")
    skipped = [s for s in stored if isinstance(s, dict)] if isinstance(stored, list) else []
    if not skipped:
        return ""
    paths = [str(s.get("path")) for s in skipped]
    listed = ", ".join(paths[:3]) + (", …" if len(paths) > 3 else "")
    files = "1 file" if len(paths) == 1 else f"{len(paths)} files"
    first = skipped[0]
    return (
        f"{SERVED_NONE} {files} ({listed}) and served none: {first.get('path')}: "
        f"{first.get('reason')}, then run `briefd index`"
    )
