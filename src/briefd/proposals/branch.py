"""A proposal branch built with git plumbing: fetch the remote head into a private ref, write
the new blob, build the tree in a temporary index file, ``commit-tree`` one commit on top of
the head, push it as a new branch. HEAD, the work tree and the checkout's own index file are
never touched, so serving (and a sync running at the same time) carries on undisturbed.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from briefd.errors import BriefdError, ProposalConflictError, ProposalError, ProposalRemoteError
from briefd.folders import alive
from briefd.proposals.form import in_form
from briefd.proposals.moved import moved_to, refuse_moved_away
from briefd.proposals.uncommitted import refuse_uncommitted
from briefd.proposals.upstream import start_example
from briefd.sources import git
from briefd.sources.knowledge import GitTarget

# --refmap= : only the private ref; a fetch naming a remote would also move its remote-tracking
# ref (refs/remotes/origin/main), which a sync of briefd's clone updates at the same time
FETCH = ("-c", "gc.auto=0", "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--refmap=")
SCRATCH = "refs/briefd/scratch/"  # + <pid>-<proposal id>: the remote head a proposal builds on
SCRATCH_DIR = "briefd-proposal-"  # + <pid>-…: a temporary folder for a proposal's git index


@dataclass(frozen=True, slots=True)
class Author:
    name: str
    email: str

    def env(self) -> dict[str, str]:
        return {
            "GIT_AUTHOR_NAME": self.name,
            "GIT_AUTHOR_EMAIL": self.email,
            "GIT_COMMITTER_NAME": self.name,
            "GIT_COMMITTER_EMAIL": self.email,
        }


@dataclass(frozen=True, slots=True)
class Pushed:
    base_commit: str
    commit: str
    doc_path: str  # as committed: spelled as the base spells it (:func:`_as_on_base`)


@dataclass(frozen=True, slots=True)
class Change:
    """What a proposal commits: one document's new content, the message and the author, and
    the commit whose text the content was written against: the one the index serves ('':
    unknown, an index no run recorded it in; the checkout's HEAD stands in)."""

    doc_path: str
    content: str
    message: str
    author: Author
    read_at: str = ""
    # proposals waiting for review: (document as committed, commit, how to name it, its
    # branch, and where that branch is: "local" or "remote", which counts while it is there)
    earlier: tuple[tuple[str, str, str, str, str], ...] = ()
    served_hash: str = ""  # the SHA-256 of the document's file as the index read it ('': none)


def push_proposal(target: GitTarget, branch: str, change: Change, timeout: float) -> Pushed:
    """Create ``branch`` on the remote with exactly one commit on top of its base branch."""
    _refuse_detached(target, timeout)
    _forget_abandoned(target, timeout)
    scratch = f"{SCRATCH}{os.getpid()}-{branch.rsplit('-', 1)[-1]}"
    try:
        fetch = [*FETCH, target.remote, f"+refs/heads/{target.base_branch}:{scratch}"]
        git.run(fetch, target.repo, timeout, ProposalRemoteError, target.env)
        base = _git(["rev-parse", "--verify", f"{scratch}^{{commit}}"], target, timeout)
        commit, doc_path = _commit(target, base, change, timeout, pushed=True)
        # to the URL, not the remote's name: no remote-tracking ref appears in the checkout
        url = _git(["remote", "get-url", "--push", target.remote], target, timeout)
        _push(target, url, branch, commit, timeout)
    except ProposalRemoteError as exc:
        raise _unproposed(_remote_named(exc, target)) from None
    finally:
        _forget(target, scratch, timeout)
    return Pushed(base, commit, doc_path)


UNPROPOSED = "nothing was proposed and nothing kept (no branch, no record): send the same proposal"
# what a remote that is away (not one that refuses, nor a setting) has git say
_AWAY = (git.UNREACHABLE_HINT, git.TIMED_OUT, "hung up unexpectedly", "early EOF", "Connection")


def _unproposed(failed: ProposalRemoteError) -> ProposalRemoteError:
    """``failed``, saying what became of the proposal when the remote could not be reached,
    hung up or named a setting to fix (a push its timeout ended may still land, and says so;
    the remote's own refusals say so already): an agent told only "git fetch failed" could
    not tell whether it was kept, queued or lost."""
    said = str(failed)
    if NOT_PROPOSED in said or MAY_LAND in said:
        return failed
    when = "once the remote answers" if any(m in said for m in _AWAY) else "once that is fixed"
    return ProposalRemoteError(f"{said}; {UNPROPOSED} again {when}")


def _remote_named(failed: ProposalRemoteError, target: GitTarget) -> ProposalRemoteError:
    """``failed``, its advice pointed at what the proposal used: a checkout's remote (its
    `source` is a folder, not the URL that failed), and the base branch a remote lacks, which
    is no ``sync.branch`` when none is set (a git URL source's default branch renamed since
    the last sync, a checkout's upstream branch deleted)."""
    said = str(failed)
    branch, remote = target.base_branch, target.remote
    if git.MISSING_BRANCH_HINT in said:
        return ProposalRemoteError(
            said.replace(
                git.MISSING_BRANCH_HINT,
                f"the remote has no branch '{branch}' (any more): when its default branch was "
                "renamed, a sync follows the new one (unless sync.branch names the old): run "
                "briefd sync (or POST /api/admin/sync) and propose again; else set sync.branch "
                "to a branch it has"
                if target.configured
                else f"the remote '{remote}' has no branch '{branch}' (the checkout's upstream "
                "branch, or sync.branch): set sync.branch to the branch of "
                f"'{remote}' proposals start from",
            )
        )
    if target.configured or git.SOURCE_URL_HINT not in said:
        return failed
    return ProposalRemoteError(
        said.replace(
            git.SOURCE_URL_HINT,
            f"check the URL of the remote '{remote}' of the knowledge checkout "
            f"{target.repo} (git remote get-url {remote}), or set proposals.push to "
            "another remote, or false to keep proposals as local branches",
        )
    )


def _refuse_detached(target: GitTarget, timeout: float) -> None:
    """Refuse to push from a checkout whose HEAD is detached (no ``sync.branch``): it names no
    branch of the remote to build on and open a pull request into (git's own refusal, "couldn't
    find remote ref refs/heads/HEAD", blamed a ``sync.branch`` nobody had set)."""
    if target.base_branch != "HEAD":
        return
    head = _git(["rev-parse", "--short", "HEAD"], target, timeout)
    example = start_example(target, target.remote, timeout)
    raise ProposalError(
        f"the knowledge checkout {target.repo} has a detached HEAD (at {head}), so a pushed "
        f"proposal has no branch of '{target.remote}' to start from; set sync.branch to the "
        f"branch proposals start from ({example}), or check out a branch; nothing was proposed"
    )


def _push(target: GitTarget, url: str, branch: str, commit: str, timeout: float) -> None:
    """Push ``commit`` as ``branch``. A push that failed (its timeout ended it) may still have
    landed: the branch found at ``commit`` on the remote is a push that worked; one that timed
    out may land later, as may one whose remote then did not answer the check, and the error
    names the branch so that nobody proposes it twice."""
    try:
        git.run(
            ["push", "--quiet", url, f"{commit}:refs/heads/{branch}"],
            target.repo,
            timeout,
            ProposalRemoteError,
            target.env,  # a URL source's credentials, for the helper of briefd's clone
        )
    except ProposalRemoteError as exc:
        asked = False  # whether the remote answered whether it has the branch
        with contextlib.suppress(BriefdError):
            listed = git.run(
                ["ls-remote", url, f"refs/heads/{branch}"],
                target.repo,
                timeout,
                ProposalRemoteError,
                target.env,
            )
            if listed.split("\t", 1)[0] == commit:
                return
            asked = True
        if git.PRE_PUSH in str(exc):  # the repository's own hook, not the remote
            raise ProposalError(
                f"{exc}; the hook is the knowledge repository's own ({target.repo}), run on "
                f"briefd's push of {branch} (one Markdown file changed): make it pass such a "
                "push, or set proposals.push: false to keep proposals as local branches; "
                "nothing was proposed"
            ) from None
        if git.DECLINED in str(exc):  # the remote's rules or hook, not its reachability
            raise ProposalRemoteError(f"{exc}; {REJECTED.format(branch=branch)}") from None
        if asked and git.CREDENTIALS_HINT in str(exc):  # they fetched, and listed the branches
            raise ProposalRemoteError(str(exc).replace(git.CREDENTIALS_HINT, READ_ONLY)) from None
        if git.TIMED_OUT not in str(exc) and asked:
            raise _clash(exc, branch, "the remote") from None
        unsure = "" if asked else "the remote did not answer whether it has the branch, so "
        raise ProposalRemoteError(
            f"{exc}; {unsure}{MAY_LAND}: look for branch {branch} there before proposing this "
            "change again"
        ) from None


NOT_PROPOSED = "nothing was proposed"
MAY_LAND = "the push may still reach the remote"
REJECTED = (
    "the remote's rules (branch protection, a ruleset, a pre-receive hook) refused the branch "
    "{branch} for the reason above: where they restrict which branches may be created, let "
    "briefd's credentials create such branches or set proposals.branch_prefix to a prefix they "
    "allow; nothing was proposed"
)
READ_ONLY = (
    "the remote let these credentials fetch but refused them the push: they may read the "
    "repository, not write to it; give them write access (on GitHub a fine-grained token's "
    "Contents: Read and write, a classic token's repo scope, a deploy key's write access)"
)
_CLASH = re.compile(r"'refs/heads/([^']+)' exists; cannot create")


def _clash(failed: ProposalError, branch: str, where: str) -> ProposalError:
    """``failed``, or what it means when git cannot create ``branch`` beside a branch named
    like one of its folders (``main`` for ``main/1a2b3c4d``; or the other way round)."""
    found = _CLASH.search(str(failed))
    if found is None:
        return failed
    return ProposalError(  # a setting to change, not a remote to wait for
        f"the proposal branch {branch} cannot be made: {where} has a branch "
        f"'{found.group(1)}', and git cannot hold a branch and a folder of branches of one "
        "name; set proposals.branch_prefix to a prefix no branch's name starts (default "
        "'briefd/proposal-'); nothing was proposed"
    )


def local_proposal(target: GitTarget, branch: str, change: Change, timeout: float) -> Pushed:
    """Create ``branch`` in the repository itself, one commit on top of its local base branch
    (HEAD when there is none); nothing is fetched or pushed."""
    base = _local_base(target, timeout)
    commit, doc_path = _commit(target, base, change, timeout)
    try:
        _git(["update-ref", f"refs/heads/{branch}", commit, ""], target, timeout)  # never replaces
    except ProposalError as exc:
        raise _clash(exc, branch, "the repository") from None
    return Pushed(base, commit, doc_path)


def _local_base(target: GitTarget, timeout: float) -> str:
    """The commit of the base branch in the repository: its own branch, else the remote's
    branch it has fetched; HEAD for a detached checkout (its branch is called HEAD). A branch
    it has neither of (a mistyped ``sync.branch``) is refused: the proposal would be recorded
    on a base it never started from."""
    name = target.base_branch
    refs = (f"refs/heads/{name}", f"refs/remotes/{target.remote}/{name}")
    for ref in (*refs, "HEAD") if name == "HEAD" else refs:
        with contextlib.suppress(ProposalError):
            return _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], target, timeout)
    listed = _git(["for-each-ref", "--format=%(refname:short)", "refs/heads/"], target, timeout)
    branches = ", ".join(listed.split()[:10]) or "none"
    raise ProposalError(
        f"the base branch '{name}' (sync.branch) is not a branch of the checkout {target.repo} "
        f"(its branches: {branches}); check sync.branch, or leave it unset to use the branch "
        "checked out"
    )


