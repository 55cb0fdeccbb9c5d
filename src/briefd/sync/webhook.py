"""GitHub-style webhook signatures (K3): ``X-Hub-Signature-256: sha256=<hex>``, an
HMAC-SHA256 of the raw request body keyed with ``sync.webhook_secret``; and the replay window
over signed deliveries."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

PREFIX = "sha256="


def signature(secret: str, body: bytes) -> str:
    """The header value a sender with ``secret`` puts on ``body``."""
    return PREFIX + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify_signature(secret: str, body: bytes, header: str | None) -> bool:
    """True only when ``header`` is the signature of ``body`` under a non-empty ``secret``
    (compared in constant time)."""
    if not secret or not header or not header.startswith(PREFIX):
        return False
    return hmac.compare_digest(signature(secret, body).encode(), header.strip().encode())


MAX_REMEMBERED = 10_000


class Deliveries:
    """Signed deliveries received in the last ``window`` seconds (K3), so a replay starts
    nothing: a ``X-GitHub-Delivery`` id or a body seen before is refused, and so is a push
    whose own signed ``repository.pushed_at`` is older than the window (a body captured long
    ago and sent again under a new id). At most :data:`MAX_REMEMBERED` are kept. Only signed
    deliveries are recorded: an unsigned request cannot spend an id. Thread-safe."""

    def __init__(self, window: float, clock: Callable[[], float] = time.time) -> None:
        self.window = window
        self.clock = clock
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
            for key in keys:
                if key in self._seen:
                    what = "delivery " + key[3:] if key.startswith("id:") else "the same body"
                    return f"{what} was already received; a replayed delivery starts nothing"
            for key in keys:
                self._seen[key] = now
        return None

    def _forget(self, now: float) -> None:
        while self._seen and (
            next(iter(self._seen.values())) < now - self.window or len(self._seen) > MAX_REMEMBERED
        ):
            self._seen.popitem(last=False)


def _pushed_at(body: bytes) -> float | None:
    """A push event's ``repository.pushed_at`` (seconds since the epoch), if the body has one."""
    try:
        repository = json.loads(body).get("repository")
        pushed = repository.get("pushed_at") if isinstance(repository, dict) else None
    except (ValueError, AttributeError):
        return None
    if isinstance(pushed, int | float) and not isinstance(pushed, bool):
        return float(pushed)
    return None
