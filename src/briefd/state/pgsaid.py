"""What the shared state's messages say of PostgreSQL: its URL without the password, and what
the server or libpq said, in one line, with what the operator does about it. Pure."""

from __future__ import annotations

import re

_PASSWORD = re.compile(r"(://[^:/@]*:)\S*@")  # to the last @: a password may hold one, or a /
_PASSWORD_PARAM = re.compile(r"([?&](?:ssl)?password=)[^&\s]*")  # sslpassword: a TLS key's
_SAID = re.compile(r"\b(?:FATAL|ERROR):\s+(.*)")  # what the server said, after libpq's prefix
_TO_DO = (  # what the server said → what the operator does
    (
        r"password authentication failed|no password supplied",
        "check the user and password in state.url",
    ),
    (r'^role ".*" does not exist', "check the user in state.url, or create that role"),
    (r'^database ".*" does not exist', "check the database in state.url, or create it"),
    (r"no pg_hba\.conf entry", "allow this host and user in the server's pg_hba.conf"),
    (
        r"permission denied for schema|no schema has been selected",
        "GRANT USAGE, CREATE ON SCHEMA public TO the user in state.url, or connect as the "
        "database's owner",
    ),
    (r"permission denied for database", "GRANT CONNECT ON DATABASE to the user in state.url"),
    (
        r"permission denied for (table|sequence)",
        "connect as the role that created briefd's "
        "tables, or grant the user in state.url their rights",
    ),
)


def redacted(url: str) -> str:
    """``url`` without its password (for messages and logs)."""
    return _PASSWORD_PARAM.sub(r"\1***", _PASSWORD.sub(r"\1***@", url))


def said(message: str) -> str:
    """What libpq or the server said, in one line (no ``LINE 1:`` and caret under it), with
    what to do when it is a matter of settings or grants."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    found = _SAID.search(lines[0])
    first = found.group(1).strip() if found else lines[0]
    to_do = next((do for pattern, do in _TO_DO if re.search(pattern, first)), None)
    return f"{first} ({to_do})" if to_do else first
