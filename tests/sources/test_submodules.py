"""Git submodules in the knowledge repository (K3): briefd's clone of a git URL source checks
none out, and a teammate's checkout may not have; their documents are then not served, and
the run says so instead of leaving an empty folder unexplained."""

from __future__ import annotations

from pathlib import Path

from briefd.api import Briefd
from tests.sync.conftest import git_settings
from tests.sync.gitrepo import GLOSSARY, RETRY, Remote, git

ALLOW_FILE = ("-c", "protocol.file.allow=always")  # git refuses file:// submodules otherwise


def with_submodules(tmp_path: Path) -> Remote:
    """A knowledge remote holding domain/retry.md and two submodules: domain/shared (notes the
    team shares with others) and vendor/tool (outside every scope)."""
    shared = Remote(tmp_path / "shared")
    shared.push({"glossary.md": GLOSSARY}, "shared notes")
    tool = Remote(tmp_path / "tool")
    tool.push({"README.md": "# Tool\n"}, "a tool")
    knowledge = Remote(tmp_path / "knowledge")
    knowledge.push({"domain/retry.md": RETRY}, "first knowledge")
    for url, path in ((shared.url, "domain/shared"), (tool.url, "vendor/tool")):
        git(knowledge.work, *ALLOW_FILE, "submodule", "--quiet", "add", url, path)
    git(knowledge.work, "commit", "--quiet", "-m", "submodules")
    git(knowledge.work, "push", "--quiet", "origin", "main")
    return knowledge


def test_a_submodule_the_clone_does_not_check_out_is_reported(tmp_path: Path) -> None:
    """The sync said '1 documents' and nothing of domain/shared/, which holds the glossary."""
    remote = with_submodules(tmp_path)
    with Briefd(git_settings(tmp_path, remote.url), embedder=None) as api:
        report = api.sync()
    assert report.error is None and report.index is not None
    assert report.index.added == ("domain/retry.md",)
    assert [s.path for s in report.index.skipped] == ["domain/shared/"]
    reason = report.index.skipped[0].reason
    assert reason.startswith("a git submodule that is not checked out, so its documents are not")
    assert reason.endswith("`git submodule update --init` brings them in")


def test_a_checked_out_submodule_is_indexed_without_a_word(tmp_path: Path) -> None:
    remote = with_submodules(tmp_path)
    checkout = tmp_path / "mine"
    git(
        tmp_path, *ALLOW_FILE, "clone", "--quiet", "--recurse-submodules", remote.url, str(checkout)
    )
    with Briefd(git_settings(tmp_path, str(checkout)), embedder=None) as api:
        report = api.index()
    assert report.added == ("domain/retry.md", "domain/shared/glossary.md")
    assert [s.path for s in report.skipped] == ["vendor/tool/README.md"]  # outside every scope
