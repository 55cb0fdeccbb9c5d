"""Asking a running ``briefd serve`` — or the local recall daemon, over its Unix socket — for
a recall, over a plain socket.

``http.client`` alone costs the hook ~20 ms of imports (it pulls in the ``email`` package), a
third of the whole budget, so a loopback ``http://`` server is spoken to directly: one
HTTP/1.1 request with ``Connection: close``, one response read to the end — through the C
``_socket`` module, as ``socket.py`` alone imports ``enum``, ``selectors`` and ``collections``
(another ~5 ms). ``https://`` goes through ``http.client`` (the import cost is then the
smaller part).
"""

from __future__ import annotations

import _socket

from briefd.errors import BriefdError
from briefd.hosts import loopback as loopback  # this module's callers ask it here

PATH = "/api/hook/recall?format="
CONNECT_TIMEOUT = 0.25
INDEX_HEADER = "X-Briefd-Index"  # the daemon answers only for the index it serves
CONFIG_HEADER = "X-Briefd-Config"  # …and only a hook that found the settings file it read
VARIABLES_HEADER = "X-Briefd-Variables"  # …and has the BRIEFD_* settings variables it read
ANSWER_HEADER = "X-Briefd-Recall"  # on every recall answer: any other 200 is not briefd's
# The local daemon's wire, on every answer of a daemon: the hook uses only a daemon that speaks
# its own (one left running by an earlier briefd sends an older one, or none).
DAEMON_HEADER = "X-Briefd-Daemon"
DAEMON_PROTOCOL = "5"  # 4: the BRIEFD_* variables are compared too; 5: it exits on an upgrade


class ServerUnavailable(BriefdError):
    """No usable server answered: answer in-process instead."""


class ServerRefused(ServerUnavailable):
    """The server refused the token (401/403): answered in-process, and said on stderr."""


class OlderDaemon(ServerUnavailable):
    """The socket's daemon is an earlier briefd's (another protocol): not to be used."""


class NotSent(ServerUnavailable):
    """The request would carry a secret off this machine in the clear: not sent (said)."""


class ServerTimeout(BriefdError):
    """The server accepted the request but did not answer in time: give up (fail open)."""


def split_url(url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, base path) of an ``http(s)://host[:port][/base]`` URL."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in ("http", "https"):
        raise ServerUnavailable(f"recall.server '{url}' is not an http:// or https:// URL")
    netloc, _, base = rest.partition("/")
    host, port = _host_port(netloc)
    return scheme, host, int(port or (443 if scheme == "https" else 80)), ("/" + base).rstrip("/")


def _host_port(netloc: str) -> tuple[str, str]:
    """``host[:port]``, an IPv6 address in brackets (``[::1]:8484``): the host without the
    brackets, and the port ("" when none is given)."""
    if netloc.startswith("["):
        host, _, after = netloc[1:].partition("]")
        port = after.removeprefix(":")
    elif netloc.count(":") == 1:
        host, _, port = netloc.partition(":")
    else:
        host, port = netloc, ""
    return host, port if port.isdigit() else ""