def _commit(
    target: GitTarget, base: str, change: Change, timeout: float, pushed: bool = False
) -> tuple[str, str]:
    """One commit on ``base`` whose tree differs from it only in the changed document; the
    commit and the document's path as committed (``pushed``: it goes to the remote)."""
    doc_path = _as_on_base(target, base, change.doc_path, timeout)
    _refuse_links(target, base, doc_path, timeout)
    current = _refuse_stale(target, base, doc_path, change.read_at, timeout)
    served_at = _served_at(target, change.read_at, timeout)
    refuse_uncommitted(target, served_at, current, doc_path, change.served_hash, pushed, timeout)
    if current is None:  # a new document: unless one was moved away from its path
        refuse_moved_away(target, base, doc_path, change.content, timeout)
    content = (
        change.content
        if current is None
        else in_form(_text(target, current, timeout), change.content)
    )
    blob = _git(["hash-object", "-w", "--stdin"], target, timeout, stdin=content.encode("utf-8"))
    tree = _tree_with(target, base, target.prefix + doc_path, blob, timeout)
    if tree == _git(["rev-parse", f"{base}^{{tree}}"], target, timeout):
        raise ProposalError(
            f"new_content is identical to {doc_path} on {target.base_branch} "
            f"({base[:12]}); nothing to propose"
        )
    _refuse_repeat(target, doc_path, blob, change.earlier, timeout)
    commit = _git(
        ["commit-tree", tree, "-p", base, "-F", "-"],
        target,
        timeout,
        env=change.author.env(),
        stdin=change.message.encode("utf-8"),
    )
    return commit, doc_path


