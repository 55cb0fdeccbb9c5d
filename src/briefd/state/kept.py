"""What a replica could not write to PostgreSQL while it was away, kept in memory to write when
it answers again: bundle manifests (for the other replicas' ``base=`` and usage reports) and
recall injections (a session's no-repeat memory, which this replica also answers from
meanwhile). Bounded: the oldest go first. Pure."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from briefd.state.model import Manifest

MAX_KEPT = 1_000  # bundles, and sessions, kept while the server is away


@dataclass
class Unshared:
    manifests: dict[str, tuple[Manifest, str]] = field(default_factory=dict)
    # session id → chunk id → (content hash, when injected)
    injections: dict[str, dict[str, tuple[str, float]]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def keep_manifest(self, bundle_id: str, manifest: Manifest, at: str) -> None:
        with self._lock:
            self.manifests[bundle_id] = (manifest, at)
            _bound(self.manifests)

    def keep_injections(self, session_id: str, sections: list[tuple[str, str]], now: float) -> None:
        with self._lock:
            given = self.injections.pop(session_id, {})  # the newest session last
            given.update({chunk: (digest, now) for chunk, digest in sections})
            self.injections[session_id] = given
            _bound(self.injections)

    def seen(self, session_id: str, since: float) -> dict[str, str]:
        """chunk id → content hash of what this replica gave ``session_id`` since ``since``."""
        with self._lock:
            given = self.injections.get(session_id, {})
            return {chunk: digest for chunk, (digest, at) in given.items() if at >= since}

    def take(self) -> Unshared:
        """Everything kept, which is forgotten here (give it back if it cannot be written)."""
        with self._lock:
            taken = Unshared(self.manifests, self.injections)
            self.manifests, self.injections = {}, {}
            return taken

    def give_back(self, taken: Unshared) -> None:
        with self._lock:
            self.manifests = taken.manifests | self.manifests
            for session, given in taken.injections.items():
                self.injections[session] = given | self.injections.get(session, {})
            _bound(self.manifests)
            _bound(self.injections)


def _bound(kept: dict[str, Any]) -> None:
    while len(kept) > MAX_KEPT:
        del kept[next(iter(kept))]
