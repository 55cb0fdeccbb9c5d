"""Replicas set up alike (S1): each ``briefd serve`` sharing a PostgreSQL state says there, every
minute, what it asks of its callers (whether it requires ``BRIEFD_API_TOKEN``, and which one:
a slow salted digest, never the token; the same of ``sync.webhook_secret``; the TLS mode of its
``state.url``), and ``/api/health`` and the log (once per change) tell the operator when the
replicas behind one address disagree: a caller the load balancer sends to one of them would be
let in without a token, or refused with the token another takes, and a webhook likewise."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cache
from urllib.parse import parse_qs, urlsplit

import anyio

from briefd.errors import BriefdError
from briefd.service.config import ServiceConfig
from briefd.service.state import ServiceState
from briefd.settings import Settings
from briefd.state import SharedState

log = logging.getLogger("briefd.replicas")
ANNOUNCE_SECONDS = 60.0  # how often a replica says it again
FRESH_SECONDS = 180.0  # one that has not said it for this long is stopped or gone
_SALT = b"briefd replica agreement v1"
_ITERATIONS = 200_000  # a digest per guess costs this many HMACs (the token is never stored)
LABELS = {
    "token": "BRIEFD_API_TOKEN",
    "webhook": "sync.webhook_secret",
    "sslmode": "state.url's sslmode",
}
OPENLY = (
    "the replicas sharing this state are not set up alike (which settings, in /api/health "
    "asked with the API token)"
)


@cache
def _digest(secret: str) -> str:
    return hashlib.pbkdf2_hmac("sha256", secret.encode(), _SALT, _ITERATIONS)[:8].hex()


def access_line(config: ServiceConfig, settings: Settings) -> str:
    """What this replica asks of its callers, as the shared state keeps it."""
    secret = (settings.sync.webhook_secret or "").strip()
    url = settings.state.url or ""
    query = parse_qs(urlsplit(url).query)
    mode = (query.get("sslmode") or [os.environ.get("PGSSLMODE") or "prefer (not set)"])[0]
    return json.dumps(
        {
            "token": _digest(config.token) if config.token else None,
            "webhook": _digest(secret) if secret else None,
            "sslmode": mode,
        },
        sort_keys=True,
    )


def disagreement(lines: dict[str, str]) -> str | None:
    """What the replicas' ``lines`` (by name) disagree on, with what to do; None: alike."""
    read = {name: _read(line) for name, line in sorted(lines.items())}
    parts = []
    for key, label in LABELS.items():
        groups: dict[object, list[str]] = {}
        for name, said in read.items():
            groups.setdefault(said.get(key), []).append(name)
        if len(groups) > 1:
            parts.append(label + _groups(key, groups))
    if not parts:
        return None
    return (
        "the replicas sharing this state are not set up alike: "
        + "; ".join(parts)
        + " — a caller the load balancer sends to one replica is let in without a token, or "
        "refused with what another takes (webhooks alike); give every replica the same "
        "BRIEFD_API_TOKEN, sync.webhook_secret and state.url"
    )


def _read(line: str) -> dict[str, object]:
    try:
        found = json.loads(line)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _groups(key: str, groups: dict[object, list[str]]) -> str:
    """``not set on a; set on b, c`` (one value set), ``value 1 on a; value 2 on b``, or the
    TLS modes as they are."""
    secrets = [v for v in groups if v is not None]
    said = []
    for value, names in groups.items():
        if key == "sslmode":
            what = str(value)
        elif value is None:
            what = "not set"
        elif len(secrets) == 1:
            what = "set"
        else:
            what = f"value {secrets.index(value) + 1}"
        said.append(f"{what} on {', '.join(names)}")
    return (": " if key == "sslmode" else " is ") + "; ".join(said)


class Agreement:
    """This replica's line said in the shared state, and what the replicas disagree on (said
    in the log once per change)."""

    def __init__(self, shared: SharedState, line: str) -> None:
        self.shared = shared
        self.line = line
        self._said: str | None = None
        self._lock = threading.Lock()

    def announce(self, line: str | None) -> bool:
        try:
            self.shared.save_access(line)
        except BriefdError as exc:  # PostgreSQL away: said by the state; tried again
            log.debug("could not say this replica's settings: %s", exc)
            return False
        return True

    def problem(self) -> str | None:
        """What the replicas that said so lately disagree on (None: alike, or unknown now)."""
        try:
            lines = self.shared.accesses(FRESH_SECONDS)
        except BriefdError:  # the state's own error is what health says then
            return None
        found = disagreement(lines) if len(lines) > 1 else None
        with self._lock:
            if found != self._said and found is not None:
                log.error("%s", found)
            elif found != self._said:
                log.warning("the replicas sharing this state are set up alike again")
            self._said = found
        return found


def agreement_of(state: ServiceState) -> Agreement | None:
    """The serving process's :class:`Agreement` (None: one node, or not serving HTTP)."""
    found = getattr(state, "agreement", None)
    return found if isinstance(found, Agreement) else None


@asynccontextmanager
async def announced(state: ServiceState) -> AsyncIterator[None]:
    """While the HTTP server serves: this replica's line said every :data:`ANNOUNCE_SECONDS`
    (and at once), the replicas compared, and at the end its line taken back (stopped)."""
    shared = state.api.state
    if not shared.shared:
        yield
        return
    line = await anyio.to_thread.run_sync(access_line, state.config, state.api.settings)
    agreement = Agreement(shared, line)
    state.agreement = agreement

    async def forever() -> None:
        while True:
            if await anyio.to_thread.run_sync(agreement.announce, agreement.line):
                await anyio.to_thread.run_sync(agreement.problem)
            await anyio.sleep(ANNOUNCE_SECONDS)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(forever)
        try:
            yield
        finally:
            tasks.cancel_scope.cancel()
    with anyio.CancelScope(shield=True):
        await anyio.to_thread.run_sync(agreement.announce, None)