def _as_on_base(target: GitTarget, base: str, doc_path: str, timeout: float) -> str:
    """``doc_path`` spelled as ``base`` spells its folders and file: a name that is the same
    text composed otherwise (``ö`` as ``o`` + U+0308, as macOS writes names) is the existing
    one, not a second beside it; a new name is composed (NFC)."""
    spelled: list[str] = []
    parts = doc_path.split("/")
    for depth, part in enumerate(parts, start=1):
        folder = target.prefix + "".join(f"{p}/" for p in spelled)
        args = ["ls-tree", "-z", base, *(["--", folder] if folder else [])]
        kinds = dict(_entry(line) for line in _ls(args, target, timeout))
        names = list(kinds)
        if part not in kinds:
            wanted = unicodedata.normalize("NFC", part)
            same = [n for n in names if unicodedata.normalize("NFC", n) == wanted]
            if not same:
                _refuse_case_twin(target, doc_path, "/".join([*spelled, wanted]), names)
            part = same[0] if same else wanted
        spelled.append(part)
        _refuse_kind(target, doc_path, "/".join(spelled), kinds.get(part), depth == len(parts))
    return "/".join(spelled)


def _entry(line: str) -> tuple[str, str]:
    """(name, kind: blob, tree, commit, or link) of one ``ls-tree -z`` entry."""
    meta, _, path = line.partition("\t")
    mode, kind, _ = meta.split(" ", 2)
    return path.rsplit("/", 1)[-1], "link" if mode == "120000" else kind


