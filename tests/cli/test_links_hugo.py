"""Links of a Hugo or Docusaurus site (K5, R6), through the real ``briefd index``, ``briefd
links`` and ``briefd search`` on a git checkout: Hugo's ``ref``/``relref`` shortcodes and
Markdown links to ``.mdx`` pages reach their documents, so related context brings them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.cli.test_cli import briefd

FILES = {
    "domain/refunds.md": (
        '# Refunds\n\nRefunds follow the [fee rules]({{< ref "fees.md" >}}) and settle per\n'
        '{{< relref "settlement" >}}; payouts: {{< ref "/domain/payouts" >}}.\n'
        "Write them up as [the guide](../conventions/guide.mdx#style) says.\n"
    ),
    "domain/fees.md": "# Fees\n\nTwo percent per transaction.\n",
    "domain/settlement.md": "# Settlement\n\nBatches close at midnight.\n",
    "domain/payouts/_index.md": "# Payouts\n\nSent daily.\n",
    "conventions/guide.mdx": "import X from './x';\n\n# Guide\n\n## Style\n\nShort sentences.\n",
}
ENV = {"BRIEFD_INDEX__INCLUDE": "**/*.md, **/*.mdx"}


def test_hugo_refs_and_mdx_links_reach_their_documents_and_related_context(
    tmp_path: Path,
) -> None:
    """Before, ``briefd links`` listed fees, settlement, payouts and the guide as orphans,
    and a search hit on refunds brought none of them as related context."""
    source = tmp_path / "site" / "content"
    for path, text in FILES.items():
        (source / path).parent.mkdir(parents=True, exist_ok=True)
        (source / path).write_text(text, encoding="utf-8")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=tmp_path / "site", check=True)
    db = str(tmp_path / "index.db")
    indexed = briefd("--db", db, "index", "--source", str(source), cwd=tmp_path, env=ENV)
    assert indexed.returncode == 0, indexed.stderr

    checked = briefd("--db", db, "links", "--check", "--json", cwd=tmp_path, env=ENV)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    findings = json.loads(checked.stdout)
    assert findings["broken"] == [] and findings["unknown_anchors"] == []
    assert findings["orphans"] == ["domain/refunds.md"]  # the one nothing links

    args = ("search", "refunds follow", "--mode", "bm25", "--json", "--related", "5")
    searched = briefd("--db", db, *args, cwd=tmp_path, env=ENV)
    assert searched.returncode == 0, searched.stderr
    hits = json.loads(searched.stdout)["hits"]
    assert hits[0]["doc_path"] == "domain/refunds.md"
    related = {h["doc_path"] for h in hits if h["related_to"] == hits[0]["chunk_id"]}
    assert related == {
        "domain/fees.md",
        "domain/settlement.md",
        "domain/payouts/_index.md",
        "conventions/guide.mdx",
    }
