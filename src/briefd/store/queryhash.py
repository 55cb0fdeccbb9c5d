"""Query hashes (T3, T6): the query log groups entries by a salted hash of each query's
grouping key, so ``activity.log_prompts: hashed`` can keep counting and grouping prompts
without storing their text."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import sqlite3

from briefd.store.documents import meta, set_meta
from briefd.text import grouping_key

SALT_KEY = "query_log_salt"


def query_salt(conn: sqlite3.Connection) -> bytes:
    """This index's random salt for query hashes (created on first use): a hashed prompt
    cannot be looked up in a table of hashes of common prompts made elsewhere."""
    salt = meta(conn, SALT_KEY)
    if salt is None:
        salt = secrets.token_hex(16)
        set_meta(conn, SALT_KEY, salt)
    return bytes.fromhex(salt)


def query_hash(query: str, salt: bytes) -> str:
    """The salted hash of ``query``'s grouping key (equal for queries the gaps report
    groups together)."""
    key = grouping_key(query).encode("utf-8")
    return hmac.new(salt, key, hashlib.sha256).hexdigest()[:32]


def hash_logged_queries(conn: sqlite3.Connection) -> None:
    """Give entries logged before query hashes existed their hash (migration 16)."""
    salt = query_salt(conn)
    rows = conn.execute("SELECT id, query FROM query_log WHERE query_hash IS NULL").fetchall()
    conn.executemany(
        "UPDATE query_log SET query_hash = ? WHERE id = ?",
        [(query_hash(r["query"], salt), r["id"]) for r in rows],
    )