def _refuse_kind(
    target: GitTarget, doc_path: str, spelled: str, kind: str | None, last: bool
) -> None:
    """Refuse a document path that is a folder (or a submodule) on the base branch, or lies
    under a file there: git's own refusal named neither ('bad file', 'appears as both a file
    and as a directory')."""
    if kind in (None, "link", "blob" if last else "tree"):
        return  # a symbolic link: refused by _refuse_links, with where it points
    branch = target.base_branch
    if last:
        what = "a folder" if kind == "tree" else "a submodule"
        raise ProposalError(
            f"doc_path '{doc_path}' is {what} on {branch}, not a document; name a Markdown "
            "file (in it, or another path)"
        )
    what = "a file" if kind == "blob" else "a submodule"
    raise ProposalError(
        f"doc_path '{doc_path}' lies under '{spelled}', which is {what} on {branch}; "
        "use another path"
    )


def _refuse_case_twin(target: GitTarget, doc_path: str, new: str, names: list[str]) -> None:
    """Refuse a new name that differs only in case from one beside it on the base branch
    (``Retry.md`` next to ``retry.md``): checkouts on macOS and Windows cannot hold both, and
    git leaves them with one file for two that it reports changed for good."""
    folded = new.rsplit("/", 1)[-1].lower()
    twin = next((n for n in names if unicodedata.normalize("NFC", n).lower() == folded), None)
    if twin is None:
        return
    existing = "/".join([*new.split("/")[:-1], twin])
    raise ProposalError(
        f"doc_path '{doc_path}' differs only in case from '{existing}' on "
        f"{target.base_branch}, and checkouts on macOS and Windows cannot hold both; use "
        f"'{existing}' to change that one, or another name"
    )


def _ls(args: list[str], target: GitTarget, timeout: float) -> list[str]:
    listed = _git(args, target, timeout, env={"GIT_LITERAL_PATHSPECS": "1"})
    return [n for n in listed.split("\0") if n]


def _refuse_links(target: GitTarget, base: str, doc_path: str, timeout: float) -> None:
    """Refuse a document that is a symbolic link on ``base``, or lies under one: the commit
    would replace the link by a file (the document it points to unchanged) or fail."""
    parts = doc_path.split("/")
    paths = [target.prefix + "/".join(parts[: i + 1]) for i in range(len(parts))]
    literal = {"GIT_LITERAL_PATHSPECS": "1"}  # a name with * or ? is not a pattern
    listed = _git(["ls-tree", "-z", base, "--", *paths], target, timeout, env=literal)
    for entry in filter(None, listed.split("\0")):
        meta, _, path = entry.partition("\t")
        mode, _, sha = meta.split(" ", 2)
        if mode != "120000" or path not in paths:  # ls-tree also lists what lies under them
            continue
        link = path.removeprefix(target.prefix)
        points = _git(["cat-file", "blob", sha], target, timeout)
        what = "is" if link == doc_path else f"lies under {link}, which is"
        raise ProposalError(
            f"doc_path '{doc_path}' {what} a symbolic link on {target.base_branch} (to "
            f"'{points}'); propose the change to the file at its own path"
        )


