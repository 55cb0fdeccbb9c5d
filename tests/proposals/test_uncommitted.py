"""T1 with real git: a checkout's uncommitted edits, which the index serves, never ride along in
a proposal's commit (pushed to the team's remote where proposals.push says so)."""

from __future__ import annotations

from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.errors import ProposalConflictError
from briefd.proposals import ProposalRequest
from briefd.settings import with_overrides
from tests.sync.conftest import git_settings
from tests.sync.gitrepo import GLOSSARY, Remote, git

DRAFT = "\n## Interchange\nDRAFT: the fee is 0.3% (not agreed, do not share).\n"


def test_a_proposal_on_text_the_checkout_holds_uncommitted_is_refused(
    tmp_path: Path, remote: Remote
) -> None:
    """An agent edited a document as briefd served it from a checkout with the user's
    uncommitted draft in it, and the proposal's commit carried the draft: pushed to the team's
    remote under "Settle daily", with proposals.push. Refused, saying what to do; nothing is
    pushed. A text committed, or line endings git converts (core.autocrlf), still pass."""
    work = remote.work
    settings = with_overrides(git_settings(tmp_path, str(work)), {"proposals.push": True})
    glossary = work / "domain" / "glossary.md"
    with Briefd(settings, embedder=None) as api:
        glossary.write_text(glossary.read_text(encoding="utf-8") + DRAFT, encoding="utf-8")
        (work / "domain" / "fx.md").write_text("# FX\n\nDRAFT: hourly?\n", encoding="utf-8")
        api.index()
        for path in ("domain/glossary.md", "domain/fx.md"):
            served = api.document(path).body
            edited = served.replace("pays the merchant", "pays the merchant daily") + "More.\n"
            with pytest.raises(ProposalConflictError) as refused:
                api.propose_update(ProposalRequest(path, "Settle daily", edited))
            said = str(refused.value)
            assert said.startswith(
                f"{path} as this server serves it holds changes not committed in the checkout "
                f"{work} (or committed since the index read it): the index read the work "
                "tree's file, which "
            ), said
            assert said.endswith(
                "would carry those changes into the proposal's commit and push them to "
                "'origin': commit them (or undo them), run briefd index, read the document "
                "again and propose; nothing was proposed"
            ), said
        assert git(remote.bare, "branch", "--list", "briefd/*") == ""

        git(work, "checkout", "--quiet", "--", "domain/glossary.md")
        (work / "domain" / "fx.md").unlink()
        git(work, "config", "core.autocrlf", "true")  # a Windows checkout: CRLF, nothing changed
        glossary.write_bytes(glossary.read_bytes().replace(b"\n", b"\r\n"))
        assert git(work, "diff", "--name-only", "HEAD") == ""  # git sees no change
        api.index()
        daily = GLOSSARY.replace("pays the merchant", "pays the merchant daily").lstrip("\n")
        made = api.propose_update(ProposalRequest("domain/glossary.md", "Settle daily", daily))

    assert made.status == "pushed"
    assert git(remote.bare, "show", f"{made.branch}:domain/glossary.md") == daily.strip()
    assert "DRAFT" not in git(remote.bare, "show", f"{made.branch}:domain/glossary.md")
