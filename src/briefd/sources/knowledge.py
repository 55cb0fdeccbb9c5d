"""What the configured ``source`` is, and bringing it up to date (K3).

Three kinds, one interface (:class:`KnowledgeSource`): a :class:`Clone` briefd owns
(``source`` is a git URL; cloned next to the index and reset hard to the remote branch on
every sync), a :class:`Checkout` (a directory inside a git work tree: read in place, never
fetched or reset) and a plain :class:`Directory`. Callers ask the source what to do instead
of switching on its kind.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from briefd.errors import (
    BriefdError,
    ConfigError,
    ProposalConflictError,
    ProposalError,
    SourceError,
)
from briefd.folders import make_index_folder
from briefd.settings import Settings
from briefd.settings.trust import read_outside_problem
from briefd.sources import git, scan
from briefd.sources.history import History, document_history
from briefd.sources.scan import not_a_directory

SourceKind = Literal["clone", "checkout", "directory"]

NO_SOURCE = (
    "no knowledge source configured; pass --source DIR, set 'source:' in briefd.yaml, "
    "or set BRIEFD_SOURCE"
)


FETCH = ("-c", "gc.auto=0", "fetch", "--quiet", "--prune", "--no-tags")


@dataclass(frozen=True, slots=True)
class GitTarget:
    """Where a proposal goes: the repository to build it in and the remote branch it is on."""

    repo: Path
    prefix: str  # the knowledge root inside the repository ('' or 'docs/')
    remote: str
    base_branch: str
    configured: bool = False  # the remote is the configured source (a git URL), not a remote
    # that a user's own checkout happens to have
    env: Mapping[str, str] = field(default_factory=dict)  # its credentials, for git's helper


class KnowledgeSource(Protocol):
    """A knowledge source: where its files are and how it follows its upstream."""

    @property
    def kind(self) -> SourceKind: ...

    @property
    def root(self) -> Path:
        """The directory that is indexed."""
        ...

    @property
    def label(self) -> str:
        """How to name the source in reports and on the dashboard (credentials hidden)."""
        ...

    @property
    def versioned(self) -> bool:
        """A git repository: polling it for new commits makes sense."""
        ...

    def prepare(self) -> Path:
        """Make :attr:`root` exist (an owned clone is cloned on first use, not fetched)."""
        ...

    def update(self) -> str | None:
        """Bring the files up to date where briefd may (an owned clone: fetch and hard
        reset); the commit now checked out (None: no commit)."""
        ...

    def branch(self) -> str | None:
        """The branch the source follows (None: not known)."""
        ...

    def history(self) -> History | None:
        """When each document last changed (None: no git history)."""
        ...

    def push_target(self) -> tuple[GitTarget, str | None]:
        """Where proposals go, and the remote's URL (None: the checkout has no such remote);
        :class:`ProposalError` when the source cannot take one."""
        ...


def resolve(settings: Settings, source: Path | None = None) -> KnowledgeSource:
    """The configured source (or the ``source`` directory given), without touching it; one
    outside the project that only its own settings file names is refused
    (:func:`briefd.settings.trust.read_outside_problem`)."""
    if source is None:
        named = settings.project_named
        if problem := read_outside_problem(named, settings.source, settings.sync.remote):
            raise ConfigError(problem)
    if source is None and settings.sync.remote:
        return Clone(settings, settings.sync.remote)
    root = source or settings.source
    if root is None:
        raise SourceError(NO_SOURCE)
    if not root.is_dir():
        raise not_a_directory(root)
    not_utf8_name(root)
    if git.toplevel(root, settings.sync.git_timeout) is not None:
        return Checkout(settings, root)
    if git.is_git_dir(root, settings.sync.git_timeout):
        raise SourceError(GIT_DIR.format(root=root, url=root.absolute().as_uri()))
    return Directory(settings, root)


def not_utf8_name(root: Path) -> None:
    """A folder whose path is not UTF-8 (a name made on a Latin-1 system, here or in a folder
    above, or where a link leads) is refused before it is read, as a file of the knowledge
    with such a name is skipped: the index keeps its source as UTF-8 text, and the run failed
    with a UnicodeEncodeError traceback."""
    real = os.path.realpath(root)
    try:
        real.encode("utf-8")
    except UnicodeEncodeError as exc:
        shown = os.fsencode(real).decode("utf-8", "backslashreplace")
        byte = real[exc.start].encode("utf-8", "surrogateescape")[0]
        raise SourceError(
            f"knowledge source {shown}: its path is not valid UTF-8 text (byte {byte:#04x} at "
            f"character {exc.start + 1}); rename that folder"
        ) from None


GIT_DIR = (
    "knowledge source {root} is a bare git repository (or a .git folder): it holds git's "
    "objects, not the documents; set source to its URL, {url}, and briefd clones it, or to "
    "a checkout's folder"
)


EMPTY_REMOTE = (
    "the repository {url} is empty (no branch, no commit yet); push the knowledge to it "
    "(domain/, conventions/, projects/<name>/) and sync again"
)
SYNC_LOCK = "sync.lock"  # beside the index: held by a sync, a clone, a rebuild (sync_lock)
CLONE_LOCK = "clone.lock"  # beside the index: held by proposals running git (clone_in_use)
OWNED_KEY = "briefd.clone"  # set in every clone briefd makes: a sync may reset and clean it


def checkout_dir(settings: Settings) -> Path:
    return settings.sync.checkout_dir or settings.db.parent / "repo"


@contextmanager
def sync_lock(settings: Settings) -> Iterator[None]:
    """One sync (or clone) at a time across processes sharing this index, or its clone (an
    ``flock`` that the kernel releases when a process dies, so a killed sync never blocks the
    next)."""
    with ExitStack() as held:
        for path in _lock_files(settings, SYNC_LOCK):
            held.enter_context(_flock(path, fcntl.LOCK_EX))
        yield


@contextmanager
def clone_in_use(settings: Settings) -> Iterator[None]:
    """Held (shared, by any number at once) while a proposal runs git in the knowledge
    repository, which it does without the sync lock: a sync then removes only lock files no
    live git can own (:meth:`Clone.update`). Released by the kernel when a process dies."""
    with ExitStack() as held:
        for path in _lock_files(settings, CLONE_LOCK):
            held.enter_context(_flock(path, fcntl.LOCK_SH))
        yield


@contextmanager
def clone_unused(settings: Settings) -> Iterator[bool]:
    """True (and held until the block ends) when no proposal holds :func:`clone_in_use`;
    never waits for one."""
    with ExitStack() as held:
        for path in _lock_files(settings, CLONE_LOCK):
            make_index_folder(path.parent)
            handle = held.enter_context(path.open("a"))
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # a proposal is running git
                yield False
                return
            held.callback(fcntl.flock, handle, fcntl.LOCK_UN)
        yield True


def _lock_files(settings: Settings, name: str) -> list[Path]:
    """The lock file ``name`` beside the index and, for a clone in a ``sync.checkout_dir``
    set by hand, which two indexes may share, one beside that folder and one in its git
    folder too: one index's sync must not reset the tree another's sync is indexing, nor
    clear its git's locks, nor clone into the folder another's first sync is cloning into
    (no git folder to lock yet). The one beside is skipped where it cannot be written (a
    volume's root: no first clone could be made there either)."""
    paths = [settings.db.parent / name]
    shared = settings.sync.checkout_dir
    if settings.sync.remote and shared is not None:
        if os.access(shared.parent, os.W_OK):
            paths.append(shared.parent / f".{shared.name}.briefd-{name}")
        if (shared / ".git").is_dir():
            paths.append(shared / ".git" / f"briefd-{name}")
    return paths


@contextmanager
def _flock(path: Path, operation: int) -> Iterator[None]:
    make_index_folder(path.parent)  # the index's folder
    with path.open("a") as handle:
        fcntl.flock(handle, operation)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class Directory:
    """A plain directory: read as it is, no history, no remote."""

    kind: SourceKind = "directory"
    versioned = False

    def __init__(self, settings: Settings, root: Path) -> None:
        self.settings = settings
        self.root = root

    @property
    def label(self) -> str:
        return str(self.root)

    @property
    def timeout(self) -> float:
        return self.settings.sync.git_timeout

    def prepare(self) -> Path:
        return self.root

    def update(self) -> str | None:
        return self.head_commit()

    def head_commit(self) -> str | None:
        return None

    def branch(self) -> str | None:
        return self.settings.sync.branch

    def history(self) -> History | None:
        return document_history(self.root, self.timeout)

    def push_target(self) -> tuple[GitTarget, str | None]:
        raise ProposalError(
            f"the knowledge source {self.root} is a plain directory, not a git repository; "
            "proposals become branches on a git remote: use a git URL or a git checkout as source"
        )


class Checkout(Directory):
    """A directory inside a user's git work tree: read in place, never fetched or reset."""

    kind: SourceKind = "checkout"
    versioned = True

    def head_commit(self) -> str | None:
        try:
            return git.rev_parse(self.root, "HEAD", self.timeout)
        except SourceError:
            return None

    def branch(self) -> str | None:
        """The branch checked out in the work tree, which is what is read (None: a detached
        HEAD, or the checkout is gone)."""
        try:
            return git.run(["symbolic-ref", "--quiet", "--short", "HEAD"], self.root, self.timeout)
        except SourceError:
            return None

    def push_target(self) -> tuple[GitTarget, str | None]:
        located = git.toplevel(self.root, self.timeout)
        assert located is not None  # resolve() said it is a checkout
        top, prefix = located
        remote, branch = _upstream(top, self.settings.sync.branch, self.timeout)
        return GitTarget(top, prefix, remote, branch), remote_url(top, remote, self.timeout)


class Clone(Checkout):
    """A clone of ``url`` that briefd owns, next to the index (or in ``sync.checkout_dir``)."""

    kind: SourceKind = "clone"

    def __init__(self, settings: Settings, url: str) -> None:
        super().__init__(settings, checkout_dir(settings))
        self.url = url  # as configured: a token in it never reaches git's command line
        self.remote = git.remote(url)

    @property
    def label(self) -> str:
        return git.redact(self.url)

    def prepare(self) -> Path:
        with sync_lock(self.settings):
            self.ensure_clone()
        if self.head_commit() is None:  # cloned empty: "found no document" would blame the setup
            raise SourceError(EMPTY_REMOTE.format(url=self.label))
        return self.root

    def ensure_clone(self) -> None:
        """Clone the remote when briefd has no usable clone yet (call under :func:`sync_lock`).

        git clones into a temporary directory that is renamed into place, so a clone killed
        half-way leaves nothing that looks like a checkout."""
        root = self.root
        if (root / ".git").is_dir():
            self._check_owned()
            return
        git.clone_folder(root, "sync.checkout_dir")
        if root.exists() and any(root.iterdir()):
            raise SourceError(
                f"{root} exists and is not a git clone; move it away or set sync.checkout_dir"
            )
        temporary = root.with_name(f".{root.name}.cloning")
        shutil.rmtree(temporary, ignore_errors=True)
        args = ["clone", "--quiet", "--no-tags", "--origin", "origin"]
        if self.settings.sync.branch:
            args += ["--branch", self.settings.sync.branch]
        try:
            into = git.private_folder(temporary).absolute()
            command = [*self.remote.helper, *args, "--", self.remote.url, str(into)]
            git.run(command, root.parent, self.timeout, env=self.remote.env)
        except SourceError as exc:  # nothing of a failed clone is left beside the index
            shutil.rmtree(temporary, ignore_errors=True)
            raise self._explained(exc, self.settings.sync.branch) from None
        git.run(["config", OWNED_KEY, "true"], temporary, self.timeout)
        git.keep_helper(temporary, self.remote, self.timeout)
        if root.exists():
            root.rmdir()
        temporary.rename(root)

    def _check_owned(self) -> None:
        """Refuse a git checkout in ``sync.checkout_dir`` that briefd did not clone: every
        sync resets and cleans its clone, which would wipe someone's own work there. A clone
        marked as briefd's, the default folder beside the index, or one whose origin is the
        configured source (made before clones were marked) is briefd's, and is marked."""
        root, timeout = self.root, self.timeout
        try:
            if git.run(["config", "--get", OWNED_KEY], root, timeout) == "true":
                return
        except SourceError:  # not set: git exits 1
            pass
        try:
            origin = git.run(["remote", "get-url", "origin"], root, timeout)
        except SourceError:
            origin = None
        if self.settings.sync.checkout_dir is not None and origin not in (
            self.url,
            self.remote.url,
        ):
            raise SourceError(
                f"sync.checkout_dir {root} is a git checkout briefd did not make (origin "
                f"{git.redact(origin) if origin else 'none'}, not {self.label}); every sync "
                "resets and cleans briefd's clone, so it leaves this one alone: point "
                "sync.checkout_dir at an empty or new folder"
            )
        kept = _own_work(root, timeout) if self.settings.sync.checkout_dir is not None else ""
        if kept:  # someone's own clone of the source: a reset and clean would lose it
            raise SourceError(
                f"sync.checkout_dir {root} is a clone of {self.label} that briefd did not "
                f"make, holding {kept}; every sync resets and cleans briefd's clone, so it "
                "leaves this one alone: point sync.checkout_dir at an empty or new folder"
            )
        git.run(["config", OWNED_KEY, "true"], root, timeout)

    def branch(self) -> str:
        """The remote branch the clone follows: ``sync.branch`` or the remote's default."""
        if self.settings.sync.branch:
            return self.settings.sync.branch
        try:
            ref = git.run(
                ["symbolic-ref", "--short", "refs/remotes/origin/HEAD"], self.root, self.timeout
            )
            return ref.removeprefix("origin/")
        except SourceError:  # a clone of a repository that was empty: HEAD names an unborn branch
            return git.run(["symbolic-ref", "--short", "HEAD"], self.root, self.timeout)

    def update(self) -> str:
        """Fetch the branch (following force-pushes) and reset the clone hard onto it; the
        commit it now has checked out (call under :func:`sync_lock`)."""
        self.ensure_clone()
        root, timeout = self.root, self.timeout
        self._remove_stale_locks()
        if git.run(["remote", "get-url", "origin"], root, timeout) != self.remote.url:
            # `source` moved, or a clone made with the token in origin's URL: no longer kept
            git.run(["remote", "set-url", "origin", self.remote.url], root, timeout)
        git.keep_helper(root, self.remote, timeout)  # the token added to the URL, or dropped
        branch = self.branch()
        try:
            self._fetch(branch)
            moved = self._default_moved(branch)  # a new default, the old branch still there
        except SourceError as exc:
            moved = None if git.TIMED_OUT in str(exc) else self._default_moved(branch)
            if moved is None:
                raise self._explained(exc, branch) from None
        if moved is not None:
            branch = moved
            self._fetch(branch)
            head = f"refs/remotes/origin/{branch}"
            git.run(["symbolic-ref", "refs/remotes/origin/HEAD", head], root, timeout)
        remote_ref = f"refs/remotes/origin/{branch}"
        git.run(["checkout", "--quiet", "--force", "-B", branch, remote_ref], root, timeout)
        git.run(["reset", "--quiet", "--hard", remote_ref], root, timeout)
        git.run(["clean", "--quiet", "-ffdx"], root, timeout)
        return git.rev_parse(root, "HEAD", timeout)

    def _remove_stale_locks(self) -> None:
        """Lock files a killed git left (call under :func:`sync_lock`): all of them while no
        proposal runs git here; else only those older than any git briefd runs may live."""
        settings = self.settings
        with clone_unused(settings) as unused:
            oldest_live = max(settings.sync.git_timeout, settings.proposals.git_timeout)
            git.remove_stale_locks(self.root, None if unused else oldest_live)

    def _fetch(self, branch: str) -> None:
        refspec = f"+refs/heads/{branch}:refs/remotes/origin/{branch}"
        git.run([*FETCH, "origin", refspec], self.root, self.timeout, env=self.remote.env)

    def _default_moved(self, followed: str) -> str | None:
        """The remote's default branch, when briefd follows the default (no ``sync.branch``)
        and it is no longer ``followed``: renamed (master → main), another branch made the
        default (the old one kept), or ``source`` moved to a repository with another one.
        None otherwise, also when the remote's HEAD names a branch it does not have."""
        if self.settings.sync.branch:
            return None
        try:  # origin/HEAD is only set by the clone: ask the remote again
            ask = ["ls-remote", "--symref", "origin", "HEAD"]
            answer = git.run(ask, self.root, self.timeout, env=self.remote.env)
        except SourceError:
            return None
        lines = answer.splitlines()  # ref: refs/heads/main<TAB>HEAD, then <sha><TAB>HEAD
        first = lines[0] if lines else ""
        if not first.startswith("ref: refs/heads/") or len(lines) < 2:
            return None
        now = first.removeprefix("ref: refs/heads/").split("\t", 1)[0]
        return now if now and now != followed else None

    def _explained(self, failed: SourceError, branch: str | None = None) -> SourceError:
        """``failed`` (a clone or fetch), or what it means when the remote has no branch at all
        (a repository created empty, which git reports as a missing branch or HEAD) or not
        ``branch``: its branches, and which setting picks one. A remote that did not answer
        in time is not asked again: that would wait as long, and say nothing new."""
        if git.TIMED_OUT in str(failed):
            return failed
        address = scan.address_without_scheme(self.root.parent / self.url)
        if address and git.SOURCE_URL_HINT in str(failed):  # git read it as a folder
            return SourceError(
                f"{failed}: {address} has no scheme, so git read it as a folder; write it as "
                f"a URL (https://{address}, or git@{address.replace('/', ':', 1)} for SSH)"
            )
        try:
            ask = [*self.remote.helper, "ls-remote", "--heads", "--", self.remote.url]
            heads = git.run(ask, None, self.timeout, env=self.remote.env)
        except SourceError:
            return failed
        if not heads:
            return SourceError(EMPTY_REMOTE.format(url=self.label))
        names = [line.split("\trefs/heads/", 1)[-1] for line in heads.splitlines()]
        if branch is None or branch in names:
            return failed
        return SourceError(missing_branch(self.label, branch, names, self.settings.sync.branch))

    def push_target(self) -> tuple[GitTarget, str | None]:
        if not (self.root / ".git").is_dir():
            self.prepare()
        self._refuse_moved()
        target = GitTarget(self.root, "", "origin", self.branch(), True, self.remote.env)
        return target, self.remote.url

    def _refuse_moved(self) -> None:
        """A proposal is built on what the clone follows: after ``source`` moved, and before a
        sync has followed it (``serve --no-index``), that is the old repository, which is no
        longer configured, and the index still serves its text."""
        origin = git.run(["remote", "get-url", "origin"], self.root, self.timeout)
        if git.bare_url(origin) != git.bare_url(self.remote.url):
            raise ProposalConflictError(
                f"source is {self.label}, but briefd's clone, and the index it serves, still "
                f"follow {git.redact(origin)}: run `briefd sync` (or start `briefd serve` "
                f"without --no-index) so that the index reads {self.label}, then propose "
                "again; nothing was proposed"
            )


def _own_work(root: Path, timeout: float) -> str:
    """What a hard reset and ``git clean -ffdx`` would lose in the checkout ``root``: commits
    on no branch of origin, and changed, untracked or ignored files ('' when nothing: a clone
    briefd made before it marked them, which every sync had reset and cleaned)."""
    try:
        ahead = int(
            git.run(["rev-list", "--count", "HEAD", "--not", "--remotes=origin"], root, timeout)
        )
    except (SourceError, ValueError):  # no commit yet
        ahead = 0
    status = ["status", "--porcelain", "--untracked-files=all", "--ignored"]
    files = len(git.run(status, root, timeout).splitlines())
    held = [f"{ahead} commit(s) on no branch of origin"] if ahead else []
    held += [f"{files} changed, untracked or ignored file(s)"] if files else []
    return " and ".join(held)


def missing_branch(label: str, branch: str, names: list[str], configured: str | None) -> str:
    """Why a sync of ``branch`` found nothing on the remote ``label``, whose branches are
    ``names``: ``sync.branch`` names another, or (``configured`` None) the remote's HEAD names a
    branch it lacks, as a bare repository made with `git init --bare` before its first push of
    another branch does (its HEAD still names the default of the git that made it)."""
    listed = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    if configured:
        return (
            f"the branch {branch} (sync.branch) is not on {label}, whose branches are {listed}; "
            "set sync.branch to the one to follow"
        )
    best = "main" if "main" in names else names[0]
    return (
        f"{label} names {branch} as its default branch (its HEAD) but has no such branch; "
        f"its branches are {listed}: set sync.branch: {best} (or BRIEFD_SYNC__BRANCH={best}), "
        f"or point the remote's HEAD at it (git symbolic-ref HEAD refs/heads/{best} in the bare "
        "repository)"
    )


def _upstream(top: Path, configured: str | None, timeout: float) -> tuple[str, str]:
    try:
        upstream = git.run(
            ["rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}"], top, timeout
        )
    except BriefdError:
        upstream = ""
    remote, _, branch = upstream.partition("/")
    if configured:
        return remote or "origin", configured
    if branch:
        return remote, branch
    try:
        return "origin", git.run(["rev-parse", "--abbrev-ref", "HEAD"], top, timeout)
    except BriefdError:
        raise ProposalError(
            f"the knowledge checkout {top} has no commit on a branch yet; commit the knowledge "
            "first (proposals start from a branch)"
        ) from None


def remote_url(top: Path, remote: str, timeout: float) -> str | None:
    """The URL of ``remote`` in the repository ``top`` (None: there is no such remote)."""
    try:
        return git.run(["remote", "get-url", remote], top, timeout)
    except BriefdError:
        return None
