"""One Atlassian site over HTTP (A1, A2): the only I/O of the integration.

A :class:`Site` sends JSON requests with the account's ``Authorization`` header through an
injected ``httpx.Client`` (tests point it at a fake server on 127.0.0.1), honours one
``Retry-After`` on 429 (and on a 503 that carries one), and turns every failure — 401, 403, 404, 410, 429, 5xx, a timeout, a TLS
error, an invalid URL, a redirect (never followed), an answer that is not JSON — into an
:class:`~briefd.errors.IntegrationError` whose message says what to do; but a 400 to a request
that carries the caller's values (a Jira search's filters), and a 401 or 403 to the account a
caller sent in its own headers, are a :class:`~briefd.errors.QueryError`: the caller's to fix
(REST 400), not the site's failure.
Nothing here logs: requests carry user text and secrets.
"""

from __future__ import annotations

import email.utils
import math
import re
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, wait
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from briefd.__about__ import __version__
from briefd.atlassian.credentials import Account, authorization, caller_refused
from briefd.atlassian.query import Deployment
from briefd.errors import (
    ConfigError,
    IntegrationError,
    QueryError,
    RateLimitedError,
    RemoteNotFoundError,
)
from briefd.proxy import Proxy, tls_context, unusable

if TYPE_CHECKING:  # httpx loads on first use: an index run never needs it (O4)
    import httpx

DEFAULT_RETRY_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class SiteConfig:
    """``product`` names the site in messages (Confluence, Jira); ``key`` its settings section."""

    product: str
    key: str
    url: str
    deployment: Deployment
    timeout: float
    verify_tls: bool

    @property
    def gateway_hint(self) -> str:
        return f"https://api.atlassian.com/ex/{self.key}/<cloud id>"


def checked_url(url: str, key: str) -> str:
    if not url.startswith(("https://", "http://")):
        raise ConfigError(f"{key}.url must start with https:// (or http://), got '{url}'")
    return url.rstrip("/")


def open_client(config: SiteConfig, proxy: Proxy | None = None) -> httpx.Client:
    """The client a site gets when none is injected: the configured timeout and TLS check,
    redirects not followed (credentials go to the configured URL only), ``SSL_CERT_FILE`` from
    the environment as usual, and ``proxy`` (:func:`~briefd.proxy.site_proxy`, the
    environment's proxy for this site) alone: an unusable proxy named for other URLs fails
    nothing, and one for this site is said, not a traceback."""
    import httpx

    verify = tls_context(config.verify_tls)
    try:
        return httpx.Client(
            timeout=config.timeout,
            verify=verify,
            follow_redirects=False,
            trust_env=False,  # the environment's proxy is ``proxy``, chosen for this URL
            proxy=proxy.url if proxy is not None else None,
        )
    except (ImportError, ValueError, httpx.InvalidURL) as exc:
        if proxy is None:
            raise
        host = httpx.URL(config.url).host
        raise IntegrationError(
            unusable(config.product, f"{config.key}.url", proxy, host, exc)
        ) from None


