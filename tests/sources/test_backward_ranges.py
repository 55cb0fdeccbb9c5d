"""A glob with a character range written backwards (``[z-a]``, which git reads as matching
nothing) in a document's ``refs`` or in a ``.gitignore`` of the knowledge: the document is
indexed with the entry ignored and a problem said, the ignore file's other lines still apply;
one such line by any author stopped every index run of the whole knowledge with a traceback.
Real ``briefd index`` and ``briefd doc`` processes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.sources.test_ignored import briefd


def test_a_backward_range_stops_no_index_run(tmp_path: Path) -> None:
    root = tmp_path / "knowledge"
    (root / "domain").mkdir(parents=True)
    (root / "domain" / "bad.md").write_text(
        '---\nrefs: ["src/[z-a]*", "svc/**"]\n---\n# Bad\n\nRetry with a backoff.\n'
    )
    (root / "domain" / "good.md").write_text("# Good\n\nIdempotency keys last a day.\n")
    (root / "domain" / "draft.md").write_text("# Draft\n\nUnannounced pricing.\n")
    (root / ".gitignore").write_text("notes/[z-a]\ndomain/draft.md\n")

    indexed = briefd(tmp_path, "index", "--source", str(root))
    assert indexed.returncode == 0, indexed.stderr
    assert "'src/[z-a]*' is not a glob" in indexed.stdout + indexed.stderr
    listed = briefd(tmp_path, "docs", "--json")
    assert listed.returncode == 0, listed.stderr
    paths = sorted(d["path"] for d in json.loads(listed.stdout)["documents"])
    assert paths == ["domain/bad.md", "domain/good.md"]  # draft.md: still ignored
    shown = briefd(tmp_path, "doc", "domain/bad.md", "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["front_matter"]["refs"] == ["svc/**"]
