"""Every way a live lookup fails is a clear error that says what to do (A1, A2): 401 (and the
scoped-token gateway), 403, 404, 410 from the removed search, 429 with ``Retry-After``
(honoured once), timeouts, TLS, an invalid URL, answers that are not JSON, a missing account,
an integration that is not configured. Never an empty success."""

from __future__ import annotations

import dataclasses
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from briefd.atlassian import Account, Atlassian, JiraQuery
from briefd.atlassian.credentials import caller_account
from briefd.errors import (
    IntegrationError,
    IntegrationOffError,
    QueryError,
    RateLimitedError,
    RemoteNotFoundError,
)
from briefd.settings import load_settings
from tests.atlassian.conftest import (
    ENV,
    SERVICE_EMAIL,
    SERVICE_TOKEN,
    facade,
    site_settings,
)
from tests.atlassian.fake import FakeSite, serve
from tests.embeddings.fakehttp import fake_server
from tests.service.live import free_port
from tests.tls import self_signed


def test_401_names_the_account_and_the_gateway_for_scoped_tokens(
    tmp_path: Path, cloud: FakeSite
) -> None:
    wrong = Account("dev@example.com", "not-a-token", "the caller's X-Atlassian-Token header")
    with pytest.raises(IntegrationError) as caught:
        facade(tmp_path, cloud).jira_issue("SHOP-42", True, 2000, wrong)
    assert str(caught.value) == (
        "Jira refused the credentials from the caller's X-Atlassian-Token header (401 "
        "Unauthorized): Cloud takes the account's email and an API token, Data Center a "
        "personal access token (jira.deployment: datacenter); a scoped API token works only "
        "through the gateway: set jira.url to https://api.atlassian.com/ex/jira/<cloud id>"
    )


def test_403_and_404_say_what_happened(tmp_path: Path, cloud: FakeSite) -> None:
    lookups = facade(tmp_path, cloud)
    message = "You do not have the permission to see the specified issue."
    cloud.script(r"/issue/SHOP-42$", 403, body={"errorMessages": [message], "errors": {}})
    with pytest.raises(IntegrationError) as forbidden:
        lookups.jira_issue("SHOP-42", True, 2000, None)
    assert str(forbidden.value) == (
        "Jira denied GET /rest/api/3/issue/SHOP-42 (403 Forbidden) to the account from "
        "$JIRA_EMAIL / $JIRA_TOKEN: it lacks permission there, or the site does not allow API "
        f"tokens: {message}"
    ).replace("$JIRA_EMAIL / $JIRA_TOKEN", "$CONFLUENCE_EMAIL / $CONFLUENCE_TOKEN")
    with pytest.raises(RemoteNotFoundError) as missing:
        lookups.jira_issue("SHOP-999", True, 2000, None)
    assert str(missing.value) == (
        "Jira issue SHOP-999 does not exist, or the account may not see it; check the key"
    )
    with pytest.raises(RemoteNotFoundError, match="Confluence page 424242 does not exist"):
        lookups.confluence_page("424242", 1000, None)


def test_a_403_web_page_is_a_proxy_or_firewall_not_the_accounts_permission(
    tmp_path: Path, dc: FakeSite
) -> None:
    """A corporate proxy, a WAF or the site's IP allowlist answers 403 with its own HTML page:
    it read as the account lacking permission, or the site not allowing API tokens, and sent
    the user to fix the account; the API's own 403 is JSON and still says that."""
    page = "<html><head><title>Access Denied</title></head><body>Access denied</body></html>"
    dc.script(r"/rest/api/content/98765$", 403, body=page)
    with pytest.raises(IntegrationError) as caught:
        facade(tmp_path, dc).confluence_page("98765", 1000, None)
    assert str(caught.value) == (
        "Confluence answered 403 Forbidden to GET /rest/api/content/98765 with a web page, not "
        f"its REST API: most likely a proxy, firewall or IP allowlist in front of {dc.url} "
        "refused this machine's request; check that this machine may reach "
        "confluence.url (the proxy to use, the address to allow), or ask the site's "
        "administrators"
    )


