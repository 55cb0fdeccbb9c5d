"""GitHub-style webhook signatures (K3): ``X-Hub-Signature-256: sha256=<hex>``, an
HMAC-SHA256 of the raw request body keyed with ``sync.webhook_secret``; and the replay window
over signed deliveries; which pushes a sync follows."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qs, urlsplit

from briefd.errors import BriefdError

PREFIX = "sha256="
log = logging.getLogger("briefd.sync")


def signature(secret: str, body: bytes) -> str:
    """The header value a sender with ``secret`` puts on ``body``."""
    return PREFIX + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify_signature(secret: str, body: bytes, header: str | None) -> bool:
    """True only when ``header`` is the signature of ``body`` under a non-empty ``secret``
    (compared in constant time), or under ``secret`` without the white space around it: a
    secret read from a file keeps its last line break, which the forge's form never held."""
    if not secret.strip() or not header or not header.startswith(PREFIX):
        return False
    given = header.strip().encode()
    return any(
        hmac.compare_digest(signature(key, body).encode(), given)
        for key in dict.fromkeys((secret, secret.strip()))
    )


MAX_REMEMBERED = 10_000


Claim = Callable[[Sequence[str], float, float], str | None]


class Deliveries:
    """Signed deliveries received in the last ``window`` seconds (K3), so a replay starts
    nothing: a ``X-GitHub-Delivery`` id or a body seen before is refused, and so is a push
    whose own signed ``repository.pushed_at`` is older than the window (a body captured long
    ago and sent again under a new id). Only signed deliveries are recorded: an unsigned
    request cannot spend an id. Thread-safe.

    ``shared`` records them where every replica looks (the shared state's
    ``claim_deliveries``), so a delivery replayed to another replica is refused too. While it
    fails (PostgreSQL away) this process's memory, which keeps every delivery it received
    (at most :data:`MAX_REMEMBERED`), still refuses what it saw itself: degraded, not down."""

    def __init__(
        self, window: float, clock: Callable[[], float] = time.time, shared: Claim | None = None
    ) -> None:
        self.window = window
        self.clock = clock
        self.shared = shared
        self._seen: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def refusal(self, delivery: str | None, body: bytes) -> str | None:
        """Why this signed delivery is a replay (None: it is new, and is now remembered)."""
        now = self.clock()
        pushed = _pushed_at(body)
        if pushed is not None and pushed < now - self.window:
            return (
                f"the delivery is a push from {int(now - pushed)} s ago, older than "
                f"sync.webhook_window ({int(self.window)} s); a replayed delivery starts nothing"
            )
        keys = [f"id:{delivery.strip()}"] if delivery and delivery.strip() else []
        keys.append(f"body:{hashlib.sha256(body).hexdigest()}")
        with self._lock:
            self._forget(now)
            seen = self._seen_before(keys)
        if seen is None and self.shared is not None:
            seen = self._claimed(keys, now)
        with self._lock:
            seen = seen or self._seen_before(keys)  # this process's own, received meanwhile
            if seen is None:
                self._seen.update(dict.fromkeys(keys, now))
        if seen is None:
            return None
        what = "delivery " + seen[3:] if seen.startswith("id:") else "the same body"
        return f"{what} was already received; a replayed delivery starts nothing"

    def _seen_before(self, keys: Sequence[str]) -> str | None:
        return next((key for key in keys if key in self._seen), None)

    def _claimed(self, keys: Sequence[str], now: float) -> str | None:
        assert self.shared is not None
        try:
            return self.shared(keys, now, self.window)
        except BriefdError as exc:
            log.warning("webhook replays are refused by this replica's memory alone: %s", exc)
            return None

    def _forget(self, now: float) -> None:
        while self._seen and (
            next(iter(self._seen.values())) < now - self.window or len(self._seen) > MAX_REMEMBERED
        ):
            self._seen.popitem(last=False)


TOO_DEEP = "the delivery's JSON is nested too deeply to read; a push event is a few levels deep"


class UnreadableEvent(ValueError):
    """A signed delivery whose JSON cannot be read at all (nested past the reader's depth)."""


