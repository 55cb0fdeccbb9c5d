"""Where a document went when git moved it (``git mv``): named to an agent that proposes a
change at its old path, which would otherwise bring the old document back beside the moved
one (T1)."""

from __future__ import annotations

import difflib

from briefd.errors import ProposalConflictError, ProposalError
from briefd.markdown.frontmatter import split_front_matter
from briefd.sources import git
from briefd.sources.knowledge import GitTarget

HOPS = 8  # a document moved again and again: the moves followed to its path on the base
SAME_DOCUMENT = 0.5  # git's own rename threshold (-M50%): this alike, it is that document
_LITERAL = {"GIT_LITERAL_PATHSPECS": "1"}  # a name with * or ? is not a pattern


def moved_to(target: GitTarget, served_at: str, base: str, path: str, timeout: float) -> str | None:
    """Where git sees ``path`` (deleted on ``base`` since ``served_at``) renamed to, as the
    knowledge names it (None: deleted, not moved)."""
    return _renamed(target, served_at, base, path, timeout)


def refuse_moved_away(
    target: GitTarget, base: str, doc_path: str, content: str, timeout: float
) -> None:
    """Refuse a new document at ``doc_path`` when ``base``'s history moved a document away
    from that path (the served index already knows only the new path) and ``content`` is that
    document, edited: an agent that read it before the move would recreate it at its old
    path beside the moved one. A different text there is a new document, and passes."""
    found = _moved_away(target, base, target.prefix + doc_path, timeout)
    if found is None:
        return
    new, commit = found
    now = _text(target, base, target.prefix + new, timeout)
    if now is None or not _alike(now, content):
        return
    said = _git(["log", "-1", "--format=%h by %an: %s", commit], target, timeout)
    raise ProposalConflictError(
        f"{doc_path} was moved to {new} on {target.base_branch} ({said}), and new_content is "
        f"that document, edited: committed at {doc_path} it would bring the old path back "
        f"beside it; read the document at its new path (get_document {new}) and propose the "
        f"change there (a different document at {doc_path} is proposed as a new one)"
    )


def _moved_away(target: GitTarget, base: str, path: str, timeout: float) -> tuple[str, str] | None:
    """The path on ``base`` (as the knowledge names it) that the document last at ``path``
    was moved to, and the commit that moved it there first; None when no move took it away
    (the path never existed, or its last change deleted it), or its last path is gone too."""
    first: str | None = None
    for _ in range(HOPS):
        args = ["log", "-1", "--first-parent", "--format=%H", base, "--", path]
        last = _git(args, target, timeout, env=_LITERAL)
        if not last:
            return None
        if not _has_parent(target, last, timeout):  # the root commit created it
            return None
        new = _renamed(target, f"{last}^1", last, path, timeout)
        if new is None:
            return None
        first = first or last
        if _text(target, base, target.prefix + new, timeout) is not None:
            return new, first
        path = target.prefix + new
    return None


def _renamed(target: GitTarget, before: str, after: str, path: str, timeout: float) -> str | None:
    listed = _git(
        ["diff", "-z", "--name-status", "-M", "--diff-filter=R", before, after], target, timeout
    ).split("\0")
    for at in range(0, len(listed) - 2, 3):  # R<score>, old path, new path
        if listed[at].startswith("R") and listed[at + 1] == path:
            return listed[at + 2].removeprefix(target.prefix)
    return None


def _has_parent(target: GitTarget, commit: str, timeout: float) -> bool:
    parents = _git(["rev-list", "--parents", "-n", "1", commit], target, timeout)
    return len(parents.split()) > 1


def _text(target: GitTarget, commit: str, path: str, timeout: float) -> str | None:
    """The text of ``path`` in ``commit`` (None: no such file there)."""
    listed = _git(["ls-tree", "-z", commit, "--", path], target, timeout, env=_LITERAL)
    for entry in filter(None, listed.split("\0")):
        meta, _, name = entry.partition("\t")
        kind, sha = meta.split(" ", 2)[1:]
        if name == path and kind == "blob":
            raw = git.run_bytes(["cat-file", "blob", sha], target.repo, timeout, ProposalError)
            return raw.decode("utf-8", "replace")
    return None


def _alike(old: str, new: str) -> bool:
    """Whether ``new`` is ``old`` edited (as git's rename detection would pair them), by lines."""
    a, b = _lines(old), _lines(new)
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() >= SAME_DOCUMENT


def _lines(text: str) -> list[str]:
    """The body's lines that hold text (front matter aside: an agent may send the body alone)."""
    body = split_front_matter(text.lstrip("\ufeff")).body
    return [line.strip() for line in body.splitlines() if line.strip()]


def _git(
    args: list[str], target: GitTarget, timeout: float, env: dict[str, str] | None = None
) -> str:
    return git.run(args, target.repo, timeout, ProposalError, env)
