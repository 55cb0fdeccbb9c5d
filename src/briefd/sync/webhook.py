"""GitHub-style webhook signatures (K3): ``X-Hub-Signature-256: sha256=<hex>``, an
HMAC-SHA256 of the raw request body keyed with ``sync.webhook_secret``."""

from __future__ import annotations

import hashlib
import hmac

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