def host_header(host: str, port: int) -> str:
    """The ``Host`` header for ``host``: an IPv6 address in brackets, as HTTP writes it."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def post(
    url: str,
    body: bytes,
    token: str | None,
    timeout: float,
    fmt: str = "json",
    index: str | None = None,
) -> bytes:
    """POST ``body`` (hook JSON) to the recall endpoint asking for ``fmt`` (json, hook or
    markdown); the response body of a 200 answer. With ``index``, the server answers only if
    it serves that index file (else 421: not asked)."""
    scheme, host, port, base = split_url(url)
    headers = {"Host": host_header(host, port), "Content-Type": "application/json"}
    if token:
        _check_sendable(token)
        if scheme == "http" and not loopback(host):
            raise NotSent(in_the_clear(url, host, port))
        headers["Authorization"] = f"Bearer {token}"
    if index:
        headers[INDEX_HEADER] = index
    if scheme == "https":
        return _https(host, port, base + PATH + fmt, body, headers, timeout)
    try:
        conn = _connect(host, port, min(CONNECT_TIMEOUT, timeout))
    except OSError as exc:
        raise ServerUnavailable(f"no briefd server at {url} ({exc.strerror or exc})") from None
    return _exchange(conn, f"{base}{PATH}{fmt}", headers, body, timeout, f"briefd server at {url}")


def in_the_clear(url: str, host: str, port: int) -> str:
    """Why the token is not sent to ``url`` (plain http to ``host``, not this machine), and
    the two ways to reach that server with it: ``briefd serve`` speaks plain http, so "its
    https:// URL" alone named one that does not exist without a proxy."""
    here = port if port >= 1024 else 8484  # a port below 1024 is root's on this machine
    return (
        f"BRIEFD_API_TOKEN is not sent to {url} in the clear (plain http to another machine: "
        "anyone on the network could read it); name that server by an https:// URL instead "
        "(a TLS proxy in front of briefd serve, which speaks plain http), or reach it through "
        f"an SSH tunnel (`ssh -N -L {here}:{host_header(host, port)} {host}`) as "
        f"http://127.0.0.1:{here}"
    )


def _check_sendable(token: str) -> None:
    """A header carries printable ASCII (and spaces, as the server's token may hold) alone:
    another character broke the request (http://) or raised an error quoting the header, token
    and all (https://). Said without the token."""
    at = next((i for i, c in enumerate(token) if not " " <= c <= "~"), None)
    if at is not None:
        odd = token[at]
        what = "a line break" if odd in "\r\n" else "not ASCII" if odd > "~" else "a control one"
        raise ServerRefused(
            f"BRIEFD_API_TOKEN holds a character (character {at + 1}: {what}) that an HTTP "
            "header cannot carry"
        )


def post_unix(
    path: str,
    index: str,
    body: bytes,
    timeout: float,
    target: str,
    config: str | None = None,
    variables: str | None = None,
) -> bytes:
    """POST ``body`` to ``target`` (``PATH`` + format, ``/status``, ``/stop``) of the local
    recall daemon listening on the Unix socket ``path``, which must serve ``index`` (and, with
    ``config``, answer with the settings of that file, "" for none; with ``variables``, with
    the ``BRIEFD_*`` variables :func:`briefd.hook.place.variables_key` sums up); the response
    body of a 200 answer."""
    where = f"the recall daemon at {path}"
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    conn.settimeout(min(CONNECT_TIMEOUT, timeout))
    try:
        conn.connect(path)
    except OSError as exc:
        conn.close()
        raise ServerUnavailable(f"no {where} ({exc.strerror or exc})") from None
    headers = {"Host": "localhost", "Content-Type": "application/json", INDEX_HEADER: index}
    if config is not None:
        headers[CONFIG_HEADER] = config
    if variables is not None:
        headers[VARIABLES_HEADER] = variables
    return _exchange(conn, target, headers, body, timeout, where, DAEMON_PROTOCOL)


def _exchange(
    conn: _socket.socket,
    target: str,
    headers: dict[str, str],
    body: bytes,
    timeout: float,
    where: str,
    protocol: str | None = None,
) -> bytes:
    """One HTTP/1.1 request with ``Connection: close`` and its response, read to the end; with
    ``protocol``, a daemon's, which must speak it."""
    try:
        conn.settimeout(timeout)
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        request = (
            f"POST {target} HTTP/1.1\r\n{head}Content-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n"
        )
        conn.sendall(request.encode("utf-8") + body)
        raw = _read_all(conn)
    except TimeoutError:
        raise ServerTimeout(f"{where} did not answer within {timeout:g} s") from None
    except OSError as exc:
        raise ServerUnavailable(f"{where} failed: {exc}") from None
    finally:
        conn.close()
    return _parse(raw, where, protocol)


