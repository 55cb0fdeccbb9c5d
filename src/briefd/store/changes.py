"""The chunk changes of one index run, collected for :mod:`briefd.store.postings`.

Kept apart from the postings (which need numpy) so the tables' writers and the migrations stay
importable by the prompt-time hook's standard-library path.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

TEXT_SQL = (
    "SELECT rowid, briefd_fold(title || ' ' || aliases), briefd_fold(heading_path), "
    "briefd_fold(content) FROM chunks"
)


@dataclass(slots=True)
class Delta:
    """The chunk changes of one index run: removed chunks with their (folded) search text,
    added chunk rowids, or ``full`` when everything was replaced."""

    removed: dict[int, tuple[str, str, str]] = field(default_factory=dict)
    added: list[int] = field(default_factory=list)
    full: bool = False

    def forget(self, conn: sqlite3.Connection, doc_id: int) -> None:
        """Record a document's chunks before they are deleted."""
        for row in conn.execute(TEXT_SQL + " WHERE doc_id = ?", (doc_id,)):
            self.removed[row[0]] = (row[1], row[2], row[3])

    def remember(self, conn: sqlite3.Connection, doc_id: int) -> None:
        """Record a document's chunks after they are inserted."""
        self.added += [
            r[0] for r in conn.execute("SELECT rowid FROM chunks WHERE doc_id = ?", (doc_id,))
        ]

    def empty(self) -> bool:
        return not (self.removed or self.added or self.full)