def _refuse_stale(
    target: GitTarget, base: str, doc_path: str, read_at: str, timeout: float
) -> str | None:
    """Refuse a change to a document that differs on ``base`` from the one the served index
    was read at (``read_at``; else HEAD): the new content was written against the served text,
    and committed on ``base`` it would silently undo a teammate's change not indexed yet (a
    ``git pull`` the next index run has not read, a sync whose index run failed). The
    document's blob on ``base`` (None: a new document)."""
    path = target.prefix + doc_path
    served_at = _served_at(target, read_at, timeout)
    served, on_base = _blob(target, served_at, path, timeout), _blob(target, base, path, timeout)
    if served == on_base:
        return on_base
    last = _git(["log", "-1", "--format=%h by %an: %s", base, "--", path], target, timeout)
    what = "was deleted" if on_base is None else "was created" if served is None else "changed"
    if not _contains(target, base, served_at, timeout):  # a checkout serving another branch
        head = _git(["rev-parse", "--short", served_at], target, timeout)
        raise ProposalConflictError(
            f"{doc_path} differs on {target.base_branch} (last changed {last}) from the "
            f"commit this server serves ({head}, which {target.base_branch} does not contain); "
            f"new_content would carry that difference into {target.base_branch}: push or merge "
            f"the checkout's commits, or check out {target.base_branch}, then read the document "
            "again and propose on its current text"
        )
    moved = moved_to(target, served_at, base, path, timeout) if on_base is None else None
    if moved is not None:
        raise ProposalConflictError(
            f"{doc_path} was moved to {moved} on {target.base_branch} since the commit this "
            f"server serves ({last}); new_content would bring the old path back beside it: "
            f"bring the knowledge up to date and indexed ({UP_TO_DATE}), read the document at "
            f"its new path (get_document {moved}) and propose the change there"
        )
    raise ProposalConflictError(
        f"{doc_path} {what} on {target.base_branch} since the commit this server serves "
        f"({last}); new_content would undo that change: bring the knowledge up to date and "
        f"indexed ({UP_TO_DATE}), read the document again (get_document) and propose on its "
        "current text"
    )


UP_TO_DATE = (
    "a git URL source: briefd sync or POST /api/admin/sync; a checkout: git pull, then briefd "
    "index or POST /api/admin/sync"
)


def _served_at(target: GitTarget, read_at: str, timeout: float) -> str:
    """The commit the served index was read at, as the repository knows it (HEAD when no
    index run recorded one); refused when the repository no longer has it."""
    if not read_at:
        return "HEAD"
    try:
        return _git(["rev-parse", "--verify", "--quiet", f"{read_at}^{{commit}}"], target, timeout)
    except ProposalError:
        raise ProposalConflictError(
            f"the commit this server's index was read at ({read_at[:12]}) is no longer in the "
            f"repository (the branch was force-pushed, or the clone made again), so briefd cannot "
            "tell what changed since: index the knowledge again (briefd sync, briefd index or "
            "POST /api/admin/sync), read the document again (get_document) and propose on its "
            "current text"
        ) from None


def _contains(target: GitTarget, commit: str, ancestor: str, timeout: float) -> bool:
    try:
        _git(["merge-base", "--is-ancestor", ancestor, commit], target, timeout)
    except ProposalError:  # exit 1: it is not
        return False
    return True


def _blob(target: GitTarget, commit: str, path: str, timeout: float) -> str | None:
    """The blob ``path`` has in ``commit`` (None: no such file there)."""
    literal = {"GIT_LITERAL_PATHSPECS": "1"}
    listed = _git(["ls-tree", "-z", commit, "--", path], target, timeout, env=literal)
    for entry in filter(None, listed.split("\0")):
        meta, _, name = entry.partition("\t")
        if name == path:
            return meta.split(" ", 2)[2]
    return None


def same_text(target: GitTarget, commits: tuple[str, str], doc_path: str, timeout: float) -> bool:
    """Whether the two proposals' ``commits`` hold the same text for ``doc_path`` (no: either
    is a commit this repository lacks, or holds no such file)."""
    try:
        blobs = {_blob(target, commit, target.prefix + doc_path, timeout) for commit in commits}
    except ProposalError:
        return False
    return len(blobs) == 1 and None not in blobs