def _addresses(host: str, port: int) -> list[tuple[int, int, int, str, tuple[str, int]]]:
    """Where to connect; an IP literal skips the resolver (its NSS set-up costs ~1 ms)."""
    if host.replace(".", "").isdigit() and host.count(".") == 3:
        return [(_socket.AF_INET, _socket.SOCK_STREAM, 0, "", (host, port))]
    return _socket.getaddrinfo(host, port, 0, _socket.SOCK_STREAM)  # type: ignore[return-value]


def _connect(host: str, port: int, timeout: float) -> _socket.socket:
    error: OSError = OSError(f"cannot resolve {host}")
    for family, kind, proto, _, address in _addresses(host, port):
        conn = _socket.socket(family, kind, proto)
        conn.settimeout(timeout)
        try:
            conn.connect(address)
        except OSError as exc:
            conn.close()
            error = exc
        else:
            return conn
    raise error


def _read_all(conn: _socket.socket) -> bytes:
    chunks: list[bytes] = []
    while True:
        data = conn.recv(65536)
        if not data:
            return b"".join(chunks)
        chunks.append(data)


def _parse(raw: bytes, url: str, protocol: str | None = None) -> bytes:
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep:
        raise ServerUnavailable(f"{url} sent no HTTP response")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    if status != 200:
        reason = parts[2] if len(parts) > 2 else ""
        refused = ServerRefused if status in (401, 403) else ServerUnavailable
        raise refused(f"{url} answered {status} {reason}".rstrip())
    fields = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:])}
    if protocol is not None and fields.get(DAEMON_HEADER.lower()) != protocol:
        spoken = fields.get(DAEMON_HEADER.lower(), "1")
        raise OlderDaemon(f"{url} speaks recall daemon protocol {spoken}, not {protocol}")
    if ANSWER_HEADER.lower() not in fields:
        raise ServerUnavailable(f"{url} is not a briefd recall endpoint (no {ANSWER_HEADER})")
    if fields.get("transfer-encoding", "").lower() == "chunked":
        return _dechunk(body)
    length = fields.get("content-length")
    return body[: int(length)] if length and length.isdigit() else body


def _dechunk(body: bytes) -> bytes:
    out: list[bytes] = []
    rest = body
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out.append(rest[:size])
        rest = rest[size + 2 :]
    return b"".join(out)


def _https(
    host: str, port: int, path: str, body: bytes, headers: dict[str, str], timeout: float
) -> bytes:
    """As for ``http://``: a server that cannot be reached within ``CONNECT_TIMEOUT`` (a team
    server off the VPN) is unavailable, answered in-process; one that took the connection has
    ``timeout`` for the TLS handshake and its answer."""
    import http.client
    import socket
    import ssl

    try:
        raw = socket.create_connection((host, port), min(CONNECT_TIMEOUT, timeout))
    except OSError as exc:
        where = f"https://{host_header(host, port)}"
        raise ServerUnavailable(f"no briefd server at {where} ({exc.strerror or exc})") from None
    conn = http.client.HTTPSConnection(host, port, timeout=timeout)
    try:
        raw.settimeout(timeout)
        conn.sock = ssl.create_default_context().wrap_socket(raw, server_hostname=host)
        conn.request("POST", path, body, headers)
        response = conn.getresponse()
        data = response.read()
    except TimeoutError:
        raise ServerTimeout(f"briefd server at {host} did not answer in {timeout:g} s") from None
    except OSError as exc:
        raise ServerUnavailable(f"no briefd server at https://{host}:{port} ({exc})") from None
    finally:
        conn.close()
        raw.close()  # when the handshake failed (the TLS socket took it over otherwise)
    if response.status != 200:
        refused = ServerRefused if response.status in (401, 403) else ServerUnavailable
        raise refused(f"briefd server at {host} answered {response.status}")
    if response.getheader(ANSWER_HEADER) is None:
        raise ServerUnavailable(f"https://{host}:{port} is not a briefd recall endpoint")
    return data
