"""The no-change stamp (O4) over a symbolically linked document (K1): the link counts as its
target (the scan indexes the target's content under the link's path), so a knowledge repo
with one linked document still gets a stamp, and every change of the link or its target
still sends the run on to hash."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.cli import stamp
from briefd.cli.index_fast import refresh_stamp
from briefd.settings import Settings
from tests.cli.test_stamp import ENV, knowledge, stamped
from tests.sync.gitrepo import git

__all__ = ["knowledge"]  # the fixture, shared with test_stamp

LINK = "conventions/refund-policy.md"


def linked(settings: Settings) -> Path:
    """The source with ``conventions/refund-policy.md`` linking to ``domain/refunds.md``,
    committed and indexed; the source's folder."""
    root = settings.source
    assert root is not None
    (root / LINK).symlink_to("../domain/refunds.md")
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", "a linked document")
    with Briefd(settings, embedder=None) as api:
        report = api.index()
    assert LINK in report.added and report.documents == 4
    return root


def test_a_linked_document_still_gets_a_stamp(knowledge: tuple[Settings, list[str]]) -> None:
    """One symbolic link anywhere in the source made the writer refuse every stamp: each
    ``briefd index`` from a hook or cron hashed every file again instead of answering at
    once."""
    settings, argv = knowledge
    linked(settings)
    stamped(settings, argv)
    answer = stamp.answer(argv, ENV)
    assert answer is not None
    assert "0 changed (0 new), 0 deleted, 4 unchanged, 0 skipped" in answer


def edit_target(root: Path) -> None:
    (root / "domain/refunds.md").write_text("# Refunds\n\nPartial refunds within 90 days.\n")


def retarget(root: Path) -> None:
    (root / LINK).unlink()
    (root / LINK).symlink_to("../domain/retries.md")


def retarget_through_another_link(root: Path) -> None:
    """The document links to a link, and that second link is replaced in another folder."""
    (root / "domain/current.md").symlink_to("refunds.md")
    (root / LINK).unlink()
    (root / LINK).symlink_to("../domain/current.md")


def break_link(root: Path) -> None:
    (root / "domain/refunds.md").rename(root / "domain/refunds-old.md")


def replace_by_a_copy(root: Path) -> None:
    text = (root / LINK).read_text()
    (root / LINK).unlink()
    (root / LINK).write_text(text)


def same_size_same_mtime(root: Path) -> None:
    """The target edited in place with its size and mtime kept: only its ctime tells."""
    page = root / "domain/refunds.md"
    before = page.stat()
    page.write_text(page.read_text().replace("30 days", "31 days"))
    os.utime(page, ns=(before.st_atime_ns, before.st_mtime_ns))


CHANGES = [
    edit_target,
    retarget,
    retarget_through_another_link,
    break_link,
    replace_by_a_copy,
    same_size_same_mtime,
]


@pytest.mark.parametrize("change", CHANGES, ids=[c.__name__ for c in CHANGES])
def test_every_change_of_a_link_or_its_target_falls_through(
    knowledge: tuple[Settings, list[str]], change: Callable[[Path], None]
) -> None:
    settings, argv = knowledge
    root = linked(settings)
    stamped(settings, argv)
    assert stamp.answer(argv, ENV) is not None
    change(root)
    assert stamp.answer(argv, ENV) is None


def test_a_link_loop_writes_no_stamp(knowledge: tuple[Settings, list[str]]) -> None:
    """A loop is skipped by the scan ("symbolic link loop"); no stamp can describe it."""
    settings, argv = knowledge
    root = settings.source
    assert root is not None
    (root / "domain/loop.md").symlink_to("loop.md")
    with Briefd(settings, embedder=None) as api:
        report = api.index()
    assert [s.reason for s in report.skipped] == ["symbolic link loop; not served"]
    args = stamp.index_args(argv)
    assert args is not None
    refresh_stamp(settings, args, ENV, Path.cwd(), racy_ns=0)
    assert not Path(stamp.stamp_path(str(settings.db))).exists()