def event_payload(body: bytes) -> dict[str, Any] | None:
    """The event a delivery's body carries: JSON (content type ``application/json``) or
    ``payload=<JSON>`` (``application/x-www-form-urlencoded``, the content type GitHub's form
    starts with); None when it is neither, or not an object. Raises :class:`UnreadableEvent`
    for JSON nested deeper than Python's reader goes (RecursionError)."""
    try:
        try:
            payload = json.loads(body)
        except ValueError:
            if not body.startswith(b"payload="):
                return None
            try:
                form = parse_qs(body.decode("utf-8", "replace"), max_num_fields=10)
                payload = json.loads(form.get("payload", [""])[0])
            except ValueError:
                return None
    except RecursionError:
        raise UnreadableEvent(TOO_DEEP) from None
    return payload if isinstance(payload, dict) else None


def _pushed_at(body: bytes) -> float | None:
    """A push event's ``repository.pushed_at`` (seconds since the epoch), if the body has one."""
    repository = (event_payload(body) or {}).get("repository")
    pushed = repository.get("pushed_at") if isinstance(repository, dict) else None
    if isinstance(pushed, int | float) and not isinstance(pushed, bool):
        return float(pushed)
    return None


# git@host:owner/name.git (a one-letter host is a drive: C:/x)
_SCP_LIKE = re.compile(r"^(?:[^@/:]+@)?[^/:]{2,}:(?!//)(?P<path>.+)$")


def repository_path(url: str) -> str | None:
    """A hosted git URL's path, lower-cased, without slashes around it or ``.git``:
    ``owner/name`` of ``https://host/owner/name.git``, ``git@host:owner/name.git`` or
    ``ssh://git@host/...``; None for a folder or ``file://`` (a mirror, named as it likes)."""
    if "://" not in url:
        scp = _SCP_LIKE.match(url)
        return scp.group("path").strip("/").removesuffix(".git").lower() if scp else None
    parts = urlsplit(url)
    if not parts.hostname:
        return None
    return parts.path.strip("/").removesuffix(".git").lower()


def skipped_push(payload: Mapping[str, Any], branch: str | None, remote: str | None) -> str | None:
    """Why a GitHub push event starts no sync, if it does not: a tag; a branch other than the
    one followed (``branch``, else the repository's default branch the event names), as a
    proposal branch briefd pushed itself; another repository than ``remote``'s (one webhook
    set on an organisation, say) — told by the event's ``repository.full_name``, which ends the
    path of a hosted URL however it is written (https, ssh, a host alias)."""
    ref = payload.get("ref")
    repository = payload.get("repository")
    repository = repository if isinstance(repository, Mapping) else {}
    if isinstance(ref, str) and ref.startswith("refs/tags/"):
        return f"push of the tag {ref.removeprefix('refs/tags/')}: a sync follows a branch"
    other = other_repository(payload, remote)
    if other:
        return f"push to {other[0]}, not to the followed repository {other[1]}"
    default = repository.get("default_branch")
    followed_branch = branch or default
    if not isinstance(followed_branch, str) or not isinstance(ref, str):
        return None
    if ref.startswith("refs/heads/") and ref != f"refs/heads/{followed_branch}":
        return f"push to {ref}, not to the followed branch {followed_branch}"
    return None


def skipped_event(event: str, payload: Mapping[str, Any], remote: str | None) -> str | None:
    """Why an event other than a push starts no sync, if it does not: it comes from another
    repository than ``remote``'s (an organisation's webhook sends every repository's
    check runs, issues, pull requests...)."""
    other = other_repository(payload, remote)
    if other:
        return f"{event} event of {other[0]}, not of the followed repository {other[1]}"
    return None


def other_repository(payload: Mapping[str, Any], remote: str | None) -> tuple[str, str] | None:
    """(the event's ``repository.full_name``, the followed ``owner/name``) when the event
    names a repository and it is not the one ``remote`` is a hosted URL of; None otherwise
    (no repository in the event, or a folder or ``file://`` mirror, which is not checked)."""
    repository = payload.get("repository")
    name = repository.get("full_name") if isinstance(repository, Mapping) else None
    followed = repository_path(remote) if remote else None
    if followed and isinstance(name, str) and name and not _names(followed, name.lower()):
        return name, followed
    return None


def _names(path: str, full_name: str) -> bool:
    return path == full_name or path.endswith("/" + full_name)
