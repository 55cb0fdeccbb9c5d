"""Absolute code paths read from the root of the git work tree holding them (B1, R5)."""

from __future__ import annotations

from pathlib import Path

from briefd.sources.worktree import from_work_trees


def test_absolute_paths_are_read_from_their_work_trees_root(tmp_path: Path) -> None:
    shop, other = tmp_path / "shop", tmp_path / "other"
    (shop / ".git").mkdir(parents=True)
    (other / "svc").mkdir(parents=True)
    (other / ".git").write_text("gitdir: /elsewhere/.git/worktrees/other\n")  # a linked tree
    (tmp_path / "link").symlink_to(shop)
    given = [
        f"{shop}/src/payments/refund.py",  # need not exist yet: an agent is about to write it
        f"  {shop}/src/payments/ ",  # a folder keeps its last slash
        f"{other}/svc/../svc/api.go",
        f"{tmp_path}/link/src/a.py",  # through a symbolic link: the resolved path's tree
        f"{tmp_path}/nowhere/src/a.py",  # in no work tree here: as written
        "src/ledger/x.go",
        "C:\\shop\\src\\a.py",
    ]
    assert from_work_trees(given) == (
        "src/payments/refund.py",
        "src/payments/",
        "svc/api.go",
        "src/a.py",
        f"{tmp_path}/nowhere/src/a.py",
        "src/ledger/x.go",
        "C:\\shop\\src\\a.py",
    )
    assert from_work_trees(["src/a.py", "lib/"]) == ("src/a.py", "lib/")