def test_a_captcha_demanded_by_the_login_guard_says_to_log_in_in_a_browser(
    tmp_path: Path, cloud: FakeSite
) -> None:
    """After too many failed logins (a mistyped token, a colleague's script) Jira's login guard
    refuses every Basic-auth request of that account, right token or not, with a 403 whose
    X-Authentication-Denied-Reason asks for a CAPTCHA: it read as 'lacks permission there, or
    the site does not allow API tokens', which no permission or token change fixes."""
    login = f"{cloud.url}/login.jsp"
    denied = {
        "X-Authentication-Denied-Reason": f"CAPTCHA_CHALLENGE; login-url={login}",
        "X-Seraph-LoginReason": "AUTHENTICATION_DENIED",
    }
    page = "<html><body><h1>Forbidden</h1></body></html>"
    cloud.script(r"/issue/SHOP-42$", 403, body=page, headers=denied)
    with pytest.raises(IntegrationError) as caught:
        facade(tmp_path, cloud).jira_issue("SHOP-42", True, 2000, None)
    assert str(caught.value) == (
        "Jira refused GET /rest/api/3/issue/SHOP-42 (403) to the account from $CONFLUENCE_EMAIL "
        "/ $CONFLUENCE_TOKEN without checking its token: after too many failed logins the site "
        "asks that account to answer a CAPTCHA; log in once as that account in a browser at "
        f"{login}, answering it, then try again"
    )


def test_a_404_web_page_is_a_wrong_url_or_deployment_not_a_missing_page(
    tmp_path: Path, dc: FakeSite
) -> None:
    """A Data Center site's context path added to (or left out of) the URL: the web server
    answers 404 with HTML, which must not read as the REST API's own 404 (JSON) for an issue or
    page that is missing."""
    lookups = facade(tmp_path, dc, **{"confluence.url": dc.url + "/confluence"})
    for call in (
        lambda: lookups.confluence_page("98765", 1000, None),
        lambda: lookups.confluence_search("refund", [], 5, 500, None),
    ):
        with pytest.raises(IntegrationError) as caught:
            call()
        assert not isinstance(caught.value, RemoteNotFoundError)
        assert str(caught.value).endswith(
            f"with a web page, not its REST API: check confluence.url ({dc.url}/confluence), "
            "which includes a Data Center site's context path (e.g. https://host/confluence), "
            "and confluence.deployment (datacenter)"
        )
    assert str(caught.value).startswith(
        "Confluence answered 404 Not Found to GET /rest/api/search with a web page"
    )
    wrong_root = facade(tmp_path, dc, **{"jira.url": dc.url + "/jira"})
    with pytest.raises(IntegrationError) as jira:
        wrong_root.jira_issue("SHOP-42", True, 500, None)
    assert str(jira.value) == (
        "Jira answered 404 Not Found to GET /rest/api/2/issue/SHOP-42 with a web page, not its "
        f"REST API: check jira.url ({dc.url}/jira), which includes a Data Center site's context "
        "path (e.g. https://host/jira), and jira.deployment (datacenter)"
    )
    with pytest.raises(RemoteNotFoundError, match="Jira issue SHOP-999 does not exist"):
        facade(tmp_path, dc).jira_issue("SHOP-999", True, 500, None)  # the API's own 404


