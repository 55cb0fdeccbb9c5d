"""The code repositories drift is checked against (T4, ADR-0007), read-only.

A ``code.repos`` entry is a local git checkout — read in place at its branch (default: HEAD),
never fetched, reset or written to; so is a bare repository's path — or a git URL, cloned bare
(no working tree; blobs left on the server when it allows) into ``code.checkout_dir`` and
fetched like the knowledge source.
Reading is incremental: given the commit read last, only the commits since are read; after a
force-push that dropped it, the branch is read again from the start.

A commit is dated by when it arrived on the branch: the committer time of the commit on the
branch's first-parent line that brought it — its own for a commit made, squashed, rebased or
fast-forwarded onto the branch, its merge's for one merged with a merge commit (a feature
branch's commit dated before a document's last change but merged after it is drift). Merge
commits themselves are not kept: the commits they bring are.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path

from briefd.errors import ConfigError, SourceError
from briefd.project import LOCAL_DIR
from briefd.settings import CodeRepo, Settings
from briefd.settings.raw import is_git_url
from briefd.settings.trust import code_read_problem
from briefd.sources import git

# committer dates printed in UTC by git itself (TZ=UTC), as the index stores times
LOG_FORMAT = "--format=%x1e%H%x1f%P%x1f%cd%x1f%an%x1f%s"
LOG_DATE = "--date=format-local:%Y-%m-%dT%H:%M:%S+00:00"
CLOCK_SKEW_DAYS = 30  # how much older than its parent a commit may be dated and hide nothing


@dataclass(frozen=True, slots=True)
class CodeCommit:
    """A commit on a code repository's branch (``repo``: its name in ``code.repos``): when it
    arrived on the branch (ISO 8601 UTC; see the module's doc), author name, subject, and
    paths it touched (relative to the repository root)."""

    repo: str
    hash: str
    at: str
    author: str
    subject: str
    paths: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Logged:
    """A commit as ``git log`` printed it (``at``: its own committer time) and its parents."""

    commit: CodeCommit
    parents: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ReadResult:
    head: str  # the branch's commit now
    commits: tuple[CodeCommit, ...]  # newest first
    complete: bool  # the whole branch was read (first read, or the last commit was dropped)


def repo_name(repo: CodeRepo) -> str:
    """``name``, else the last part of the URL or of the directory's full path (``.``, the
    directory the settings are in, is named by its folder) without ``.git``; briefd's own
    ``.briefd`` folder (``.`` in ``.briefd/briefd.yaml``, read in the repository git finds
    above it) by the repository's folder."""
    if repo.name:
        return repo.name
    where = repo.source if is_git_url(repo.source) else str(_named_folder(repo.source))
    tail = where.rstrip("/").replace(":", "/").split("/")[-1]
    return tail.removesuffix(".git") or "code"


def _named_folder(source: str) -> Path:
    """The folder a local repository is named by: its own, or for briefd's ``.briefd``
    folder, the work tree holding it (found by its ``.git``), else the project folder."""
    path = local_path(source)
    if path.name != LOCAL_DIR or (path / ".git").exists():
        return path
    return next((f for f in path.parents if (f / ".git").exists()), path.parent)


def local_path(source: str) -> Path:
    """A local checkout's full path, ``.`` and ``..`` resolved (symlinks kept): the same
    repository whether its settings were found in the current directory or named."""
    return Path(os.path.normpath(Path(source).expanduser().absolute()))


def configured(settings: Settings) -> list[CodeSource]:
    """The configured code repositories; names must be unique."""
    sources = [CodeSource(settings, repo) for repo in settings.code.repos]
    names = [s.name for s in sources]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(
            f"code.repos: two repositories are named '{twice[0]}'; give each a distinct 'name'"
        )
    return sources