def _text(target: GitTarget, blob: str, timeout: float) -> str:
    raw = git.run_bytes(["cat-file", "blob", blob], target.repo, timeout, ProposalError)
    return raw.decode("utf-8", "replace")


def _refuse_repeat(
    target: GitTarget,
    doc_path: str,
    blob: str,
    earlier: tuple[tuple[str, str, str, str, str], ...],
    timeout: float,
) -> None:
    """Refuse the very text a proposal still waiting for review already proposes for the
    document (an agent that retried, or asked twice): a second branch and pull request would
    only split the review. One whose commit this repository lacks (another replica pushed it)
    is fetched from its branch on the remote first; one whose branch was deleted (a local one,
    or a pushed one gone from the remote: asked only when the text is the same) is not
    compared."""
    for path, commit, named, branch, where in earlier:
        if path != doc_path:
            continue
        proposed = None
        with contextlib.suppress(ProposalError):  # a commit or a branch this repository lacks
            if where == "local":
                _git(["rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"], target, timeout)
            elif not _has_commit(target, commit, timeout):
                fetch = [*FETCH, target.remote, f"refs/heads/{branch}"]
                git.run(fetch, target.repo, timeout, ProposalError, target.env)
            proposed = _blob(target, commit, target.prefix + doc_path, timeout)
        if proposed == blob and where == "remote" and not _on_remote(target, branch, timeout):
            continue
        if proposed == blob:
            raise ProposalError(
                f"new_content for {doc_path} is what {named} already proposes; nothing was "
                "proposed: that one waits for review (merge or close it, or propose other text)"
            )


def _on_remote(target: GitTarget, branch: str, timeout: float) -> bool:
    """Whether the remote still has ``branch`` (True when it does not answer: the push that
    would follow fails alike, and a second branch must not be made unseen)."""
    ask = ["ls-remote", "--heads", target.remote, f"refs/heads/{branch}"]
    try:
        return bool(git.run(ask, target.repo, timeout, ProposalRemoteError, target.env))
    except ProposalError:
        return True


def _has_commit(target: GitTarget, commit: str, timeout: float) -> bool:
    try:
        _git(["cat-file", "-e", f"{commit}^{{commit}}"], target, timeout)
    except ProposalError:
        return False
    return True


def _tree_with(target: GitTarget, base: str, repo_path: str, blob: str, timeout: float) -> str:
    _remove_abandoned_folders()
    with tempfile.TemporaryDirectory(prefix=f"{SCRATCH_DIR}{os.getpid()}-") as scratch_dir:
        env = {"GIT_INDEX_FILE": str(Path(scratch_dir) / "index")}
        _git(["read-tree", base], target, timeout, env=env)
        _git(
            ["update-index", "--add", "--cacheinfo", f"100644,{blob},{repo_path}"],
            target,
            timeout,
            env=env,
        )
        return _git(["write-tree"], target, timeout, env=env)


def _forget(target: GitTarget, ref: str, timeout: float) -> None:
    # a leftover private ref is harmless; the next proposal uses a new name
    with contextlib.suppress(BriefdError):
        git.run(["update-ref", "-d", ref], target.repo, timeout, ProposalError)


def _remove_abandoned_folders() -> None:
    """Remove the temporary folders of proposals whose process was killed (the pid in their
    name is gone)."""
    for folder in Path(tempfile.gettempdir()).glob(f"{SCRATCH_DIR}*-*"):
        pid = folder.name.removeprefix(SCRATCH_DIR).partition("-")[0]
        if pid.isdigit() and int(pid) > 0 and not alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _forget_abandoned(target: GitTarget, timeout: float) -> None:
    """Remove the private refs of proposals whose process was killed (its pid, in the ref's
    name, is gone): they would keep old base commits from git's garbage collection."""
    with contextlib.suppress(BriefdError):
        listed = _git(["for-each-ref", "--format=%(refname)", SCRATCH], target, timeout)
        for ref in listed.splitlines():
            pid = ref.removeprefix(SCRATCH).partition("-")[0]
            if pid.isdigit() and int(pid) > 0 and not alive(int(pid)):
                _forget(target, ref, timeout)


def _git(
    args: list[str],
    target: GitTarget,
    timeout: float,
    env: dict[str, str] | None = None,
    stdin: bytes | None = None,
) -> str:
    return git.run(args, target.repo, timeout, ProposalError, env, stdin)