class Site:
    def __init__(
        self,
        config: SiteConfig,
        client: httpx.Client,
        sleep: Callable[[float], None] = time.sleep,
        proxy: Proxy | None = None,
    ) -> None:
        """``proxy``: the one ``client`` sends through, named when a request fails."""
        self.config = config
        self.client = client
        self.sleep = sleep
        self.proxy = proxy

    def get(
        self,
        path: str,
        params: Mapping[str, Any] | None,
        account: Account,
        not_found: str,
        *,
        caller_input: bool = False,
        nothing_on: frozenset[int] = frozenset(),
    ) -> Any:
        """``params`` None: ``path`` carries its query already (a ``_links.next``).
        ``caller_input``: the request carries the caller's values (search filters), so a 400
        refuses those values (a :class:`~briefd.errors.QueryError`), not the site.
        ``nothing_on``: statuses that mean the site keeps nothing there (None is returned)."""
        extra = {} if params is None else {"params": dict(params)}
        return self._send("GET", path, account, not_found, caller_input, nothing_on, **extra)

    def post(
        self,
        path: str,
        body: Mapping[str, Any],
        account: Account,
        not_found: str,
        *,
        caller_input: bool = False,
    ) -> Any:
        return self._send(
            "POST", path, account, not_found, caller_input, frozenset(), json=dict(body)
        )

    def _send(
        self,
        method: str,
        path: str,
        account: Account,
        not_found: str,
        caller_input: bool,
        nothing_on: frozenset[int],
        **kwargs: Any,
    ) -> Any:
        config = self.config
        headers = {
            "Authorization": authorization(account, config.deployment, config.product, config.key),
            "Accept": "application/json",
            "User-Agent": f"briefd/{__version__}",
        }
        what = f"{method} {path.split('?')[0]}"
        waited: float | None = None  # set once briefd has waited as asked and retried
        while True:
            response = self._request(method, config.url + path, headers, what, kwargs)
            if not asks_to_wait(response) or waited is not None:
                break
            asked = retry_after(response, DEFAULT_RETRY_SECONDS)
            if asked > config.timeout:
                break
            self.sleep(asked)
            waited = asked
        if response.is_redirect:  # never followed: the credentials go to the URL configured
            raise redirected(config, response, what, path.split("?")[0])
        if response.status_code in nothing_on:
            return None
        if response.status_code == 407:
            raise IntegrationError(self._proxy_refused(what))
        if response.status_code == 400 and caller_input:
            raise QueryError(f"{config.product} answered 400 to {what}{remote_message(response)}")
        if response.status_code >= 400:
            raise failure(config, response, what, account, not_found, waited)
        try:
            return whole_letters(response.json())
        except ValueError:
            raise IntegrationError(
                f"{config.product} answered {what} with something that is not JSON; check that "
                f"{config.key}.url ({config.url}) is the site itself, not a login page or proxy"
            ) from None

    def _proxy_refused(self, what: str) -> str:
        """A 407: the proxy in front of the site, not the site, wants an account."""
        proxy = self.proxy.said() if self.proxy is not None else "a proxy"
        variable = self.proxy.variable if self.proxy is not None else "HTTP_PROXY / HTTPS_PROXY"
        return (
            f"{proxy} refused {what} to {self.config.product} (407 Proxy Authentication "
            f"Required): it wants an account of its own; give it in {variable} as "
            "http://user:password@host:port"
        )

    def _request(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        what: str,
        kwargs: dict[str, Any],
    ) -> httpx.Response:
        import httpx

        config = self.config
        try:
            return self._within_timeout(method, url, headers, kwargs)
        except httpx.LocalProtocolError:  # what h11 refused quotes the header, a token in it
            raise IntegrationError(
                f"cannot send {what} to {config.product}: a request header holds a character "
                "HTTP cannot carry; check the account's email and token"
            ) from None
        except httpx.InvalidURL as exc:  # settings check the URL at load; this is the backstop
            raise IntegrationError(
                f"cannot send {what} to {config.product}: the URL is invalid ({_reason(exc)}); "
                f"check {config.key}.url ({config.url!r})"
            ) from None
        except httpx.TimeoutException:
            through = f" (through {self.proxy.said()})" if self.proxy is not None else ""
            raise IntegrationError(
                f"{config.product} did not answer {what} within {config.timeout:g} s{through}; "
                f"check that {config.url} is up, or raise {config.key}.timeout_seconds"
            ) from None
        except httpx.HTTPError as exc:
            if _tls_failure(exc):
                raise IntegrationError(
                    f"the TLS certificate of {config.url} could not be verified ({_reason(exc)}); "
                    "add the site's CA to the system trust store (or set SSL_CERT_FILE), or for "
                    f"a test site only set {config.key}.verify_tls: false"
                ) from None
            if self.proxy is not None:
                raise IntegrationError(self._unreached(exc)) from None
            raise IntegrationError(
                f"cannot reach {config.product} at {config.url} ({type(exc).__name__}: "
                f"{_reason(exc)}); check {config.key}.url and the network"
            ) from None

    def _unreached(self, exc: BaseException) -> str:
        """A request through the environment's proxy that failed: the proxy is named, as
        it, not the ``url`` setting, is the likelier cause."""
        import httpx

        config, proxy = self.config, self.proxy
        assert proxy is not None
        host = httpx.URL(config.url).host
        return (
            f"cannot reach {config.product} at {config.url} through {proxy.said()} "
            f"({type(exc).__name__}: {_reason(exc)}); check that proxy and "
            f"{config.key}.url, or, if the site is reachable without the proxy, add {host} to "
            "NO_PROXY"
        )

    def _within_timeout(
        self, method: str, url: str, headers: dict[str, str], kwargs: dict[str, Any]
    ) -> httpx.Response:
        """The whole answer within ``timeout_seconds``: the client's timeout bounds each wait
        for bytes, so a site sending its headers or its body a byte at a time would hold the
        caller far longer. The request runs in a worker thread the caller waits for until the
        deadline; past it the caller gets the timeout, and the worker, left behind, ends at its
        next wait for bytes (the lookup's client closes its connections) or with the site."""
        import httpx

        deadline = time.monotonic() + self.config.timeout
        answer: Future[httpx.Response] = Future()

        def fetch() -> None:
            try:
                answer.set_result(self._fetch(method, url, headers, kwargs, deadline))
            except BaseException as exc:  # handed to the caller, raised there
                answer.set_exception(exc)

        threading.Thread(target=fetch, name="briefd-site-request", daemon=True).start()
        wait([answer], timeout=max(0.0, deadline - time.monotonic()))
        if not answer.done():
            raise httpx.ReadTimeout("the answer took longer than the timeout")
        return answer.result()

    def _fetch(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        kwargs: dict[str, Any],
        deadline: float,
    ) -> httpx.Response:
        """The answer, read whole (the worker stops reading past ``deadline``)."""
        import httpx

        with self.client.stream(method, url, headers=headers, **kwargs) as response:
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout("the answer took longer than the timeout")
        kept = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _DECODED]
        return httpx.Response(
            response.status_code, headers=kept, content=bytes(body), request=response.request
        )


