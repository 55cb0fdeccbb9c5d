"""The no-change stamp (O4) and the documents of ignored folders that links may name (K5): a
document added to a folder a ``.gitignore`` ignores changes what a link to it says, so the
stamp must not answer "nothing changed" over it."""

from __future__ import annotations

from briefd.api import Briefd
from briefd.cli import stamp
from briefd.cli.index_fast import main as index_fast
from briefd.settings import Settings
from tests.cli.test_stamp import ENV, knowledge, stamped
from tests.sync.gitrepo import git

__all__ = ["knowledge"]  # the fixture, shared with test_stamp


def test_a_document_added_to_an_ignored_folder_falls_through(
    knowledge: tuple[Settings, list[str]],
) -> None:
    """The stamp held the stat of the folders the scan indexes, not of the ignored ones it
    also looks into for documents links name: after ``domain/drafts/plan.md`` was written,
    every ``briefd index`` answered from the stamp, and ``briefd links`` kept saying "no
    document matches 'plan'" instead of naming the file and the .gitignore that leaves it
    out, as the README promises for the next ``briefd index``."""
    settings, argv = knowledge
    root = settings.source
    assert root is not None
    (root / "domain" / "refunds.md").write_text("# Refunds\n\nSee [[plan]].\n")
    (root / "domain" / ".gitignore").write_text("drafts/\n")
    (root / "domain" / "drafts" / "old").mkdir(parents=True)
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", "drafts ignored")
    with Briefd(settings, embedder=None) as api:
        api.index()
    stamped(settings, argv)
    assert stamp.answer(argv, ENV) is not None

    (root / "domain" / "drafts" / "old" / "plan.md").write_text("# Plan\n\nNot yet.\n")
    assert stamp.answer(argv, ENV) is None
    assert index_fast(argv) is None  # the hashing check sees it too: the full run's turn
    with Briefd(settings, embedder=None) as api:
        api.index()
        details = [found.detail for found in api.link_findings().broken]
    assert details == [
        "domain/drafts/old/plan.md exists but is not indexed: in domain/drafts/, a folder a "
        ".gitignore ignores, and briefd indexes no file git ignores; change that pattern to "
        "index it"
    ]
