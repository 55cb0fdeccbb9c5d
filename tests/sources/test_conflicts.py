"""A checkout read in place while a merge stopped on conflicts (K3): a ``git pull`` of the
knowledge repository that conflicts leaves git's ``<<<<<<<`` lines in the document until
someone resolves it, and the server's poll (or a ``briefd index``) read them in the meantime."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from briefd.api import Briefd
from briefd.retrieval.search import SearchRequest
from tests.sync.conftest import git_settings
from tests.sync.gitrepo import IDENTITY, git

WINDOW = "# Refunds\n\n## Window\n\nThe refund window is {} days.\n"


def contents(api: Briefd, query: str) -> list[str]:
    hits = api.search(SearchRequest(query, scopes=("all",), mode="bm25")).hits
    return [hit.content for hit in hits]


def test_a_document_with_merge_conflicts_keeps_its_indexed_version(tmp_path: Path) -> None:
    checkout = tmp_path / "knowledge"
    (checkout / "domain").mkdir(parents=True)
    git(checkout, "init", "--quiet", "--initial-branch=main")
    (checkout / "domain" / "refunds.md").write_text(WINDOW.format("thirty"), encoding="utf-8")
    git(checkout, "add", "-A")
    git(checkout, "commit", "--quiet", "-m", "refunds")
    with Briefd(git_settings(tmp_path, str(checkout)), embedder=None) as api:
        api.index()
        git(checkout, "checkout", "--quiet", "-b", "theirs")
        (checkout / "domain" / "refunds.md").write_text(WINDOW.format("fourteen"), "utf-8")
        git(checkout, "commit", "--quiet", "-am", "fourteen")
        git(checkout, "checkout", "--quiet", "main")
        (checkout / "domain" / "refunds.md").write_text(WINDOW.format("sixty"), "utf-8")
        git(checkout, "commit", "--quiet", "-am", "sixty")
        merge = subprocess.run(
            ["git", "merge", "theirs"], cwd=checkout, env={**os.environ, **IDENTITY},
            capture_output=True, check=False,
        )  # fmt: skip
        assert (
            merge.returncode == 1 and "<<<<<<<" in (checkout / "domain" / "refunds.md").read_text()
        )

        report = api.index()
        assert [(s.path, s.reason) for s in report.skipped] == [
            (
                "domain/refunds.md",
                "has unresolved merge conflicts (git's <<<<<<< and >>>>>>> lines are in it); "
                "resolve them, then `git add` it; the version indexed before is kept",
            )
        ]
        assert contents(api, "refund window") == ["The refund window is thirty days."]

        (checkout / "domain" / "refunds.md").write_text(WINDOW.format("forty"), "utf-8")
        git(checkout, "add", "domain/refunds.md")
        assert api.index().skipped == ()
        assert contents(api, "refund window") == ["The refund window is forty days."]
