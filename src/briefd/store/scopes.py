"""Which scopes an index has, and which of them a request may read (K1)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from briefd.errors import ScopeError
from briefd.sources.layout import in_scopes

ALL_SCOPES = "all"


def known_scopes(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT DISTINCT scope FROM documents ORDER BY scope")]


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
    if ALL_SCOPES in requested:
        return tuple(known)
    unknown = [s for s in requested if s not in known]
    if unknown:
        listing = ", ".join(known) if known else "none (the index is empty)"
        raise ScopeError(
            f"scope '{unknown[0]}' does not exist; known scopes: {listing} (or '{ALL_SCOPES}')"
        )
    return tuple(dict.fromkeys(requested))
