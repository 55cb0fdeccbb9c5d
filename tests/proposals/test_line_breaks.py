"""T1: a proposal keeps its document's line breaks, whatever line breaks ``new_content`` comes
with: an LF document stays LF, a CRLF one CRLF, and a text that differs from the document only
in its line breaks is the document, refused as identical."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from briefd.api import Briefd
from briefd.errors import ProposalError
from briefd.proposals import ProposalRequest
from tests.proposals.test_proposals import _blob
from tests.sync.gitrepo import RETRY, Remote, git

LF_RETRY = RETRY.lstrip("\n")  # domain/retry.md as committed: front matter, LF line breaks
WINDOWS = b"# Card data\r\n\r\nMask the PAN.\r\nKeep the last four.\r\n"


def test_a_crlf_text_for_an_lf_document_keeps_its_lf_line_breaks(
    git_api: Briefd, remote: Remote
) -> None:
    """T1: the body came back CRLF under the front matter's LF (mixed line endings), and the
    diff rewrote every line for a one-word change."""
    git_api.sync()
    body = git_api.document("domain/retry.md").body
    edited = body.replace("three", "four").replace("\n", "\r\n")

    made = git_api.propose_update(ProposalRequest("domain/retry.md", "four", edited))

    proposed = _blob(remote, f"{made.branch}:domain/retry.md")
    assert proposed == LF_RETRY.replace("three", "four").encode()
    assert b"\r" not in proposed
    assert git(remote.bare, "diff", "--numstat", "main", made.branch) == "1\t1\tdomain/retry.md"


@pytest.mark.parametrize(
    "sent",
    [
        pytest.param(lambda body: body.replace("\n", "\r\n"), id="body-crlf"),
        pytest.param(lambda body: LF_RETRY.replace("\n", "\r\n"), id="document-crlf"),
        pytest.param(lambda body: body.replace("\n", "\r\n").rstrip("\r\n"), id="crlf-no-eol"),
    ],
)
def test_an_lf_document_sent_back_with_crlf_line_breaks_is_identical(
    git_api: Briefd, remote: Remote, sent: Callable[[str], str]
) -> None:
    """T1: the same text with a BOM added or its final newline dropped was refused as
    identical, but with CRLF line breaks it made a commit (every line rewritten, nothing else
    changed) and a pull request to review."""
    git_api.sync()
    body = git_api.document("domain/retry.md").body
    with pytest.raises(ProposalError) as refused:
        git_api.propose_update(ProposalRequest("domain/retry.md", "no-op", sent(body)))
    assert str(refused.value).startswith("new_content is identical to domain/retry.md on main (")
    assert str(refused.value).endswith("); nothing to propose")
    assert git(remote.bare, "branch", "--list") == "* main"


def test_a_crlf_document_stays_crlf_whatever_line_breaks_are_sent(
    git_api: Briefd, remote: Remote
) -> None:
    """A CRLF document sent back with some lines CRLF and others LF (an editor that wrote the
    lines it changed its own way) was committed with mixed line endings."""
    (remote.work / "domain" / "cards.md").write_bytes(WINDOWS)
    git(remote.work, "add", "domain")
    git(remote.work, "commit", "--quiet", "-m", "Windows-authored")
    git(remote.work, "push", "--quiet", "origin", "main")
    git_api.sync()
    mixed = "# Card data\r\n\r\nMask the PAN.\nKeep the last four digits.\r\n"

    made = git_api.propose_update(ProposalRequest("domain/cards.md", "digits", mixed))

    assert _blob(remote, f"{made.branch}:domain/cards.md") == WINDOWS.replace(
        b"four", b"four digits"
    )
    assert git(remote.bare, "diff", "--numstat", "main", made.branch) == "1\t1\tdomain/cards.md"
    with pytest.raises(ProposalError, match=r"identical to domain/cards\.md on main"):
        git_api.propose_update(
            ProposalRequest("domain/cards.md", "no-op", WINDOWS.decode().replace("\r\n", "\n"))
        )
