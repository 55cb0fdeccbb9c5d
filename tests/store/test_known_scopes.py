"""Which scopes an index holds is read from the scope index, a step per scope: every search
asks it (and again for the request's warnings), and scanning every document's entry for it
cost ~3–8 ms a search on a million-chunk index of 56K documents."""

from __future__ import annotations

import sqlite3

from briefd.api import Briefd
from briefd.store.scopes import known_scopes
from tests.conftest import WriteFiles

SCOPES = ("conventions", "domain", "projects/web")


def _steps(conn: sqlite3.Connection) -> tuple[list[str], int]:
    """known_scopes() and the SQLite VM instructions it ran."""
    counted = [0]

    def step() -> int:
        counted[0] += 1
        return 0

    conn.set_progress_handler(step, 1)
    try:
        return known_scopes(conn), counted[0]
    finally:
        conn.set_progress_handler(None, 0)


def test_known_scopes_costs_a_few_steps_per_scope_not_per_document(
    api: Briefd, write_files: WriteFiles
) -> None:
    source = write_files({"projects/web/first.md": "# First\n\nOne web page.\n"})
    api.index(source)
    with api.store.read() as conn:
        few, small = _steps(conn)
    write_files(
        {
            f"{scope}/page-{n:03d}.md": f"# Page {n} of {scope}\n\nAbout {scope} item {n}.\n"
            for scope in SCOPES
            for n in range(200)
        }
    )
    api.index(source)
    with api.store.read() as conn:
        found, large = _steps(conn)
        listed = [r[0] for r in conn.execute("SELECT DISTINCT scope FROM documents ORDER BY 1")]
    assert few == ["projects/web"]
    assert found == listed == list(SCOPES)
    assert large < 40 * (len(SCOPES) + 1), (small, large)  # not ~10 per document (601 here)
