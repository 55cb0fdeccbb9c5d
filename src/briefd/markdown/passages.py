"""The text a chunk is embedded as, and its hash (the key its vector is stored under)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence


def passage_text(title: str, heading_path: Sequence[str], content: str) -> str:
    """Title and breadcrumb give a short section the context its body lacks."""
    head = " > ".join((title, *heading_path)) if title else " > ".join(heading_path)
    return f"{head}\n{content}" if head else content


def passage_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
