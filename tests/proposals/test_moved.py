"""T1 with real git: a document moved (``git mv``) and synced is proposed to at its old path by
an agent that read it before the move; the proposal names where it went instead of bringing
the old path back beside it."""

from __future__ import annotations

import re

import pytest

from briefd.api import Briefd
from briefd.errors import ProposalConflictError
from briefd.proposals import ProposalRequest
from tests.sync.gitrepo import RETRY, Remote, git

NEW_RETRY = RETRY.replace("three times", "four times").lstrip("\n")


def _move(remote: Remote, old: str, new: str, message: str) -> None:
    git(remote.work, "mv", old, new)
    git(remote.work, "commit", "--quiet", "-m", message)
    git(remote.work, "push", "--quiet", "origin", "main")


def test_a_document_moved_and_synced_is_not_recreated_at_its_old_path(
    git_api: Briefd, remote: Remote
) -> None:
    """T1: after a sync that brought a teammate's ``git mv``, the served index knows only the
    new path, so a proposal at the old one looked like a new document and was pushed, adding
    the old document back beside the moved one (moved twice: the path it has now is named)."""
    git_api.sync()
    _move(remote, "domain/retry.md", "domain/declines.md", "Name it for what it covers")
    _move(remote, "domain/declines.md", "domain/soft-declines.md", "Say which declines")
    git_api.sync()

    with pytest.raises(ProposalConflictError) as refused:
        git_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))

    said = str(refused.value)
    assert re.match(
        r"domain/retry\.md was moved to domain/soft-declines\.md on main \([0-9a-f]{7,} by "
        r"Teammate: Name it for what it covers\), and new_content is that document, edited: ",
        said,
    ), said
    assert said.endswith(
        "read the document at its new path (get_document domain/soft-declines.md) and propose "
        "the change there (a different document at domain/retry.md is proposed as a new one)"
    )
    assert git(remote.bare, "branch", "--list") == "* main" and git_api.proposals() == []


def test_a_different_document_at_a_path_moved_away_from_is_a_new_document(
    git_api: Briefd, remote: Remote
) -> None:
    """T1: a path a move vacated can hold a new document (the moved one's body sent alone,
    without its front matter, still counts as that document)."""
    _move(remote, "domain/retry.md", "domain/soft-declines.md", "Name it for what it covers")
    git_api.sync()
    body = NEW_RETRY.split("---\n", 2)[2]
    with pytest.raises(ProposalConflictError, match=r"moved to domain/soft-declines\.md"):
        git_api.propose_update(ProposalRequest("domain/retry.md", "four", body))

    made = git_api.propose_update(
        ProposalRequest("domain/retry.md", "An index of retries", "# Retries\n\nSee the rest.\n")
    )
    assert git(remote.bare, "diff", "--name-status", "main", made.branch) == "A\tdomain/retry.md"