_DECODED = ("content-encoding", "content-length", "transfer-encoding")  # the body is decoded


def asks_to_wait(response: httpx.Response) -> bool:
    """A 429, or a 503 with ``Retry-After`` (Jira Cloud sheds load so): worth one retry after
    the wait, when it is within the timeout."""
    status = response.status_code
    return status == 429 or (status == 503 and "retry-after" in response.headers)


def retry_after(response: httpx.Response, default: float) -> float:
    """Seconds ``Retry-After`` asks for (a number or an HTTP date); ``default`` without one,
    or with one that is neither (``inf`` and ``1e400`` are no number of seconds)."""
    value = response.headers.get("retry-after", "").strip()
    if not value:
        return default
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) else default
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return default
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def failure(
    config: SiteConfig,
    response: httpx.Response,
    what: str,
    account: Account,
    not_found: str,
    waited: float | None,
) -> IntegrationError | QueryError:
    """The error for an answer with status ≥ 400: what happened and what to do. A 401 or 403
    (the site's JSON) to the account a caller sent in its headers is the caller's to fix: a
    :class:`QueryError` (REST 400) naming those headers, not the site's failure (502)."""
    status, product, key = response.status_code, config.product, config.key
    said = remote_message(response)
    captcha = captcha_login(response)
    refused = QueryError if account.from_caller else IntegrationError  # a caller's: REST 400
    if captcha is not None and status in (401, 403):
        return refused(
            f"{product} refused {what} ({status}) to the account from {account.origin} without "
            "checking its token: after too many failed logins the site asks that account to "
            f"answer a CAPTCHA; log in once as that account in a browser at {captcha or config.url}"
            ", answering it, then try again"
        )
    if status == 401 and account.from_caller:
        return QueryError(caller_refused(account, product, key, config.deployment))
    if status == 401:
        scoped = ""
        if config.deployment == "cloud":
            scoped = (
                f"; a scoped API token works only through the gateway: set {key}.url to "
                f"{config.gateway_hint}"
            )
        return IntegrationError(
            f"{product} refused the credentials from {account.origin} (401 Unauthorized): "
            f"Cloud takes the account's email and an API token, Data Center a personal access "
            f"token ({key}.deployment: datacenter){scoped}"
        )
    if status == 403 and not _json(response):
        return IntegrationError(
            f"{product} answered 403 Forbidden to {what} with a web page, not its REST API: "
            f"most likely a proxy, firewall or IP allowlist in front of {config.url} refused "
            "this machine's request; check that this machine may reach "
            f"{key}.url (the proxy to use, the address to allow), or ask the site's administrators"
        )
    if status == 403:  # a JSON answer: the site's own refusal of the account
        return refused(
            f"{product} denied {what} (403 Forbidden) to the account from {account.origin}: it "
            f"lacks permission there, or the site does not allow API tokens{said}"
        )
    if status == 404:
        return not_there(config, response, what, not_found)
    if status == 410:
        fix = (
            "a Jira Cloud site needs jira.deployment: cloud (POST /rest/api/3/search/jql)"
            if key == "jira"
            else f"check {key}.deployment (cloud or datacenter)"
        )
        return IntegrationError(
            f"{product} answered 410 Gone to {what}: that endpoint was removed{said}; {fix}"
        )
    if status == 429:
        return rate_limited(config, response, waited)
    if asks_to_wait(response):
        return unavailable(config, response, what, waited)
    if status >= 500:
        return server_error(config, response, what)
    return IntegrationError(f"{product} answered {status} to {what}{said}")