def test_the_removed_search_answers_410_and_the_error_names_the_fix(
    tmp_path: Path, cloud: FakeSite
) -> None:
    lookups = facade(tmp_path, cloud, **{"jira.deployment": "datacenter", "jira.token_env": "X"})
    account = Account(None, SERVICE_TOKEN, "test")
    with pytest.raises(IntegrationError) as caught:
        lookups.jira_search(JiraQuery(text="refund"), account)
    assert cloud.paths() == ["GET /rest/api/2/search"]
    assert str(caught.value).startswith(
        "Jira answered 410 Gone to GET /rest/api/2/search: that endpoint was removed: The "
        "requested API has been removed. Please migrate to the /rest/api/3/search/jql API."
    )
    assert str(caught.value).endswith(
        "; a Jira Cloud site needs jira.deployment: cloud (POST /rest/api/3/search/jql)"
    )


def test_a_filter_value_jira_does_not_know_is_the_callers_query_error(
    tmp_path: Path, cloud: FakeSite, dc: FakeSite
) -> None:
    """Jira answers 400 to a search whose status, type or assignee it does not know: the
    caller's input to fix (REST 400), not a failure of the site (502)."""
    with pytest.raises(QueryError) as status:
        facade(tmp_path, cloud).jira_search(JiraQuery(text="refund", status="Nope"), None)
    assert not isinstance(status.value, IntegrationError)
    assert str(status.value) == (
        "Jira answered 400 to POST /rest/api/3/search/jql: The value 'Nope' does not exist for "
        "the field 'status'."
    )
    with pytest.raises(QueryError) as kind:
        facade(tmp_path, dc).jira_search(JiraQuery(type="Bugg"), None)
    assert str(kind.value) == (
        "Jira answered 400 to GET /rest/api/2/search: The value 'Bugg' does not exist for the "
        "field 'issuetype'."
    )
    with pytest.raises(QueryError, match="The value 'grace' does not exist for the field 'assi"):
        facade(tmp_path, cloud).jira_search(JiraQuery(assignee="grace"), None)
    cloud.script(r"/issue/SHOP-42$", 400, body={"errorMessages": ["Bad expand"], "errors": {}})
    with pytest.raises(IntegrationError) as elsewhere:  # not the caller's values: the site's
        facade(tmp_path, cloud).jira_issue("SHOP-42", True, 500, None)
    assert str(elsewhere.value) == (
        "Jira answered 400 to GET /rest/api/3/issue/SHOP-42: Bad expand"
    )


def test_429_is_retried_once_after_retry_after(tmp_path: Path, cloud: FakeSite) -> None:
    waits: list[float] = []
    lookups = Atlassian(site_settings(tmp_path, cloud), env=ENV, sleep=waits.append)
    cloud.script(r"/search/jql$", 429, headers={"Retry-After": "2"})
    answer = lookups.jira_search(JiraQuery(text="refund", limit=2), None)
    assert [r.key for r in answer.issues] == ["SHOP-42", "SHOP-41"]
    assert waits == [2.0] and cloud.paths() == ["POST /rest/api/3/search/jql"] * 2
    cloud.script(r"/search/jql$", 429, headers={"Retry-After": "3"}, times=2)
    with pytest.raises(RateLimitedError) as caught:
        lookups.jira_search(JiraQuery(text="refund"), None)
    assert str(caught.value) == (
        "Jira is rate limiting briefd (429 Too Many Requests) and again after waiting 3 s as "
        "asked; try again in 3 s"
    )
    assert caught.value.retry_after == 3.0
    cloud.seen.clear()
    cloud.script(r"/rest/api/search$", 429, headers={"Retry-After": "3600"})
    with pytest.raises(RateLimitedError) as at_once:
        lookups.confluence_search("refund", [], 5, 500, None)  # too long to wait: said at once
    assert str(at_once.value) == (
        "Confluence is rate limiting briefd (429 Too Many Requests) and asked to wait 3600 s, "
        "longer than confluence.timeout_seconds (20 s): not retried; try again later"
    )
    assert at_once.value.retry_after == 3600.0
    assert waits == [2.0, 3.0] and cloud.paths() == ["GET /wiki/rest/api/search"]
    cloud.script(r"/search/jql$", 429, times=2)  # no Retry-After: briefd waits its own 1 s
    with pytest.raises(RateLimitedError) as unnamed:
        lookups.jira_search(JiraQuery(text="refund"), None)
    assert str(unnamed.value).endswith(
        "again after waiting 1 s (it named no wait); try again later"
    )
    assert unnamed.value.retry_after is None


