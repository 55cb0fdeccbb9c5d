"""Real git repositories with real dates and authors, for drift (T4): a knowledge checkout and
code repositories, committed to at the times a test names."""

from __future__ import annotations

from pathlib import Path

from briefd.settings import Settings, load_settings
from tests.sync.gitrepo import git, stage

__all__ = ["git"]


def settings_for(tmp_path: Path, knowledge: Repo, *repos: object) -> Settings:
    """Settings reading ``knowledge`` and checking drift against ``repos`` (BM25 only)."""
    return load_settings(
        config=None,
        env={},
        overrides={
            "db": str(tmp_path / "data" / "index.db"),
            "source": str(knowledge.path),
            "embeddings.enabled": False,
            "code.repos": list(repos),
        },
    )


def identity(author: str, at: str) -> dict[str, str]:
    """git's environment for a commit by ``author`` at ``at``."""
    email = author.lower().replace(" ", ".") + "@example.com"
    return {
        "GIT_AUTHOR_NAME": author,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": author,
        "GIT_COMMITTER_EMAIL": email,
        "GIT_AUTHOR_DATE": at,
        "GIT_COMMITTER_DATE": at,
    }


class Repo:
    """A work tree on branch ``main`` that commits files as a named author at a given time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True)
        git(path, "init", "--quiet", "--initial-branch=main")

    def commit(
        self,
        files: dict[str, str | None],
        message: str,
        at: str,
        author: str = "Dev One",
    ) -> str:
        """Write (text) or delete (None) files and commit them at ``at`` (ISO 8601 with a
        zone); the new commit's hash."""
        stage(self.path, files)
        git(self.path, "commit", "--quiet", "-m", message, env=identity(author, at))
        return git(self.path, "rev-parse", "HEAD")

    def merge(self, branch: str, message: str, at: str, author: str = "Merger") -> str:
        """Merge ``branch`` into the checked-out branch with a merge commit (``--no-ff``, as
        GitHub's "Create a merge commit") made at ``at``; the merge's hash."""
        git(
            self.path,
            "merge",
            "--quiet",
            "--no-ff",
            "-m",
            message,
            branch,
            env=identity(author, at),
        )
        return git(self.path, "rev-parse", "HEAD")

    def bare_copy(self, path: Path) -> Path:
        """A bare clone of this repository (a remote to point a git URL at); pushes go to it
        with :meth:`push_to`."""
        git(self.path.parent, "clone", "--quiet", "--bare", str(self.path), str(path))
        git(self.path, "remote", "add", "origin", str(path))
        return path

    def push_to(self, force: bool = False) -> None:
        git(self.path, "push", "--quiet", *(["--force"] if force else []), "origin", "main")


RETRY_DOC = """
---
title: Retry policy
refs: ["services/payment/**"]
---
# Retry policy

## Soft declines
A soft decline is retried three times with exponential backoff.
"""

LEDGER_DOC = """
---
title: Ledger postings
refs: ["services/ledger/**", "tools/close/*.py"]
---
# Ledger postings

## Double entry
Every posting has a debit and a credit.
"""