def captcha_login(response: httpx.Response) -> str | None:
    """Where to log in when Jira's or Confluence's login guard wants a CAPTCHA answered
    (``X-Authentication-Denied-Reason: CAPTCHA_CHALLENGE; login-url=…``): the login URL it
    names ("" when none), or None when it does not ask for one. The site then refuses every
    API request of that account, right token or not."""
    reason = str(response.headers.get("x-authentication-denied-reason", ""))
    if not reason.strip().upper().startswith("CAPTCHA_CHALLENGE"):
        return None
    for part in reason.split(";")[1:]:
        name, _, value = part.strip().partition("=")
        if name.lower() == "login-url" and value.startswith(("https://", "http://")):
            return str(value.strip())
    return ""


def server_error(config: SiteConfig, response: httpx.Response, what: str) -> IntegrationError:
    """A 5xx (a 503 without ``Retry-After`` too): the site failed, or — when the body is a web
    page, not the REST API's JSON — a proxy or load balancer in front of it did."""
    said = f"{config.product} answered {response.status_code} to {what}"
    if not _json(response):
        return IntegrationError(
            f"{said} with a web page, not its REST API: a proxy or load balancer in front of "
            f"{config.url} failed, or the site is down; try again later, and if it persists "
            f"check {config.key}.url and that the site is up"
        )
    return IntegrationError(
        f"{said}{remote_message(response)}: the site failed; try again later, and if it "
        "persists ask the site's administrators (its logs have the cause)"
    )


def redirected(
    config: SiteConfig, response: httpx.Response, what: str, path: str
) -> IntegrationError:
    """A 3xx: where it points (without its query, which a login page's may fill with state)
    and the ``url`` setting to use instead — the same API at another address (``http://`` to
    ``https://``, a moved context path), or a login page, which no token gets through."""
    target = response.request.url.join(response.headers["location"])
    where = str(target.copy_with(query=None, fragment=None))
    key = config.key
    said = (
        f"{config.product} redirected {what} to {where} ({response.status_code}); briefd does "
        f"not follow redirects, so that the credentials reach only {key}.url ({config.url})"
    )
    if where.endswith(path) and len(where) > len(path):
        return IntegrationError(f"{said}: set {key}.url to {where.removesuffix(path)}")
    return IntegrationError(
        f"{said}: that looks like a login page or a proxy, not the REST API; set {key}.url to "
        "the address that answers the API itself (on Cloud https://<site>.atlassian.net)"
    )