def test_a_503_with_retry_after_is_retried_once_as_a_429_is(
    tmp_path: Path, cloud: FakeSite
) -> None:
    """Jira Cloud sheds load with 503 and ``Retry-After``: waited once (within the timeout),
    then said; a 503 without one is the site's failure, not retried."""
    waits: list[float] = []
    lookups = Atlassian(site_settings(tmp_path, cloud), env=ENV, sleep=waits.append)
    cloud.script(r"/search/jql$", 503, headers={"Retry-After": "2"})
    answer = lookups.jira_search(JiraQuery(text="refund", limit=2), None)
    assert [r.key for r in answer.issues] == ["SHOP-42", "SHOP-41"]
    assert waits == [2.0] and cloud.paths() == ["POST /rest/api/3/search/jql"] * 2
    cloud.seen.clear()
    busy = {"errorMessages": ["Service temporarily unavailable"], "errors": {}}
    cloud.script(r"/issue/SHOP-42$", 503, body=busy, headers={"Retry-After": "3"}, times=2)
    with pytest.raises(IntegrationError) as again:
        lookups.jira_issue("SHOP-42", True, 500, None)
    assert str(again.value) == (
        "Jira answered 503 Service Unavailable to GET /rest/api/3/issue/SHOP-42: Service "
        "temporarily unavailable, also after waiting 3 s as asked; try again in 3 s"
    )
    assert waits == [2.0, 3.0] and cloud.paths() == ["GET /rest/api/3/issue/SHOP-42"] * 2
    cloud.seen.clear()
    cloud.script(r"/rest/api/search$", 503, headers={"Retry-After": "3600"})
    with pytest.raises(IntegrationError) as at_once:
        lookups.confluence_search("refund", [], 5, 500, None)
    assert str(at_once.value) == (
        "Confluence answered 503 Service Unavailable to GET /wiki/rest/api/search and asked to "
        "wait 3600 s, longer than confluence.timeout_seconds (20 s): not retried; try again later"
    )
    cloud.script(r"/rest/api/search$", 503)  # no Retry-After: a failure, not retried
    with pytest.raises(IntegrationError, match=r"^Confluence answered 503 to GET /wiki/rest/api"):
        lookups.confluence_search("refund", [], 5, 500, None)
    assert waits == [2.0, 3.0] and cloud.paths() == ["GET /wiki/rest/api/search"] * 2


def test_a_5xx_says_whether_the_site_or_a_proxy_failed_and_what_to_do(
    tmp_path: Path, dc: FakeSite
) -> None:
    """A 500 from Jira's REST API and a 502 page from the proxy in front of Confluence said
    only "answered 502 to GET …", nothing about what to do."""
    lookups = facade(tmp_path, dc)
    failed = {"errorMessages": ["Internal server error"], "errors": {}}
    dc.script(r"/issue/SHOP-42$", 500, body=failed)
    with pytest.raises(IntegrationError) as site:
        lookups.jira_issue("SHOP-42", True, 500, None)
    assert str(site.value) == (
        "Jira answered 500 to GET /rest/api/2/issue/SHOP-42: Internal server error: the site "
        "failed; try again later, and if it persists ask the site's administrators (its logs "
        "have the cause)"
    )
    page = "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
    dc.script(r"/content/98765$", 502, body=page)
    with pytest.raises(IntegrationError) as proxy:
        lookups.confluence_page("98765", 500, None)
    assert str(proxy.value) == (
        "Confluence answered 502 to GET /rest/api/content/98765 with a web page, not its REST "
        f"API: a proxy or load balancer in front of {dc.url} failed, or the site is down; try "
        "again later, and if it persists check confluence.url and that the site is up"
    )
    assert dc.paths() == ["GET /rest/api/2/issue/SHOP-42", "GET /rest/api/content/98765"]


