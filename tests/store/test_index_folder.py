"""X0, O3: the folder briefd makes for an index is its user's alone and ignored by git, so the
query log is not readable by other users of the machine and an index inside the knowledge
repository is never committed with it."""

from __future__ import annotations

import stat
from pathlib import Path

from briefd.api import Briefd
from briefd.retrieval.search import SearchRequest
from briefd.settings import Settings, with_overrides
from tests.conftest import WriteFiles
from tests.sync.gitrepo import git


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_an_index_made_inside_the_knowledge_repository_is_private_and_ignored(
    settings: Settings, write_files: WriteFiles
) -> None:
    root = write_files({"domain/retry.md": "# Retry\n\nRetry soft declines three times.\n"})
    git(root, "init", "--quiet", "--initial-branch=main")
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", "knowledge")
    folder = root / ".briefd"
    with Briefd(with_overrides(settings, {"db": str(folder / "briefd.db")}), embedder=None) as api:
        api.index()
        api.search(SearchRequest("soft declines", mode="bm25"))
        assert _mode(folder / "briefd.db-wal") == 0o600  # SQLite gives it the file's mode
    assert (_mode(folder), _mode(folder / "briefd.db")) == (0o700, 0o600)
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
    git(root, "add", "-A")
    assert git(root, "diff", "--cached", "--name-only") == ""
    (folder / "briefd.yaml").write_text("search:\n  top_k: 4\n", encoding="utf-8")
    assert git(root, "status", "--porcelain", "--untracked-files=all") == "?? .briefd/briefd.yaml"


def test_a_folder_that_exists_is_left_as_it_is(settings: Settings, write_files: WriteFiles) -> None:
    write_files({"domain/retry.md": "# Retry\n\nRetry soft declines three times.\n"})
    folder = settings.db.parent
    folder.chmod(0o755)
    with Briefd(settings, embedder=None) as api:
        api.index()
    assert not (folder / ".gitignore").exists()
    assert (_mode(folder), _mode(settings.db)) == (0o755, 0o600)


def test_a_clone_of_a_repository_committing_its_briefd_yaml_keeps_the_index_out_of_git(
    settings: Settings, write_files: WriteFiles, tmp_path: Path
) -> None:
    """A team commits ``.briefd/briefd.yaml``: each clone gets the folder with that file
    alone (briefd's ``.gitignore`` ignores itself). The index made there showed in ``git
    status`` and went in with ``git add -A``, its query log with it."""
    root = write_files({"domain/retry.md": "# Retry\n\nRetry soft declines three times.\n"})
    (root / ".briefd").mkdir()
    (root / ".briefd" / "briefd.yaml").write_text("search:\n  top_k: 4\n", encoding="utf-8")
    git(root, "init", "--quiet", "--initial-branch=main")
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", "knowledge and the team's settings")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "--quiet", str(root), str(clone))
    folder = clone / ".briefd"
    db = {"db": str(folder / "briefd.db"), "source": str(clone)}
    with Briefd(with_overrides(settings, db), embedder=None) as api:
        api.index()
        api.search(SearchRequest("soft declines", mode="bm25"))
    assert git(clone, "status", "--porcelain", "--untracked-files=all") == ""
    git(clone, "add", "-A")
    assert git(clone, "diff", "--cached", "--name-only") == ""
    (folder / "briefd.yaml").write_text("search:\n  top_k: 6\n", encoding="utf-8")
    assert git(clone, "status", "--porcelain") == "M .briefd/briefd.yaml"