def not_there(
    config: SiteConfig, response: httpx.Response, what: str, not_found: str
) -> IntegrationError:
    """A 404: the site's REST API says so in JSON when the issue or page is missing; any other
    body (a web server's or proxy's page) means the request missed the API itself."""
    if not _json(response):
        key = config.key
        return IntegrationError(
            f"{config.product} answered 404 Not Found to {what} with a web page, not its REST "
            f"API: check {key}.url ({config.url}), which includes a Data Center site's context "
            f"path (e.g. https://host/{key}), and {key}.deployment ({config.deployment})"
        )
    return RemoteNotFoundError(not_found)


def rate_limited(
    config: SiteConfig, response: httpx.Response, waited: float | None
) -> RateLimitedError:
    """A 429 after one wait and retry (``waited``), or a first 429 whose ``Retry-After`` was
    longer than the timeout (``waited`` None: not retried). It carries the site's
    ``Retry-After`` so that REST can pass it on."""
    again = retry_after(response, DEFAULT_RETRY_SECONDS)
    sent = response.headers.get("retry-after") is not None
    if waited is None:
        what = (
            f"asked to wait {again:g} s, longer than {config.key}.timeout_seconds "
            f"({config.timeout:g} s): not retried; try again later"
        )
    elif sent:
        what = f"again after waiting {waited:g} s as asked; try again in {again:g} s"
    else:
        what = f"again after waiting {waited:g} s (it named no wait); try again later"
    return RateLimitedError(
        f"{config.product} is rate limiting briefd (429 Too Many Requests) and {what}",
        again if sent else None,
    )


def unavailable(
    config: SiteConfig, response: httpx.Response, what: str, waited: float | None
) -> IntegrationError:
    """A 503 with ``Retry-After`` again after one wait and retry (``waited``), or whose wait
    was longer than the timeout (``waited`` None: not retried)."""
    again = retry_after(response, DEFAULT_RETRY_SECONDS)
    said = f"{config.product} answered 503 Service Unavailable to {what}{remote_message(response)}"
    if waited is None:
        return IntegrationError(
            f"{said} and asked to wait {again:g} s, longer than {config.key}.timeout_seconds "
            f"({config.timeout:g} s): not retried; try again later"
        )
    return IntegrationError(
        f"{said}, also after waiting {waited:g} s as asked; try again in {again:g} s"
    )


def remote_message(response: httpx.Response) -> str:
    """What the site said about a failure (Jira ``errorMessages``/``errors``, Confluence
    ``message`` or v2 ``errors``), as ``": …"``, one line of at most 300 characters."""
    try:
        data = response.json()
    except ValueError:
        return ""
    parts: list[str] = []
    if isinstance(data, dict):
        parts += [str(m) for m in data.get("errorMessages") or []]
        errors = data.get("errors")
        if isinstance(errors, dict):
            parts += [f"{k}: {v}" for k, v in errors.items()]
        elif isinstance(errors, list):
            parts += [str(e.get("title") or e) for e in errors if isinstance(e, dict)]
        if isinstance(data.get("message"), str):
            parts.append(data["message"])
    text = " ".join("; ".join(parts).split())[:300]
    return f": {text}" if text else ""


_HALF_LETTER = re.compile("[\ud800-\udfff]")


def whole_letters(value: Any) -> Any:
    """``value`` (parsed JSON) with every half of a UTF-16 pair that came alone as U+FFFD:
    a site cutting an excerpt or summary inside an emoji sends ``"\\ud83d"``, which JSON
    parses into a string no UTF-8 encoder (token counter, response, terminal) takes."""
    if isinstance(value, str):
        return _HALF_LETTER.sub("\ufffd", value)
    if isinstance(value, list):
        return [whole_letters(item) for item in value]
    if isinstance(value, dict):
        return {whole_letters(k): whole_letters(v) for k, v in value.items()}
    return value


def _json(response: httpx.Response) -> bool:
    """Whether the answer's body is JSON (the REST API's own), not a web page."""
    try:
        response.json()
    except ValueError:
        return False
    return True


def _tls_failure(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLError) or "CERTIFICATE_VERIFY_FAILED" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _reason(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200] or type(exc).__name__