def test_a_slow_site_is_a_timeout_that_says_so(tmp_path: Path, cloud: FakeSite) -> None:
    cloud.script(r"/issue/SHOP-42$", 0, delay=1.5)
    lookups = facade(tmp_path, cloud, **{"jira.timeout_seconds": 0.3})
    with pytest.raises(IntegrationError) as caught:
        lookups.jira_issue("SHOP-42", True, 2000, None)
    assert str(caught.value) == (
        f"Jira did not answer GET /rest/api/3/issue/SHOP-42 within 0.3 s; check that "
        f"{cloud.url} is up, or raise jira.timeout_seconds"
    )


def test_a_site_sending_its_answer_slowly_is_a_timeout_too(tmp_path: Path, cloud: FakeSite) -> None:
    """The client's timeout bounds each wait for bytes; the whole answer is bounded too."""
    cloud.script(r"/issue/SHOP-42$", 200, body={"key": "SHOP-42", "fields": {}}, trickle=0.05)
    lookups = facade(tmp_path, cloud, **{"jira.timeout_seconds": 0.5})
    started = time.monotonic()
    with pytest.raises(IntegrationError, match=r"did not answer GET /rest/api/3/issue/SHOP-42 "):
        lookups.jira_issue("SHOP-42", False, 2000, None)
    assert time.monotonic() - started < 1.5  # the body alone takes 1.6 s


@contextmanager
def slow_headers(pause: float) -> Iterator[str]:
    """A server on 127.0.0.1 answering every request with a 200 whose status line and headers
    come a byte at a time, ``pause`` seconds apart (slowloris-style); yields its URL."""
    answer = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Padding: "
        + b"p" * 80
        + b'\r\nContent-Length: 17\r\n\r\n{"key": "SHOP-42"}'
    )
    stop = threading.Event()
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.05)

    def trickle(connection: socket.socket) -> None:
        with connection:
            connection.recv(65536)
            for byte in answer:
                if stop.wait(pause):
                    return
                try:
                    connection.sendall(bytes([byte]))
                except OSError:  # the client gave up
                    return

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=trickle, args=(connection,), daemon=True).start()

    acceptor = threading.Thread(target=accept, daemon=True)
    acceptor.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        acceptor.join()
        listener.close()


def test_a_site_sending_its_headers_slowly_is_a_timeout_too(tmp_path: Path) -> None:
    """Each header byte restarted the client's read timeout: a site (or a proxy) sending its
    headers a byte every 50 ms held a 0.5 s lookup for 5 s. The whole answer is bounded, and
    the request left behind ends too."""
    with slow_headers(0.05) as url:
        values = {
            "db": str(tmp_path / "index.db"),
            "embeddings.enabled": False,
            "jira.url": url,
            "jira.deployment": "datacenter",
            "jira.token_env": "DC_TOKEN",
            "jira.projects": ["SHOP"],
            "jira.timeout_seconds": 0.5,
        }
        settings = load_settings(config=None, env={}, overrides=values)
        lookups = Atlassian(settings, env=ENV, sleep=lambda s: None)
        started = time.monotonic()
        with pytest.raises(IntegrationError) as caught:
            lookups.jira_issue("SHOP-42", False, 2000, None)
        took = time.monotonic() - started
        assert str(caught.value) == (
            f"Jira did not answer GET /rest/api/2/issue/SHOP-42 within 0.5 s; check that {url} "
            "is up, or raise jira.timeout_seconds"
        )
        assert took < 2.0  # the headers alone take about 6 s
        time.sleep(1.0)  # the request left behind ends at its next wait for bytes
        assert not [t for t in threading.enumerate() if t.name == "briefd-site-request"]


