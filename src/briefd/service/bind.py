"""The listening socket, bound before the index is brought up to date.

Binding first means a port another process holds fails at once, as one line, instead of after
a first index of minutes and a "serving on" banner that was never true; and nothing else can
take the port while the index is built.
"""

from __future__ import annotations

import errno
import socket

from briefd.errors import ConfigError

from .config import ServiceConfig

__all__ = ["bind"]


def bind(config: ServiceConfig) -> socket.socket:
    """A TCP socket bound to ``config.host``:``config.port`` (not yet listening; uvicorn
    listens on it). Raises ConfigError, saying what to do, when the address cannot be had."""
    try:
        infos = socket.getaddrinfo(
            config.host, config.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except (socket.gaierror, ValueError) as exc:  # ValueError: no host name ('a..b', a NUL)
        why = exc.strerror if isinstance(exc, socket.gaierror) else "not a valid host name"
        raise ConfigError(
            f"serve.host: cannot resolve '{config.host}' ({why}); use an address such as 127.0.0.1"
        ) from exc
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise ConfigError(_why(config, exc)) from exc
    sock.set_inheritable(True)
    return sock


def _why(config: ServiceConfig, exc: OSError) -> str:
    where = f"{config.host}:{config.port}"
    if exc.errno == errno.EADDRINUSE:
        return (
            f"cannot listen on {where}: the port is in use (another `briefd serve`?); stop that "
            "process or pass --port N"
        )
    if exc.errno == errno.EACCES:
        return f"cannot listen on {where}: permission denied; pick a port above 1023 (--port N)"
    if exc.errno == errno.EADDRNOTAVAIL:
        return (
            f"cannot listen on {where}: {config.host} is not an address of this machine; use "
            "127.0.0.1 or one of its interfaces"
        )
    return f"cannot listen on {where}: {exc.strerror}"
