"""The proxy the environment names for one URL (A1, A2, E2, P3, model pull): ``HTTP_PROXY``, ``HTTPS_PROXY``,
``ALL_PROXY`` and ``NO_PROXY``, read as httpx reads them (``urllib.request.getproxies``,
httpx's own patterns, the most specific first).

A client built with the environment's proxies makes a transport for every proxy named, for
any URL: ``ALL_PROXY=socks5://…`` (httpx has no SOCKS support without ``socksio``), a proxy of a
scheme it does not know or one with an invalid port failed every lookup with a traceback (REST
500), even for a site ``NO_PROXY`` exempts. So the one proxy for the site's URL is chosen here
and given to the client alone, and what is wrong with it is said with the variable it came from
(its ``user:password@`` never shown).
"""

from __future__ import annotations

import functools
import os
import re
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from briefd.errors import BriefdError

if TYPE_CHECKING:
    import httpx

SYSTEM = "the system's proxy settings"
_ACCOUNT = re.compile(r"(?<=://)[^/@]*@")


@dataclass(frozen=True, slots=True)
class Proxy:
    """``url`` as httpx takes it (``http://`` before a bare ``host:port``); ``variable`` the
    environment variable that names it."""

    url: str = ""
    variable: str = SYSTEM

    @property
    def shown(self) -> str:
        """The proxy's URL without the account in it."""
        return _ACCOUNT.sub("***@", self.url)

    def said(self) -> str:
        return f"the proxy {self.shown} (from {self.variable})"


def site_proxy(url: str, product: str, error: type[BriefdError]) -> Proxy | None:
    """The proxy requests to ``url`` go through, None for none (no proxy set, or ``NO_PROXY``
    exempts the site); an ``error`` when the proxy settings cannot be read."""
    import httpx
    from httpx._utils import URLPattern, get_environment_proxies  # httpx is pinned

    try:
        target = httpx.URL(url)
    except httpx.InvalidURL:
        return None  # its request says so, naming the url setting
    try:
        proxies = get_environment_proxies()
        patterns = sorted(URLPattern(key) for key in proxies)  # as httpx.Client orders them
    except (ValueError, httpx.InvalidURL) as exc:
        raise error(
            f"cannot read the proxy settings for {product} ({_one_line(exc)}): check the "
            "environment's HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY (a NO_PROXY entry is "
            "a host, domain or address without brackets or port, e.g. example.com,::1)"
        ) from None
    for pattern in patterns:
        if pattern.matches(target):
            found = proxies[pattern.pattern]
            scheme = pattern.scheme or "all"
            return None if found is None else Proxy(found, _variable(scheme))
    return None


def proxied_client(
    url: str, product: str, key: str, error: type[BriefdError], **options: Any
) -> tuple[httpx.Client, Proxy | None]:
    """A client for requests to ``url`` and the proxy it sends them through: the environment's
    one proxy for ``url`` alone (``trust_env=False``; ``SSL_CERT_FILE`` still read), so one
    unusable for other URLs fails nothing, and one unusable for this URL is an ``error`` that
    names it (``key``: the setting holding ``url``). ``options`` go to :class:`httpx.Client`."""
    proxy = site_proxy(url, product, error)
    return _client(url, proxy, product, key, error, options), proxy


class ProxiedClients:
    """Clients for requests to any URL, each through the environment's one proxy for that URL:
    a download a mirror redirects to another host goes through that host's proxy (or none,
    when ``NO_PROXY`` exempts it), not the first host's. One client per proxy, all closed
    together. ``key`` names the setting holding the first URL asked for; a proxy unusable for
    a later host is an ``error`` naming that host."""

    def __init__(self, product: str, key: str, error: type[BriefdError], **options: Any) -> None:
        self._said = (product, key, error)
        self._options = options
        self._clients: dict[str, httpx.Client] = {}
        self._first_host: str | None = None

    def __call__(self, url: str) -> httpx.Client:
        import httpx

        product, key, error = self._said
        try:
            host = httpx.URL(url).host
        except httpx.InvalidURL:
            host = ""  # its request says so
        self._first_host = host if self._first_host is None else self._first_host
        if host != self._first_host:
            key = f"the host {key} redirects to"
        proxy = site_proxy(url, product, error)
        chosen = proxy.url if proxy else ""
        if chosen not in self._clients:
            options = dict(self._options)
            self._clients[chosen] = _client(url, proxy, product, key, error, options)
        return self._clients[chosen]

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()

    def __enter__(self) -> ProxiedClients:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _client(
    url: str,
    proxy: Proxy | None,
    product: str,
    key: str,
    error: type[BriefdError],
    options: dict[str, Any],
) -> httpx.Client:
    import httpx

    options.setdefault("verify", tls_context())
    try:
        return httpx.Client(trust_env=False, proxy=proxy.url if proxy else None, **options)
    except (ImportError, ValueError, httpx.InvalidURL) as exc:
        if proxy is None:
            raise
        raise error(unusable(product, key, proxy, httpx.URL(url).host, exc)) from None


def tls_context(verify: bool = True) -> ssl.SSLContext:
    """The TLS check httpx makes by default (``SSL_CERT_FILE``/``SSL_CERT_DIR`` included; none
    with ``verify`` false), one per process for each CA setting: loading the CA bundle took
    32 ms of CPU for every client made (a proposal's forge, each embedding service or site).
    A CA file changed since (a rotated company CA) is loaded again."""
    cert_file, cert_dir = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
    return _tls_context(verify, cert_file, cert_dir, _modified(cert_file))


@functools.lru_cache(maxsize=8)
def _tls_context(
    verify: bool, cert_file: str | None, cert_dir: str | None, modified: float | None
) -> ssl.SSLContext:
    """The context for these settings (the environment holds them as the key says)."""
    import httpx

    return httpx.create_ssl_context(verify=verify, trust_env=True)


def _modified(path: str | None) -> float | None:
    try:
        return Path(path).stat().st_mtime if path else None
    except OSError:  # httpx says what is wrong with it
        return None


def unusable(product: str, key: str, proxy: Proxy, host: str, exc: BaseException) -> str:
    """Why the client cannot be built with ``proxy``, and what to do."""
    if isinstance(exc, ImportError) and proxy.url.lower().startswith("socks"):
        fix = (
            "httpx has no SOCKS support here: install it in briefd's environment "
            "(pip install 'httpx[socks]'), or name an http:// proxy"
        )
    else:
        fix = (
            f"{_one_line(exc)}; a proxy is an http://, https:// or socks5:// URL with a host "
            f"and port, e.g. http://proxy.example.com:3128; fix {proxy.variable}"
        )
    return (
        f"cannot send {product} requests through {proxy.said()}: {fix}; or, if {key} is "
        f"reachable without it, add {host} to NO_PROXY"
    )


def _variable(scheme: str) -> str:
    """The variable naming the proxy for ``scheme`` (``http``, ``https``, ``all``): lower case
    first, as ``urllib.request.getproxies_environment`` reads them."""
    names = [n for n in os.environ if n.lower() == f"{scheme}_proxy" and os.environ[n]]
    return min(names, key=lambda n: n != n.lower(), default=SYSTEM)


def _one_line(exc: BaseException) -> str:
    return _ACCOUNT.sub("***@", " ".join(str(exc).split())[:200]) or type(exc).__name__