@pytest.mark.parametrize(
    ("token", "said"),
    [("pat-dc-SECRET\nrest-of-SECRET", "a line break"), ("pat-dc-SECRÉT", "U+00C9")],
)
def test_a_token_no_header_can_carry_is_said_without_the_token(
    tmp_path: Path, dc: FakeSite, token: str, said: str
) -> None:
    """A pasted token holding a line break made h11 refuse the header with an error quoting
    it, which REST handed to any caller; a non-ASCII one raised UnicodeEncodeError."""
    lookups = Atlassian(site_settings(tmp_path, dc), env={"DC_TOKEN": token}, sleep=lambda s: None)
    with pytest.raises(IntegrationError) as caught:
        lookups.jira_issue("SHOP-42", False, 2000, None)
    assert str(caught.value) == (
        f"the Jira account's token from $JIRA_EMAIL / $DC_TOKEN holds a character ({said}) that "
        "an HTTP header cannot carry: a paste that took a line break or a space with it? Set it "
        "again, exactly as issued"
    )
    caller = caller_account({"X-Atlassian-Token": "caller-tök"})
    with pytest.raises(QueryError, match=r"caller's X-Atlassian-Token header holds .*U\+00F6"):
        lookups.confluence_search("refund", [], 5, 500, caller)
    assert dc.seen == []


def test_half_an_emoji_from_the_site_is_a_replacement_character(
    tmp_path: Path, cloud: FakeSite
) -> None:
    """A site cutting an excerpt inside an emoji sends a lone UTF-16 half, which no UTF-8
    encoder takes: the token counter raised, REST answered 500."""
    hit = {
        "content": {"id": "98765", "type": "page", "title": "Refunds \ud83d"},
        "excerpt": "captured amount \ud83d",
        "url": "/spaces/ENG/pages/98765/Refunds",
        "resultGlobalContainer": {"title": "Engineering", "displayUrl": "/spaces/ENG"},
        "lastModified": "2026-05-01T10:00:00.000Z",
    }
    cloud.script(r"/rest/api/search$", 200, body={"results": [hit], "size": 1, "_links": {}})
    answer = facade(tmp_path, cloud).confluence_search("refund", [], 5, 500, None)
    assert "captured amount \ufffd" in answer.text.markdown
    assert "\ud83d" not in answer.text.markdown


@pytest.fixture(scope="module")
def tls_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeSite]:
    site = FakeSite("cloud", {SERVICE_TOKEN: SERVICE_EMAIL})
    with serve(site, self_signed(tmp_path_factory.mktemp("tls"))):
        yield site


def test_an_untrusted_certificate_is_a_tls_error(tmp_path: Path, tls_site: FakeSite) -> None:
    with pytest.raises(IntegrationError) as caught:
        facade(tmp_path, tls_site).confluence_page("98765", 1000, None)
    message = str(caught.value)
    assert message.startswith(f"the TLS certificate of {tls_site.url} could not be verified (")
    assert "CERTIFICATE_VERIFY_FAILED" in message
    assert message.endswith(
        "add the site's CA to the system trust store (or set SSL_CERT_FILE), or for a test "
        "site only set confluence.verify_tls: false"
    )
    unchecked = facade(tmp_path, tls_site, **{"confluence.verify_tls": False})
    assert (
        unchecked.confluence_page("98765", 1000, None).page.info.title == "Refund incident review"
    )


def test_unreachable_and_not_json(tmp_path: Path, cloud: FakeSite) -> None:
    gone = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(IntegrationError, match=f"cannot reach Jira at {gone} \\(ConnectError"):
        facade(tmp_path, cloud, **{"jira.url": gone}).jira_issue("SHOP-42", True, 500, None)
    cloud.script(r"/issue/SHOP-42$", 200, body="<html><body>Log in</body></html>")
    with pytest.raises(IntegrationError) as caught:
        facade(tmp_path, cloud).jira_issue("SHOP-42", True, 500, None)
    assert str(caught.value) == (
        "Jira answered GET /rest/api/3/issue/SHOP-42 with something that is not JSON; check "
        f"that jira.url ({cloud.url}) is the site itself, not a login page or proxy"
    )


