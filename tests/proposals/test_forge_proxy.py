"""The environment's proxy for the forge (P3): the one proxy for ``forge.api_url``, as httpx
reads the environment, is given to the client alone. ``ALL_PROXY=socks5://…`` (no SOCKS support
in httpx here) failed every proposal and every sync's pull-request refresh with an ImportError
traceback, even for a forge ``NO_PROXY`` exempts; now it fails nothing there, and one the forge's
requests would go through is named before anything is pushed."""

from __future__ import annotations

from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.errors import ProposalRemoteError
from briefd.proposals import ProposalRequest
from tests.embeddings.fakehttp import closed_port_url
from tests.proposals.test_github import NEW_RETRY, TOKEN_ENV, FakeGitHub, forge_settings, github
from tests.sync.gitrepo import Remote, git

__all__ = ["github"]

SOCKS = "socks5://127.0.0.1:1080"


@pytest.fixture
def proxies(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for scheme in ("http", "https", "all", "no"):
        for name in (f"{scheme}_proxy", f"{scheme.upper()}_PROXY"):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(TOKEN_ENV, "ghp_test")
    return monkeypatch


def test_a_socks_proxy_no_proxy_exempts_the_forge_from_opens_the_pull_request(
    tmp_path: Path, remote: Remote, github: FakeGitHub, proxies: pytest.MonkeyPatch
) -> None:
    proxies.setenv("ALL_PROXY", SOCKS)
    proxies.setenv("NO_PROXY", "127.0.0.1")
    with Briefd(forge_settings(tmp_path, remote, github), embedder=None) as api:
        api.sync()
        made = api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
        assert made.status == "open" and made.pr_number == 1
        github.server.requests.clear()
        assert api.sync().forge_error is None
    assert github.server.requests != []  # the refresh asked the forge


def test_an_unusable_proxy_for_the_forge_is_named_before_anything_is_pushed(
    tmp_path: Path, remote: Remote, github: FakeGitHub, proxies: pytest.MonkeyPatch
) -> None:
    proxies.setenv("ALL_PROXY", SOCKS)
    with Briefd(forge_settings(tmp_path, remote, github), embedder=None) as api:
        api.sync()
        with pytest.raises(ProposalRemoteError) as refused:
            api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    assert str(refused.value) == (
        "cannot send GitHub requests through the proxy socks5://127.0.0.1:1080 (from ALL_PROXY): "
        "httpx has no SOCKS support here: install it in briefd's environment (pip install "
        "'httpx[socks]'), or name an http:// proxy; or, if forge.api_url is reachable without "
        "it, add 127.0.0.1 to NO_PROXY"
    )
    assert git(remote.bare, "branch", "--list") == "* main"
    assert github.server.requests == []


def test_a_proxy_the_forge_cannot_be_reached_through_is_named(
    tmp_path: Path, remote: Remote, github: FakeGitHub, proxies: pytest.MonkeyPatch
) -> None:
    proxy = closed_port_url()
    proxies.setenv("HTTP_PROXY", proxy)
    with Briefd(forge_settings(tmp_path, remote, github), embedder=None) as api:
        api.sync()
        made = api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    said = made.forge_error or ""
    assert made.status == "pushed" and made.pr_number is None
    assert f"failed through the proxy {proxy} (from HTTP_PROXY): " in said
    assert (
        "check that proxy and forge.api_url, or, if the forge is reachable without the proxy, "
        "add 127.0.0.1 to NO_PROXY"
    ) in said
    assert github.server.requests == []
