"""Real git repositories for tests: a bare remote in tmp_path and a teammate's clone that
commits and pushes to it."""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

IDENTITY = {
    "GIT_AUTHOR_NAME": "Teammate",
    "GIT_AUTHOR_EMAIL": "teammate@example.com",
    "GIT_COMMITTER_NAME": "Teammate",
    "GIT_COMMITTER_EMAIL": "teammate@example.com",
    "GIT_TERMINAL_PROMPT": "0",
}


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **IDENTITY, **(env or {})},
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout.strip()


class Remote:
    """``bare`` is the team's remote (``url`` for briefd); ``work`` a teammate's clone."""

    def __init__(self, root: Path) -> None:
        self.bare = root / "remote.git"
        self.work = root / "teammate"
        self.bare.mkdir(parents=True)
        git(self.bare, "init", "--quiet", "--bare", "--initial-branch=main")
        git(root, "clone", "--quiet", str(self.bare), str(self.work))
        git(self.work, "checkout", "--quiet", "-B", "main")

    @property
    def url(self) -> str:
        return self.bare.as_uri()

    def push(self, files: dict[str, str | None], message: str = "update knowledge") -> str:
        """Write (text) or delete (None) files, commit, push; the new commit."""
        stage(self.work, files)
        git(self.work, "commit", "--quiet", "-m", message)
        git(self.work, "push", "--quiet", "origin", "main")
        return self.head()

    def rewrite(self, files: dict[str, str], message: str = "rewritten history") -> str:
        """Replace the whole history with one new root commit holding ``files``; force-push."""
        git(self.work, "checkout", "--quiet", "--orphan", "rewrite")
        git(self.work, "rm", "-r", "--quiet", "--cached", ".")
        for child in self.work.iterdir():
            if child.name != ".git":
                _remove(child)
        for rel, text in files.items():
            path = self.work / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
            git(self.work, "add", rel)
        git(self.work, "commit", "--quiet", "-m", message)
        git(self.work, "branch", "--quiet", "-M", "main")
        git(self.work, "push", "--quiet", "--force", "origin", "main")
        return self.head()

    def head(self, ref: str = "main") -> str:
        return git(self.bare, "rev-parse", ref)


def stage(work: Path, files: dict[str, str | None]) -> None:
    """Write (dedented text) or delete (None) files in the work tree ``work`` and stage them."""
    for rel, text in files.items():
        path = work / rel
        if text is None:
            git(work, "rm", "--quiet", rel)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        git(work, "add", rel)


def _remove(path: Path) -> None:
    if path.is_dir():
        for child in path.iterdir():
            _remove(child)
        path.rmdir()
    else:
        path.unlink()


RETRY = """
---
title: Retry policy
---
# Retry policy

## Soft declines
A soft decline is retried three times with exponential backoff.
"""

GLOSSARY = """
# Glossary

## Settlement
Settlement is when the acquirer pays the merchant.
"""