MOVED = "<html><head><title>301 Moved Permanently</title></head><body>Moved</body></html>"


def test_a_redirect_is_not_followed_and_names_where_it_points(
    tmp_path: Path, cloud: FakeSite, dc: FakeSite
) -> None:
    """An http:// URL that redirects to https://, a moved context path, an SSO login page: the
    error names the Location (without its query) and the url setting to use, and nothing is
    sent to the other address."""
    secure = cloud.url.replace("http://", "https://")
    issue = "/rest/api/3/issue/SHOP-42"
    moved = {"Location": f"{secure}{issue}?expand=renderedFields%2Cnames&fields=summary"}
    cloud.script(r"/issue/SHOP-42$", 301, body=MOVED, headers=moved)
    with pytest.raises(IntegrationError) as https:
        facade(tmp_path, cloud).jira_issue("SHOP-42", True, 500, None)
    assert str(https.value) == (
        f"Jira redirected GET {issue} to {secure}{issue} (301); briefd does not follow "
        f"redirects, so that the credentials reach only jira.url ({cloud.url}): set jira.url to "
        f"{secure}"
    )
    dc.script(
        r"/rest/api/search$", 302, body="", headers={"Location": "/confluence/rest/api/search"}
    )
    with pytest.raises(IntegrationError) as context_path:  # a Data Center site moved under one
        facade(tmp_path, dc).confluence_search("refund", [], 5, 500, None)
    assert str(context_path.value).endswith(f"set confluence.url to {dc.url}/confluence")
    assert dc.paths() == ["GET /rest/api/search"]
    login = "https://sso.example.com/adfs/ls/?SAMLRequest=fZJdT8IwFIb%2Fy&RelayState=42"
    cloud.script(r"/search/jql$", 302, body=MOVED, headers={"Location": login})
    with pytest.raises(IntegrationError) as sso:
        facade(tmp_path, cloud).jira_search(JiraQuery(text="refund"), None)
    assert str(sso.value) == (
        "Jira redirected POST /rest/api/3/search/jql to https://sso.example.com/adfs/ls/ (302); "
        f"briefd does not follow redirects, so that the credentials reach only jira.url "
        f"({cloud.url}): that looks like a login page or a proxy, not the REST API; set jira.url "
        "to the address that answers the API itself (on Cloud https://<site>.atlassian.net)"
    )
    assert "SAMLRequest" not in str(sso.value)
    assert cloud.paths() == [f"GET {issue}", "POST /rest/api/3/search/jql"]  # none followed


def test_an_invalid_url_at_request_time_is_an_integration_error(
    tmp_path: Path, cloud: FakeSite
) -> None:
    """Loaded settings refuse such a URL (tests/test_settings.py); settings built in code do
    not pass through that check, and httpx's InvalidURL still never escapes."""
    settings = site_settings(tmp_path, cloud)
    for url in ("http://127.0.0.1:8O80", "https://[::1"):
        jira = dataclasses.replace(settings.jira, url=url)
        lookups = Atlassian(dataclasses.replace(settings, jira=jira), env=ENV)
        with pytest.raises(IntegrationError) as caught:
            lookups.jira_issue("SHOP-42", True, 500, None)
        port = "8O80" if url.endswith("8O80") else ":1"
        assert str(caught.value) == (
            f"cannot send GET /rest/api/3/issue/SHOP-42 to Jira: the URL is invalid (Invalid "
            f"port: {port!r}); check jira.url ({url!r})"
        )
    assert cloud.seen == []