class CodeSource:
    """One ``code.repos`` entry."""

    def __init__(self, settings: Settings, repo: CodeRepo) -> None:
        self.repo = repo
        self.name = repo_name(repo)
        self.url = repo.source if is_git_url(repo.source) else None
        self.remote = git.remote(self.url or "")  # a token in the URL: never on git's command line
        self.timeout = settings.sync.git_timeout
        base = settings.code.checkout_dir or settings.db.parent / "code"
        self.root = base / f"{self.name}.git" if self.url else local_path(repo.source)
        self.refused = code_read_problem(settings.project_named, repo.source)

    @property
    def location(self) -> str:
        """How to name it in reports (credentials in URLs hidden)."""
        return git.redact(self.url) if self.url else str(self.root)

    def fail(self, problem: str) -> SourceError:
        return SourceError(f"code repo '{self.name}' ({self.location}): {problem}")

    def prepare(self, fetch: bool) -> Path:
        """The git directory to read: a URL is cloned the first time and fetched when
        ``fetch``; a local checkout (or a bare repository's path) is only checked. One only a
        project's own settings file names, outside it, may be refused
        (:func:`briefd.settings.trust.code_read_problem`), before anything is read."""
        if self.refused is not None:
            raise SourceError(self.refused)
        if self.url is None:
            try:
                located = git.toplevel(self.root, self.timeout) if self.root.is_dir() else None
            except SourceError as exc:  # a checkout another user owns
                raise self.fail(str(exc)) from None
            if located is not None:
                return located[0]
            if self.root.is_dir() and git.is_git_dir(self.root, self.timeout):
                return self.root  # a bare repository (a server's /srv/git/app.git): read as is
            raise self.fail(
                "not a git checkout or repository; give a git work tree's path, a bare "
                "repository's or a git URL"
            )
        try:
            if not (self.root / "HEAD").is_file():
                self._clone()
            elif fetch:
                self._fetch()
        except SourceError as exc:
            raise self._explained(exc) from None
        return self.root

    def _explained(self, exc: SourceError) -> SourceError:
        """A clone's or fetch's failure named as this repository's, its hint pointing at
        ``code.repos`` (git's hints name the knowledge source's ``source`` and
        ``sync.branch``)."""
        said = str(exc)
        if said.startswith(f"code repo '{self.name}' "):
            return exc
        if git.MISSING_BRANCH_HINT in said or ("Remote branch" in said and "not found" in said):
            try:
                branch = self.branch(self.root)
            except SourceError:
                branch = self.repo.branch or "HEAD"
            return self.fail(f"the remote has no branch '{branch}'; check code.repos[].branch")
        said = said.replace(git.SOURCE_URL_HINT, "check the repository URL in code.repos[].source")
        return self.fail(said)

    def _clone(self) -> None:
        assert self.url is not None
        try:
            git.clone_folder(self.root, "code.checkout_dir")
        except SourceError as exc:
            raise self.fail(str(exc)) from None
        temporary = self.root.with_name(f".{self.root.name}.cloning")
        shutil.rmtree(temporary, ignore_errors=True)
        shutil.rmtree(self.root, ignore_errors=True)  # not a bare clone: a killed one
        args = ["clone", "--bare", "--quiet", "--no-tags", "--filter=blob:none"]
        if self.repo.branch:
            args += ["--branch", self.repo.branch]
        into = git.private_folder(temporary).absolute()
        command = [*self.remote.helper, *args, "--", self.remote.url, str(into)]
        try:
            git.run(command, self.root.parent, self.timeout, env=self.remote.env)
        except SourceError:  # nothing of a failed clone is left beside the clones
            shutil.rmtree(temporary, ignore_errors=True)
            raise
        git.keep_helper(temporary, self.remote, self.timeout)
        temporary.rename(self.root)

    def _fetch(self) -> None:
        assert self.url is not None
        root, timeout = self.root, self.timeout
        # other processes may fetch this clone at the same time (a server's sync, `briefd drift`):
        # only a lock older than a git's timeout is a killed git's
        git.remove_stale_locks(root, older_than=timeout)
        if git.run(["remote", "get-url", "origin"], root, timeout) != self.remote.url:
            git.run(["remote", "set-url", "origin", self.remote.url], root, timeout)
        git.keep_helper(root, self.remote, timeout)
        branch = self.branch(root)
        refspec = f"+refs/heads/{branch}:refs/heads/{branch}"
        fetch = ["-c", "gc.auto=0", "fetch", "--quiet", "--prune", "--no-tags", "origin"]
        git.run([*fetch, refspec], root, timeout, env=self.remote.env)

    def branch(self, root: Path) -> str:
        """The configured branch, else the clone's default branch (a local checkout: HEAD)."""
        if self.repo.branch:
            return self.repo.branch
        if self.url is None:
            try:
                return git.run(["rev-parse", "--abbrev-ref", "HEAD"], root, self.timeout)
            except SourceError:  # git's "ambiguous argument 'HEAD'": nothing committed
                raise self.fail("has no commit yet; drift is read once it has some") from None
        return git.run(["symbolic-ref", "--short", "HEAD"], root, self.timeout)

    def read(self, root: Path, branch: str, last: str | None, since: str | None) -> ReadResult:
        """Commits on ``branch`` not read before: after ``last`` when it is still on the
        branch, else all of them (not older than ``since``, ISO 8601, when given)."""
        try:
            head = git.rev_parse(root, branch, self.timeout)
        except SourceError:
            raise self.fail(f"has no branch '{branch}'; check code.repos[].branch") from None
        if last == head:
            return ReadResult(head, (), complete=False)
        if last and self._is_ancestor(root, last, head):
            return ReadResult(head, self._log(root, [f"{last}..{head}"]), complete=False)
        if since is None:
            return ReadResult(head, self._log(root, [head]), complete=True)
        start = self._arrived_before(root, head, skew_margin(since))
        read = self._log(root, [head, f"^{start}"] if start else [head])
        return ReadResult(head, tuple(c for c in read if c.at >= since), complete=True)

    def _arrived_before(self, root: Path, head: str, since: str) -> str | None:
        """The newest commit on ``head``'s first-parent line dated before ``since`` (None:
        none is): what it holds arrived before, the rest after, whatever their own dates."""
        out = git.run(
            ["log", "--first-parent", f"--since={since}", "--format=%H %P", head, "--"],
            root,
            self.timeout,
        )
        lines = out.splitlines()
        if not lines:
            return head  # the branch's newest commit is older: nothing arrived since
        oldest = lines[-1].split()
        return oldest[1] if len(oldest) > 1 else None  # the root commit: all of it is new

    def _is_ancestor(self, root: Path, old: str, new: str) -> bool:
        try:
            git.run(["merge-base", "--is-ancestor", old, new], root, self.timeout)
        except SourceError:
            return False  # not an ancestor, or no longer in the repository (force-push)
        return True

    def _log(self, root: Path, selection: Sequence[str]) -> tuple[CodeCommit, ...]:
        args = ["log", "--no-renames", LOG_FORMAT, LOG_DATE, "--name-only", "-z"]
        env = {"TZ": "UTC", **self.remote.env}  # a blob a partial clone lacks is fetched
        out = git.run_bytes([*args, *selection, "--"], root, self.timeout, env=env)
        logged = parse_log(out.decode("utf-8", "replace"), self.name)
        cut = self._shallow_boundary(root)
        return tuple(replace(c, paths=()) if c.hash in cut else c for c in arrived(logged))

    def _shallow_boundary(self, root: Path) -> set[str]:
        """The commits a shallow clone has without their parents: git shows each as adding
        every file of its tree, so what it really changed is unknown (no paths, no drift)."""
        listed = root / git.run(["rev-parse", "--git-path", "shallow"], root, self.timeout)
        try:
            return set(listed.read_text(encoding="ascii").split())
        except FileNotFoundError:  # a complete history
            return set()
        except (OSError, UnicodeDecodeError) as exc:
            raise self.fail(f"cannot read {listed}: {exc}") from None


