"""How the service is exposed (I3): token, bind address, and which Host / Origin values it
answers. Pure: built from settings and the environment, checked before anything binds."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass

from briefd.errors import ConfigError
from briefd.project import is_any_interface
from briefd.settings import ServeSettings

TOKEN_ENV = "BRIEFD_API_TOKEN"
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
MIN_TOKEN_CHARS = 16  # for binding beyond loopback: a guessable token is no protection


@dataclass(frozen=True, slots=True)
class ServiceConfig:
    token: str | None = None
    host: str = "127.0.0.1"
    port: int = 8484
    metrics_auth: bool = True
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    flush_seconds: float = 5.0
    max_body_bytes: int = 4 * 1024 * 1024
    max_streams: int = 16

    @classmethod
    def from_settings(
        cls, serve: ServeSettings, env: Mapping[str, str] | None = None, **overrides: object
    ) -> ServiceConfig:
        env = os.environ if env is None else env
        token = env.get(TOKEN_ENV, "").strip() or None
        values: dict[str, object] = {
            "token": token,
            "host": serve.host,
            "port": serve.port,
            "metrics_auth": serve.metrics_auth,
            "allowed_hosts": serve.allowed_hosts,
            "allowed_origins": serve.allowed_origins,
            "flush_seconds": serve.flush_seconds,
            "max_body_bytes": serve.max_body_bytes,
            "max_streams": serve.max_streams,
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        values["host"] = unbracketed(str(values["host"]))
        return cls(**values)  # type: ignore[arg-type]

    @property
    def host_names(self) -> tuple[str, ...]:
        """Host names (without port) the Host header may carry."""
        names = [*LOOPBACK_NAMES]
        if not is_any_interface(self.host):  # the bound address, also 127.0.0.2 or ::1
            names.append(bracket(self.host).lower())
        names += [h.strip().lower() for h in self.allowed_hosts if h.strip()]
        return tuple(dict.fromkeys(names))


def unbracketed(host: str) -> str:
    """``host`` as a socket binds it: an IPv6 address written as URLs and Host headers write it
    (``[::1]``, as ``serve.allowed_hosts`` and the hook take it) without its brackets, which
    no resolver reads ("cannot resolve '[::1]'")."""
    host = host.strip()
    if host.startswith("[") and host.endswith("]") and ":" in host:
        return host[1:-1]
    return host


def bracket(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def is_loopback(host: str) -> bool:
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(config: ServiceConfig) -> None:
    """Refuse to listen beyond this machine without a token, or with a short one (I3)."""
    if not is_loopback(config.host) and config.token is None:
        raise ConfigError(
            f"refusing to bind {config.host} without a token: set {TOKEN_ENV} to a long random "
            "secret, or bind 127.0.0.1 (the default)"
        )
    if not is_loopback(config.host) and len(config.token or "") < MIN_TOKEN_CHARS:
        raise ConfigError(
            f"refusing to bind {config.host} with a {len(config.token or '')}-character token: "
            f"{TOKEN_ENV} must have at least {MIN_TOKEN_CHARS} characters there (e.g. the output "
            "of `python -c 'import secrets; print(secrets.token_urlsafe(32))'`)"
        )
    if config.token is not None and not config.token.isascii():
        odd = next(i for i, c in enumerate(config.token) if not c.isascii()) + 1
        raise ConfigError(  # names where, never what: a secret's letter is part of the secret
            f"{TOKEN_ENV} holds a character that is not ASCII (character {odd}): clients send it in an HTTP header, "
            "where it arrives as other bytes (every request would be refused as a wrong token); "
            "use letters, digits and punctuation (e.g. the output of "
            "`python -c 'import secrets; print(secrets.token_urlsafe(32))'`)"
        )
    if not 0 < config.port < 65536:
        raise ConfigError(f"serve.port: expected 1–65535, got {config.port}")
