"""What the configured ``source`` is, and bringing it up to date (K3).

Three kinds: a ``clone`` briefd owns (``source`` is a git URL; cloned next to the index and
reset hard to the remote branch on every sync), a ``checkout`` (a directory inside a git work
tree: read in place, never fetched or reset) and a plain ``directory``.
"""

from __future__ import annotations

import fcntl
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from briefd.errors import SourceError
from briefd.settings import Settings
from briefd.sync import git

SourceKind = Literal["clone", "checkout", "directory"]

NO_SOURCE = (
    "no knowledge source configured; set 'source:' in briefd.yaml (a directory or a git URL), "
    "set BRIEFD_SOURCE, or pass --source DIR"
)


FETCH = ("-c", "gc.auto=0", "fetch", "--quiet", "--prune", "--no-tags")


@dataclass(frozen=True, slots=True)
class KnowledgeSource:
    kind: SourceKind
    root: Path  # the directory that is indexed
    url: str | None = None  # clones only
    branch: str | None = None  # configured branch (None: the remote's default)

    @property
    def label(self) -> str:
        """How to name the source in reports and on the dashboard (credentials hidden)."""
        return git.redact(self.url) if self.url else str(self.root)


def resolve(settings: Settings, source: Path | None = None) -> KnowledgeSource:
    """The configured source (or the ``source`` directory given), without touching it."""
    if source is None and settings.sync.remote:
        return KnowledgeSource(
            "clone", checkout_dir(settings), settings.sync.remote, settings.sync.branch
        )
    root = source or settings.source
    if root is None:
        raise SourceError(NO_SOURCE)
    if not root.is_dir():
        raise SourceError(f"knowledge source {root} is not a directory; pass --source DIR")
    if git.toplevel(root, settings.sync.git_timeout) is not None:
        return KnowledgeSource("checkout", root, None, settings.sync.branch)
    return KnowledgeSource("directory", root)


def checkout_dir(settings: Settings) -> Path:
    return settings.sync.checkout_dir or settings.db.parent / "repo"


@contextmanager
def sync_lock(settings: Settings) -> Iterator[None]:
    """One sync (or clone) at a time across processes sharing this index (an ``flock`` that
    the kernel releases when a process dies, so a killed sync never blocks the next)."""
    path = settings.db.parent / "sync.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_clone(source: KnowledgeSource, timeout: float) -> None:
    """Clone the remote when briefd has no usable clone yet (call under :func:`sync_lock`).

    git clones into a temporary directory that is renamed into place, so a clone killed
    half-way leaves nothing that looks like a checkout."""
    assert source.url is not None
    root = source.root
    if (root / ".git").is_dir():
        return
    if root.exists() and any(root.iterdir()):
        raise SourceError(
            f"{root} exists and is not a git clone; move it away or set sync.checkout_dir"
        )
    temporary = root.with_name(f".{root.name}.cloning")
    shutil.rmtree(temporary, ignore_errors=True)
    root.parent.mkdir(parents=True, exist_ok=True)
    args = ["clone", "--quiet", "--no-tags", "--origin", "origin"]
    if source.branch:
        args += ["--branch", source.branch]
    git.run([*args, "--", source.url, str(temporary)], root.parent, timeout)
    if root.exists():
        root.rmdir()
    temporary.rename(root)


def tracked_branch(source: KnowledgeSource, timeout: float) -> str:
    """The remote branch an owned clone follows: ``sync.branch`` or the remote's default."""
    if source.branch:
        return source.branch
    try:
        ref = git.run(["symbolic-ref", "--short", "refs/remotes/origin/HEAD"], source.root, timeout)
        return ref.removeprefix("origin/")
    except SourceError:
        return git.run(["rev-parse", "--abbrev-ref", "HEAD"], source.root, timeout)


def update_clone(source: KnowledgeSource, timeout: float) -> str:
    """Fetch the branch (following force-pushes) and reset the clone hard onto it; the
    commit it now has checked out."""
    ensure_clone(source, timeout)
    root = source.root
    git.remove_stale_locks(root)
    assert source.url is not None
    if git.run(["remote", "get-url", "origin"], root, timeout) != source.url:
        git.run(["remote", "set-url", "origin", source.url], root, timeout)  # `source` moved
    branch = tracked_branch(source, timeout)
    remote_ref = f"refs/remotes/origin/{branch}"
    git.run(
        [*FETCH, "origin", f"+refs/heads/{branch}:{remote_ref}"],
        root,
        timeout,
    )
    git.run(["checkout", "--quiet", "--force", "-B", branch, remote_ref], root, timeout)
    git.run(["reset", "--quiet", "--hard", remote_ref], root, timeout)
    git.run(["clean", "--quiet", "-ffdx"], root, timeout)
    return git.rev_parse(root, "HEAD", timeout)


def head_commit(source: KnowledgeSource, timeout: float) -> str | None:
    """The checked-out commit of a clone or checkout (None: plain directory, or no commit)."""
    if source.kind == "directory":
        return None
    try:
        return git.rev_parse(source.root, "HEAD", timeout)
    except SourceError:
        return None


def open_clone(settings: Settings) -> Path:
    """The owned clone's directory, cloned first when it is missing (startup, ``briefd
    index``); it is not fetched here: that is what a sync does."""
    source = resolve(settings)
    with sync_lock(settings):
        ensure_clone(source, settings.sync.git_timeout)
    return source.root
