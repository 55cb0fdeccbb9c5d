"""A site refusing the account a caller sent in its own X-Atlassian-* (X-Confluence-*) headers
(A1, A2) is the caller's to fix: REST 400 and an MCP error naming the headers, through the real
app against the fake site; the service account's own refusal stays the site's failure (502)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from mcp import Client

from briefd.api import Briefd
from briefd.atlassian.credentials import caller_account
from briefd.errors import QueryError
from briefd.service import create_app
from tests.atlassian.conftest import CALLER_EMAIL, SERVICE_EMAIL, SERVICE_TOKEN, facade
from tests.atlassian.fake import FakeSite
from tests.atlassian.test_service import CALLER, live_settings, mcp
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving

WRONG = {**CALLER, "X-Atlassian-Token": "wrong-token"}
SCOPED = "a scoped one works only while {key}.url is the gateway, https://api.atlassian.com/ex"
LEAVE = (
    "or leave the X-Atlassian-* (X-Confluence-*) headers out to be served as briefd's own account"
)


def refused(product: str, email: str, token: str) -> str:
    key = product.lower()
    return (
        f"{product} refused the credentials from the caller's {token} header (401 "
        f"Unauthorized): check {email} and {token} (an API token of that email's account; "
        f"{SCOPED.format(key=key)}/{key}/<cloud id>), {LEAVE}"
    )


@pytest.fixture
def app_api(
    tmp_path: Path,
    example_copy: tuple[Path, Path],
    cloud: FakeSite,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Briefd]:
    monkeypatch.setenv("CONFLUENCE_EMAIL", SERVICE_EMAIL)
    monkeypatch.setenv("CONFLUENCE_TOKEN", SERVICE_TOKEN)
    source, template = example_copy
    shutil.copyfile(template, tmp_path / "index.db")
    with Briefd(live_settings(source, tmp_path / "index.db", cloud), embedder=None) as api:
        yield api


@pytest.fixture
def http(app_api: Briefd) -> Iterator[TestClient]:
    with TestClient(create_app(app_api, service_config())) as client:
        client.headers["Authorization"] = f"Bearer {TOKEN}"
        yield client


def test_a_site_refusing_the_callers_own_token_is_a_400_naming_its_headers(
    http: TestClient, cloud: FakeSite
) -> None:
    """It answered 502 "integration", a failure of the site, so a client retried the same
    wrong token instead of fixing it."""
    issue = http.get("/api/jira/issues/SHOP-42", headers=WRONG)
    assert (issue.status_code, issue.json()) == (
        400,
        {"error": "query", "detail": refused("Jira", "X-Atlassian-Email", "X-Atlassian-Token")},
    )
    older = {"X-Confluence-Email": CALLER_EMAIL, "X-Confluence-Token": "wrong-token"}
    page = http.get("/api/confluence/pages/98765", headers=older)
    assert page.status_code == 400 and page.json()["detail"] == refused(
        "Confluence", "X-Confluence-Email", "X-Confluence-Token"
    )
    search = http.get("/api/jira/search", params={"text": "refund"}, headers=WRONG)
    assert search.status_code == 400 and search.json()["error"] == "query"
    bundle = http.post("/api/bundle", json={"issue": "SHOP-42"}, headers=WRONG)
    assert bundle.status_code == 400 and "X-Atlassian-Token" in bundle.json()["detail"]
    message = "You do not have the permission to see the specified issue."
    cloud.script(r"/issue/SHOP-42$", 403, body={"errorMessages": [message], "errors": {}})
    denied = http.get("/api/jira/issues/SHOP-42", headers=CALLER)
    assert denied.status_code == 400 and denied.json()["detail"] == (
        "Jira denied GET /rest/api/3/issue/SHOP-42 (403 Forbidden) to the account from the "
        "caller's X-Atlassian-Token header: it lacks permission there, or the site does not "
        f"allow API tokens: {message}"
    )
    guard = {"X-Authentication-Denied-Reason": f"CAPTCHA_CHALLENGE; login-url={cloud.url}/login"}
    cloud.script(r"/issue/SHOP-42$", 403, body="<html>Forbidden</html>", headers=guard)
    captcha = http.get("/api/jira/issues/SHOP-42", headers=CALLER)
    assert captcha.status_code == 400 and "log in once as that account" in captcha.text
    assert http.get("/api/jira/issues/SHOP-42", headers=CALLER).status_code == 200


def test_the_service_accounts_own_refusal_stays_the_sites_502(
    http: TestClient, cloud: FakeSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    cloud.script(r"/issue/SHOP-42$", 403, body={"errorMessages": ["No."], "errors": {}})
    denied = http.get("/api/jira/issues/SHOP-42")
    assert denied.status_code == 502 and denied.json()["error"] == "integration"
    monkeypatch.setenv("CONFLUENCE_TOKEN", "expired-token")
    issue = http.get("/api/jira/issues/SHOP-42")
    assert issue.status_code == 502 and issue.json()["error"] == "integration"
    assert issue.json()["detail"].startswith(
        "Jira refused the credentials from $CONFLUENCE_EMAIL / $CONFLUENCE_TOKEN (401 "
        "Unauthorized): Cloud takes the account's email and an API token"
    )


def test_an_mcp_caller_with_a_refused_token_is_told_which_header_to_fix(app_api: Briefd) -> None:
    async def body(client: Client) -> list[tuple[bool, str]]:
        said = []
        for tool, arguments in (
            ("jira_issue", {"key": "SHOP-42"}),
            ("compile_bundle", {"issue": "SHOP-42"}),
        ):
            result = await client.call_tool(tool, arguments)
            said.append((result.is_error, result.content[0].text))  # type: ignore[union-attr]
        return said

    with serving(create_app(app_api, service_config())) as base:
        said = mcp(base + "/mcp", body, WRONG)
    expected = refused("Jira", "X-Atlassian-Email", "X-Atlassian-Token")
    assert said == [(True, expected), (True, expected)]


def test_a_data_center_caller_is_told_to_check_its_personal_access_token(
    tmp_path: Path, dc: FakeSite
) -> None:
    account = caller_account({"X-Atlassian-Token": "not-a-pat"})
    with pytest.raises(QueryError) as caught:
        facade(tmp_path, dc).confluence_page("98765", 1000, account)
    assert str(caught.value) == (
        "Confluence refused the credentials from the caller's X-Atlassian-Token header (401 "
        f"Unauthorized): check the personal access token in X-Atlassian-Token, {LEAVE}"
    )
