"""Cursors of the listings served in pages (``GET /api/docs``, ``GET /api/proposals``): the
sort key of the last item a page listed, opaque to clients (URL-safe base64 of a JSON array),
so the next page starts after that item however many were added or removed before it between
the two reads, where an offset would list one twice or skip one."""

from __future__ import annotations

import base64
import binascii
import json

from fastapi.exceptions import RequestValidationError


def cursor_of(*key: str) -> str:
    """The cursor for the next page after an item whose sort key is ``key``."""
    raw = json.dumps(list(key), ensure_ascii=False, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def key_of(cursor: str, size: int, route: str) -> tuple[str, ...]:
    """The sort key ``cursor`` holds (``size`` strings); anything else is a 422 naming the
    parameter, as a bad ``limit`` is."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        key = json.loads(raw.decode())
    except (binascii.Error, ValueError, RecursionError):  # a JSON nested past the limit too
        key = None
    if isinstance(key, list) and len(key) == size and all(isinstance(k, str) for k in key):
        return tuple(key)
    said = (
        f"not a cursor {route} gave: pass a page's next_cursor as it came, or leave cursor out "
        "for the first page"
    )
    problem = {"type": "value_error", "loc": ("query", "cursor"), "msg": said, "input": cursor}
    raise RequestValidationError([problem])
