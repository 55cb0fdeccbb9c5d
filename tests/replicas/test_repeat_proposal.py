"""A proposal repeated through another replica (S1, T1): the text a proposal whose pull request
is open already proposes is refused on every replica, not only on the one that pushed it
(whose clone alone held its commit)."""

from __future__ import annotations

from pathlib import Path

import pytest

from briefd.errors import ProposalError
from briefd.proposals import ProposalRequest
from tests.embeddings.fakehttp import fake_server
from tests.postgres import Postgres
from tests.proposals.test_github import PULLS, TOKEN_ENV, FakeGitHub
from tests.replicas.conftest import synced_pair

pytestmark = pytest.mark.replicas


def test_the_same_text_proposed_through_another_replica_is_refused(
    tmp_path: Path, postgres: Postgres, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN_ENV, "ghp_test")
    with fake_server() as server:
        github = FakeGitHub(server)
        forge = {
            "forge.type": "github",
            "forge.api_url": server.url,
            "forge.repo": "acme/knowledge",
            "forge.token_env": TOKEN_ENV,
        }
        with synced_pair(tmp_path, postgres, **forge) as (a, b, remote):
            new = (remote.work / "domain" / "refunds.md").read_text() + "\nRefunds: 90 days.\n"
            first = a.propose_update(ProposalRequest("domain/refunds.md", "90 days", new))
            assert first.status == "open"

            with pytest.raises(ProposalError) as refused:
                b.propose_update(ProposalRequest("domain/refunds.md", "again", new))

            assert str(refused.value) == (
                f"new_content for domain/refunds.md is what proposal {first.id} (branch "
                f"{first.branch}, open, pull request https://github.com/acme/knowledge/pull/1) "
                "already proposes; nothing was proposed: that one waits for review (merge or "
                "close it, or propose other text)"
            )
            posts = [r for r in github.server.requests if r.method == "POST" and r.path == PULLS]
            assert len(posts) == 1
            other = b.propose_update(ProposalRequest("domain/refunds.md", "91", new + "x\n"))
            assert other.status == "open"
