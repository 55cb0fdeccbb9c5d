"""The environment's proxy for a site (A1, A2): HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY as
httpx reads them, only the one for the site's URL used, and what goes wrong with it said with
the variable that names it, its password never shown."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from briefd.api import Briefd
from briefd.errors import IntegrationError
from briefd.service import create_app
from tests.atlassian.conftest import SERVICE_EMAIL, SERVICE_TOKEN, facade, site_settings
from tests.atlassian.fake import FakeSite
from tests.service.conftest import service_config
from tests.service.live import TOKEN, free_port, serving

PROXY_PASSWORD = "pr0xyPassW0rd"
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture(autouse=True)
def no_proxy_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test names its own proxies: none from the machine running the tests."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


def test_a_socks_proxy_httpx_cannot_use_is_said_and_no_proxy_exempts_the_site(
    tmp_path: Path,
    cloud: FakeSite,
    example_copy: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``ALL_PROXY=socks5://…`` (httpx has no SOCKS support without socksio) failed every
    lookup with an ImportError traceback, REST 500, even for a site NO_PROXY exempts."""
    monkeypatch.setenv("ALL_PROXY", f"socks5://proxy-user:{PROXY_PASSWORD}@127.0.0.1:1080")
    said = (
        "cannot send Jira requests through the proxy socks5://***@127.0.0.1:1080 (from "
        "ALL_PROXY): httpx has no SOCKS support here: install it in briefd's environment (pip "
        "install 'httpx[socks]'), or name an http:// proxy; or, if jira.url is reachable "
        "without it, add 127.0.0.1 to NO_PROXY"
    )
    with pytest.raises(IntegrationError) as caught:
        facade(tmp_path, cloud).jira_issue("SHOP-42", True, 2000, None)
    assert str(caught.value) == said
    source, template = example_copy
    shutil.copyfile(template, tmp_path / "index.db")
    settings = site_settings(tmp_path, cloud, source=str(source))
    monkeypatch.setenv("CONFLUENCE_EMAIL", SERVICE_EMAIL)
    monkeypatch.setenv("CONFLUENCE_TOKEN", SERVICE_TOKEN)
    with (
        Briefd(settings, embedder=None) as api,
        TestClient(create_app(api, service_config())) as http,
    ):
        http.headers["Authorization"] = f"Bearer {TOKEN}"
        answer = http.get("/api/jira/issues/SHOP-42")
        assert (answer.status_code, answer.json()) == (
            502,
            {"error": "integration", "detail": said},
        )
        assert cloud.seen == []
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")  # the site is reached without the proxy
        exempt = http.get("/api/jira/issues/SHOP-42")
    assert exempt.status_code == 200, exempt.text
    assert exempt.json()["key"] == "SHOP-42"
    assert PROXY_PASSWORD not in answer.text


def test_a_proxy_that_fails_is_named_with_its_variable_not_the_url_setting(
    tmp_path: Path, cloud: FakeSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A proxy that refuses the connection was reported as the site being unreachable ('check
    jira.url and the network'), a 407 from one as Jira's own answer: neither named the proxy."""
    closed = f"127.0.0.1:{free_port()}"
    monkeypatch.setenv("http_proxy", f"http://proxy-user:{PROXY_PASSWORD}@{closed}")
    with pytest.raises(IntegrationError) as refused:
        facade(tmp_path, cloud).confluence_page("98765", 2000, None)
    assert str(refused.value) == (
        f"cannot reach Confluence at {cloud.url} through the proxy http://***@{closed} (from "
        "http_proxy) (ConnectError: [Errno 111] Connection refused); check that proxy and "
        "confluence.url, or, if the site is reachable without the proxy, add 127.0.0.1 to "
        "NO_PROXY"
    )

    async def wants_an_account(scope: Scope, receive: Receive, send: Send) -> None:
        """A proxy asking for its account, whatever URL the request names (absolute-form)."""
        headers = {"Proxy-Authenticate": 'Basic realm="corp"'}
        await Response("<html>Proxy login</html>", 407, headers, "text/html")(scope, receive, send)

    with serving(wants_an_account, lifespan="off") as url:  # type: ignore[arg-type]
        monkeypatch.setenv("http_proxy", url)
        with pytest.raises(IntegrationError) as asked:
            facade(tmp_path, cloud).jira_issue("SHOP-42", True, 2000, None)
    assert str(asked.value) == (
        f"the proxy {url} (from http_proxy) refused GET /rest/api/3/issue/SHOP-42 to Jira (407 "
        "Proxy Authentication Required): it wants an account of its own; give it in http_proxy "
        "as http://user:password@host:port"
    )
    assert cloud.seen == []
