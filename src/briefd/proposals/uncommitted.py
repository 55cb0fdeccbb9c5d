"""A proposal written against a document's text that a checkout holds uncommitted (T1).

A git checkout is read in place: the index serves the work tree's files, uncommitted edits
too, while a proposal is one commit on the base branch. An agent that edited such a served
text sent the user's uncommitted edits back in ``new_content``, and the proposal's commit
carried them — pushed to the team's remote where ``proposals.push`` says so, under a
description that never named them. Refused, saying what to do. Clones briefd owns are reset
to their remote branch, so they never hold such text."""

from __future__ import annotations

import hashlib

from briefd.errors import ProposalConflictError, ProposalError
from briefd.sources import git
from briefd.sources.knowledge import GitTarget

UNCOMMITTED = (
    "{doc_path} as this server serves it holds changes not committed in the checkout {repo} "
    "(or committed since the index read it): the index read the work tree's file, which "
    "{what} the commit it serves ({head}); new_content, written against that text, would "
    "carry those changes into the proposal's commit{pushed}: commit them (or undo them), run "
    "briefd index, read the document again and propose; nothing was proposed"
)


def refuse_uncommitted(
    target: GitTarget,
    served_at: str,
    blob: str | None,
    doc_path: str,
    served_hash: str,
    pushed: bool,
    timeout: float,
) -> None:
    """Refuse when the index serves ``doc_path`` (its file's SHA-256: ``served_hash``) as the
    checkout's work tree holds it now, and that differs from ``blob``, the document at the
    commit the index serves (``served_at``; None: not there). Text the index read otherwise
    (the committed one; one edited since) is not refused: it tells nothing of what is
    uncommitted now."""
    if target.configured or not served_hash:
        return
    path = target.prefix + doc_path
    if blob is not None and _sha256(_bytes(target, blob, timeout)) == served_hash:
        return  # the committed text
    try:
        raw = (target.repo / path).read_bytes()
    except OSError:
        return
    if hashlib.sha256(raw).hexdigest() != served_hash:
        return
    if blob is not None:  # git's own comparison: line-ending conversion is no change
        args = ["diff", "--name-only", served_at, "--", path]
        literal = {"GIT_LITERAL_PATHSPECS": "1"}
        if not git.run(args, target.repo, timeout, ProposalError, literal):
            return
    what = "differs from its text in" if blob is not None else "is not in"
    raise ProposalConflictError(
        UNCOMMITTED.format(
            doc_path=doc_path,
            repo=target.repo,
            what=what,
            head=served_at[:12],
            pushed=f" and push them to '{target.remote}'" if pushed else "",
        )
    )


def _bytes(target: GitTarget, blob: str, timeout: float) -> bytes:
    return git.run_bytes(["cat-file", "blob", blob], target.repo, timeout, ProposalError)


def _sha256(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()
