"""Front matter as Hugo writes it (K2), through the real ``briefd index`` and ``briefd search``
on a git checkout whose ``docs/`` is a Hugo site: TOML between ``+++`` lines and a JSON object
that opens the file are front matter, not a section of text."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.cli.test_cli import briefd


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _hits(cwd: Path, *args: str) -> list[dict[str, object]]:
    result = briefd("search", *args, "--mode", "bm25", "--json", "--related", "0", cwd=cwd)
    assert result.returncode == 0, result.stderr
    hits: list[dict[str, object]] = json.loads(result.stdout)["hits"]
    return hits


def test_toml_and_json_front_matter_are_read_not_indexed_as_text(tmp_path: Path) -> None:
    """A Hugo page's ``+++`` block was indexed as a section of its own ("+++ title = …", found by
    searching its keys), its title, tags and relations lost, and nothing reported; so was a
    JSON block. Now they are the document's front matter, and one that does not parse is
    reported as YAML's is."""
    repo = tmp_path / "site"
    domain = repo / "docs" / "domain"
    domain.mkdir(parents=True)
    (domain / "fees.md").write_text(
        '+++\ntitle = "Interchange fees"\ntags = ["pricing"]\ndate = 2024-01-05\n'
        'depends_on = ["settlement"]\n+++\n\n# Fees\n\nWe charge two percent per transaction.\n',
        encoding="utf-8",
    )
    (domain / "settlement.md").write_text(
        '{\n  "title": "Nightly settlement",\n  "tags": ["pricing", "ops"]\n}\n\n'
        "# Settlement\n\nBatches close at midnight.\n",
        encoding="utf-8",
    )
    (domain / "broken.md").write_text(
        '+++\ntitle = "Unclosed\n+++\n# Broken\n\nThe body is still served.\n', encoding="utf-8"
    )
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "hugo site")

    indexed = briefd("index", "--source", str(repo / "docs"), "--json", cwd=tmp_path)
    assert indexed.returncode == 0, indexed.stderr
    assert json.loads(indexed.stdout)["problems"] == [
        {
            "path": "domain/broken.md",
            "problem": "front matter is not valid TOML (Illegal character '\\n' (at line 2, "
            "column 18)); indexed without front matter",
        }
    ]
    fees = _hits(tmp_path, "transaction")
    assert [(h["title"], h["content"], h["start_line"]) for h in fees] == [
        ("Interchange fees", "We charge two percent per transaction.", 8)
    ]
    assert _hits(tmp_path, "title date tags") == []  # the block's keys are no text
    tagged = _hits(tmp_path, "midnight transaction", "--tags", "pricing")
    assert sorted(str(h["title"]) for h in tagged) == ["Interchange fees", "Nightly settlement"]
    assert [h["content"] for h in _hits(tmp_path, "midnight")] == ["Batches close at midnight."]
    broken = _hits(tmp_path, "still served")
    assert [(h["title"], h["content"]) for h in broken] == [("Broken", "The body is still served.")]
    links = briefd("links", "--json", cwd=tmp_path)
    assert links.returncode == 0, links.stderr
    report = json.loads(links.stdout)  # depends_on: a relation to settlement.md, as in YAML
    assert (report["broken"], report["orphans"]) == ([], ["domain/broken.md", "domain/fees.md"])
