"""Links to a document superseded in a chain (K5): ADR 1 superseded by ADR 2, itself superseded
by ADR 3. `briefd links` said a guide's link to ADR 1 was "superseded by domain/adr-2.md", and
an author who followed it linked another replaced text; it now names the current one."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli import briefd
from tests.cli.test_links_cli import _indexed


def test_a_link_into_a_supersedes_chain_names_the_current_document(tmp_path: Path) -> None:
    cwd, db = _indexed(
        tmp_path,
        {
            "domain/adr-1.md": "# ADR 1\n\nRetry five times.\n",
            "domain/adr-2.md": "---\nsupersedes: adr-1.md\n---\n# ADR 2\n\nRetry four times.\n",
            "domain/adr-3.md": "---\nsupersedes: '[[adr-2]]'\n---\n# ADR 3\n\nRetry thrice.\n",
            "domain/guide.md": "# Guide\n\nRetries: [[adr-1]], [[adr-2]] and [[adr-3]].\n",
        },
    )
    found = briefd("--db", db, "links", cwd=cwd)
    assert found.stdout.endswith(
        "links to superseded documents: 2\n"
        "  domain/guide.md:3 links to domain/adr-1.md, superseded by domain/adr-2.md, itself "
        "superseded: the current text is domain/adr-3.md\n"
        "  domain/guide.md:3 links to domain/adr-2.md, superseded by domain/adr-3.md\n"
    ), found.stdout
    data = json.loads(briefd("--db", db, "links", "--json", cwd=cwd).stdout)
    assert data["to_superseded"][0]["detail"].endswith("the current text is domain/adr-3.md")
