"""A document renamed and edited in the same commit (K3, K5), in a real git checkout: git's
rename detection names where it went, so broken links to the old path say so, as they do for
a move that keeps the content; before, the index saw a deletion and an unrelated new file."""

from __future__ import annotations

import subprocess
from pathlib import Path

from briefd.api import Briefd
from briefd.store import documents as docs_table
from tests.conftest import WriteFiles

POLICY = (
    "# Refund rules\n\nPartial refunds within thirty days of the charge, full refunds for "
    "duplicates.\n\n## Exceptions\n\nNone for gift cards.\n"
)


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@e", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def _moved(api: Briefd) -> dict[str, str]:
    with api.store.read() as conn:
        return docs_table.moved_documents(conn)


def test_a_rename_edited_in_the_same_commit_is_a_move(api: Briefd, write_files: WriteFiles) -> None:
    root = write_files(
        {"conventions/refunds.md": POLICY, "domain/a.md": "# A\n\nSee [[refunds]].\n"}
    )
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "knowledge")
    api.index()
    _git(root, "mv", "conventions/refunds.md", "conventions/refund-policy.md")
    (root / "conventions/refund-policy.md").write_text(POLICY.replace("gift", "prepaid gift"))
    _git(root, "commit", "-qam", "rename and edit")
    report = api.index()
    assert (report.added, report.deleted) == (
        ("conventions/refund-policy.md",),
        ("conventions/refunds.md",),
    )
    assert _moved(api) == {"conventions/refunds.md": "conventions/refund-policy.md"}
    (broken,) = api.link_findings().broken
    assert broken.detail == (
        "no document matches 'refunds': conventions/refunds.md was renamed to "
        "conventions/refund-policy.md: link it as [[conventions/refund-policy.md|refunds]]"
    )


def test_a_staged_rename_with_an_edit_and_an_unrelated_new_file(
    api: Briefd, write_files: WriteFiles
) -> None:
    """Not yet committed (``git mv`` and an edit): git compares the work tree with the
    commit the index served. A new file git does not pair with it is no move."""
    root = write_files({"conventions/refunds.md": POLICY})
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "knowledge")
    api.index()
    _git(root, "mv", "conventions/refunds.md", "conventions/refund-policy.md")
    (root / "conventions/refund-policy.md").write_text(POLICY + "\nAlso vouchers.\n")
    (root / "conventions/naming.md").write_text("# Naming\n\nAfter the domain.\n")
    api.index()
    assert _moved(api) == {"conventions/refunds.md": "conventions/refund-policy.md"}


def test_a_rename_by_plain_mv_with_an_edit_not_yet_added_is_a_move(
    api: Briefd, write_files: WriteFiles
) -> None:
    """A document moved with ``mv`` (not ``git mv``) and edited, nothing added yet: git's diff
    of the work tree leaves the new, untracked file out, so the move was a deletion and an
    unrelated new file. The new files are given to git's rename detection through a copy of
    the checkout's index, which itself is left as it was (``git status`` unchanged)."""
    root = write_files(
        {"conventions/refunds.md": POLICY, "domain/a.md": "# A\n\nSee [[refunds]].\n"}
    )
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "knowledge")
    api.index()
    (root / "conventions/refunds.md").rename(root / "conventions/refund-policy.md")
    (root / "conventions/refund-policy.md").write_text(POLICY + "\nAlso vouchers.\n")
    (root / "conventions/naming.md").write_text("# Naming\n\nAfter the domain.\n")
    status = _status(root)

    api.index()

    assert _moved(api) == {"conventions/refunds.md": "conventions/refund-policy.md"}
    (broken,) = api.link_findings().broken
    assert "conventions/refunds.md was renamed to conventions/refund-policy.md" in (
        broken.detail or ""
    )
    assert (
        _status(root)
        == status
        == (
            " D conventions/refunds.md\n?? conventions/naming.md\n?? conventions/refund-policy.md\n"
        )
    )


def _status(root: Path) -> str:
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout
