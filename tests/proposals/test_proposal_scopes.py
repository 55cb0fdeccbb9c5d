"""A proposal's ``scopes`` are read as a search reads them (K1, T1): a scope that does not
exist is refused with the unknown-scope error every other route gives."""

from __future__ import annotations

import httpx2
import pytest
from mcp import Client

from briefd.api import Briefd
from briefd.errors import ScopeError
from briefd.proposals import ProposalRequest
from briefd.service import create_app
from tests.service.conftest import service_config
from tests.service.live import TOKEN, mcp_session, serving
from tests.sync.gitrepo import RETRY, Remote, git

NEW_RETRY = RETRY.replace("three times", "four times").lstrip("\n")
CHANGE = {"doc_path": "domain/retry.md", "change_description": "four", "new_content": NEW_RETRY}
UNKNOWN = "scope 'nope' does not exist; known scopes: domain (or 'all')"


def test_an_unknown_scope_is_refused_as_a_search_refuses_it(
    git_api: Briefd, remote: Remote
) -> None:
    """It said "doc_path 'domain/retry.md' is in scope 'domain', which this request may not
    see (scopes: nope); add 'domain' to scopes": a typo read as a scope that exists."""
    git_api.sync()

    async def agent(client: Client) -> tuple[str, str]:
        said = []
        for tool, args in [("search_context", {"query": "retry"}), ("propose_update", CHANGE)]:
            answer = await client.call_tool(tool, {**args, "scopes": ["nope"]})
            assert answer.is_error
            said.append(answer.content[0].text)  # type: ignore[union-attr]
        return said[0], said[1]

    auth = {"Authorization": f"Bearer {TOKEN}"}
    with serving(create_app(git_api, service_config())) as base:
        searched = httpx2.get(f"{base}/api/search?q=retry&scopes=nope", headers=auth)
        bodies = [{**CHANGE, "scopes": ["nope"]}, {**CHANGE, "scopes": ["domain", "nope"]}]
        proposed = [httpx2.post(f"{base}/api/proposals", json=b, headers=auth) for b in bodies]
        tool_search, tool_propose = mcp_session(base + "/mcp", agent)

    assert (searched.status_code, searched.json()) == (400, {"error": "scope", "detail": UNKNOWN})
    for answer in proposed:
        assert (answer.status_code, answer.json()) == (400, searched.json())
    assert UNKNOWN in tool_search
    assert tool_propose == tool_search
    assert git(remote.bare, "branch", "--list") == "* main"


def test_a_new_scopes_first_document_may_name_its_scope(git_api: Briefd, remote: Remote) -> None:
    """The index has no 'projects/alpha' yet: naming it is no unknown scope for a proposal
    that creates its first document, while another scope it lacks still is."""
    git_api.sync()
    made = git_api.propose_update(
        ProposalRequest("projects/alpha/a.md", "a", "# A\n", scopes=("projects/alpha", "domain"))
    )
    assert git(remote.bare, "diff", "--name-status", "main", made.branch) == (
        "A\tprojects/alpha/a.md"
    )
    refused = ProposalRequest("domain/x.md", "x", "# X\n", scopes=("domain", "projects/beta"))
    with pytest.raises(ScopeError) as exc:
        git_api.propose_update(refused)
    assert str(exc.value) == "scope 'projects/beta' does not exist; known scopes: domain (or 'all')"