def test_not_configured_and_no_account(tmp_path: Path, cloud: FakeSite) -> None:
    plain = Atlassian(load_settings(config=None, env={}, overrides={}), env={})
    assert not plain.jira_on and not plain.confluence_on
    with pytest.raises(IntegrationOffError) as off:
        plain.jira_issue("SHOP-42", True, 2000, None)
    assert str(off.value) == (
        "Jira is not configured: set jira.url in briefd.yaml or BRIEFD_JIRA__URL, and the "
        "account in JIRA_EMAIL / JIRA_TOKEN (README: Confluence and Jira)"
    )
    with pytest.raises(IntegrationOffError, match="issue 'SHOP-42' is a Jira key, but Jira"):
        plain.prefetch("SHOP-42")
    assert plain.prefetch("SHOP-42 refunds race")("SHOP-42 refunds race", 500) is None
    nobody = Atlassian(site_settings(tmp_path, cloud), env={})
    with pytest.raises(IntegrationError) as missing:
        nobody.confluence_search("refund", [], 5, 500, None)
    assert str(missing.value) == (
        "no Confluence account: export $CONFLUENCE_TOKEN (and $CONFLUENCE_EMAIL on Cloud), or "
        "send X-Atlassian-Email and X-Atlassian-Token with the request"
    )
    with pytest.raises(IntegrationError, match="Jira Cloud needs the account's email"):
        nobody.jira_issue(
            "SHOP-42", True, 500, Account(None, "t", "the caller's X-Atlassian-Token header")
        )
    assert cloud.seen == []


ELSEWHERE = "http://wiki.example.invalid"


def cloned_project(tmp_path: Path, confluence: str, jira: str) -> Atlassian:
    """The lookups a cloned repository's own briefd.yaml configures (found, not named)."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "briefd.yaml").write_text(
        f"confluence: {{url: {confluence}, spaces: [ENG]}}\njira: {{url: {jira}}}\n"
    )
    settings = load_settings(env={"HOME": str(tmp_path / "home")}, project=project)
    return Atlassian(settings, env=ENV, sleep=lambda s: None)


def test_a_project_file_cannot_send_the_account_to_a_site_only_it_names(
    tmp_path: Path, cloud: FakeSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    """$CONFLUENCE_TOKEN (and Jira's fallback to it) went to any url a cloned repository's
    briefd.yaml wrote; now nothing is sent (a proxy on 127.0.0.1 stands for the network)."""
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    with fake_server() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        lookups = cloned_project(tmp_path, ELSEWHERE, ELSEWHERE)
        with pytest.raises(IntegrationError) as page:
            lookups.confluence_search("refunds", (), 5, 1000, None)
        with pytest.raises(IntegrationError) as issue:
            lookups.jira_issue("SHOP-42", True, 2000, None)
        assert proxy.requests == []
    file = tmp_path / "project" / "briefd.yaml"
    assert str(page.value) == (
        f"$CONFLUENCE_EMAIL / $CONFLUENCE_TOKEN is not sent to {ELSEWHERE}: confluence.url in "
        f"{file} names it, and a project's settings file may not send a secret to a host only "
        f"it names; to trust it, set BRIEFD_CONFLUENCE__URL={ELSEWHERE} in your environment, "
        f"or name that settings file yourself (`briefd --config {file} …`, or $BRIEFD_CONFIG)"
    )
    assert str(issue.value).startswith(
        f"$CONFLUENCE_EMAIL / $CONFLUENCE_TOKEN is not sent to {ELSEWHERE}: jira.url in {file}"
    )
    assert SERVICE_TOKEN not in str(page.value) + str(issue.value)


def test_a_site_on_this_machine_in_a_project_file_is_asked(tmp_path: Path, cloud: FakeSite) -> None:
    lookups = cloned_project(tmp_path, cloud.url, cloud.url)
    assert lookups.jira_issue("SHOP-42", False, 2000, None).issue.key == "SHOP-42"
    [sent] = {seen.authorization for seen in cloud.seen}
    assert sent.startswith("Basic ")  # the service account, from $CONFLUENCE_TOKEN