def files_at(root: Path, head: str, timeout: float) -> tuple[str, ...]:
    """The paths of the files at commit ``head`` of the repository ``root`` (trees only: a
    partial clone fetches no blob for it)."""
    out = git.run_bytes(["ls-tree", "-r", "--name-only", "-z", head], root, timeout)
    return tuple(p for p in out.decode("utf-8", "replace").split("\0") if p)


def skew_margin(since: str) -> str:
    """``since`` moved ``CLOCK_SKEW_DAYS`` back, for ``git log --since`` (the commits older
    than ``since`` are dropped after): git stops walking a branch at the first commit dated
    before ``--since``, so one committed on a slow clock (older than its parent) would hide
    the commits before it that are still inside the window."""
    try:
        start = datetime.fromisoformat(since) - timedelta(days=CLOCK_SKEW_DAYS)
    except OverflowError:  # as far back as datetime goes: the window already is
        return since
    return start.isoformat(timespec="seconds")


def arrived(logged: Sequence[Logged]) -> list[CodeCommit]:
    """The commits of ``logged`` (``git log`` output, newest first; merges left out) each dated
    by when it arrived: walking the first-parent line from the oldest, every commit a line
    commit reaches that no older one did arrived with it. Parents outside ``logged`` were
    there before (read earlier, or older than the read); each commit is visited once."""
    if not logged:
        return []
    by_hash = {entry.commit.hash: entry for entry in logged}
    line = []
    step: str | None = logged[0].commit.hash  # git log starts at the branch's commit
    while step in by_hash:
        line.append(step)
        parents = by_hash[step].parents
        step = parents[0] if parents else None
    when: dict[str, str] = {}
    for tip in reversed(line):
        at = by_hash[tip].commit.at
        stack = [tip]
        while stack:
            current = stack.pop()
            if current in when or current not in by_hash:
                continue
            when[current] = max(at, by_hash[current].commit.at)  # a slow clock delays nothing
            stack.extend(by_hash[current].parents)
    return [
        replace(e.commit, at=when.get(e.commit.hash, e.commit.at))
        for e in logged
        if len(e.parents) < 2
    ]


def parse_log(text: str, repo: str) -> tuple[Logged, ...]:
    """Commits from ``git log`` with :data:`LOG_FORMAT`, :data:`LOG_DATE`, ``--name-only -z``
    (each record: the header, NUL, a newline, then NUL-terminated paths; a merge lists
    none)."""
    commits = []
    for record in text.split("\x1e")[1:]:
        header, _, names = record.partition("\0")
        fields = header.split("\x1f", 4)
        if len(fields) < 5:
            continue
        paths = tuple(filter(None, names.removeprefix("\n").split("\0")))
        commit = CodeCommit(repo, fields[0], fields[2], fields[3], fields[4], paths)
        commits.append(Logged(commit, tuple(fields[1].split())))
    return tuple(commits)
