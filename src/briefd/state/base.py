"""The one narrow interface to the state replicas share (see :mod:`briefd.state`): the query
log and usage feedback, proposals, recall sessions, bundle manifests and replica status, plus
the coordination primitives (a broadcast, a lock held by one replica at a time, and the
webhook deliveries already received).
:class:`~briefd.state.local.LocalState` keeps it in the SQLite index (one node, the default);
:class:`~briefd.state.postgres.PostgresState` in PostgreSQL (``state.url``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from briefd.state.model import Manifest, Proposal, ReplicaStatus
from briefd.state.sessions import SessionMemory

if TYPE_CHECKING:
    from briefd.store.activity import QueryLogEntry

SYNC_CHANNEL = "briefd_sync"
# what a listener is called with after it was not listening for a while (PostgreSQL away)
MISSED = ""


class SharedState(SessionMemory, Protocol):
    """Every method raises :class:`~briefd.errors.StateUnavailableError` (fast) when the
    engine cannot be reached, and :class:`~briefd.errors.StoreError` for other trouble."""

    @property
    def engine(self) -> str:
        """``sqlite`` or ``postgresql``."""
        ...

    @property
    def shared(self) -> bool:
        """True when other processes share this state (replicas)."""
        ...

    def problem(self) -> str | None:
        """None when the engine answers now; else what is wrong, in one line."""
        ...

    # the query log and usage feedback (T2, T3, T6)
    def query_salt(self) -> bytes: ...
    def save_queries(
        self, entries: Sequence[QueryLogEntry], documents: Mapping[str, str]
    ) -> None: ...
    def recent_queries(self, limit: int = 100) -> list[QueryLogEntry]: ...
    def save_usage(
        self, bundle_id: str, chunk_ids: Sequence[str], client: str | None, at: str
    ) -> int: ...
    def query_rows(self, since: str) -> list[tuple[Any, ...]]:
        """Query log rows since ``since``, columns in the SQLite table's order (reports)."""
        ...

    def usage_rows(self, since: str) -> list[tuple[Any, ...]]:
        """Usage rows since ``since``, columns in the SQLite table's order (reports)."""
        ...

    def prune_before(self, cutoff: str) -> tuple[int, int]: ...
    def text_hashes(self, hashes: Sequence[str]) -> set[str]:
        """Those of ``hashes`` that entries logged with their text still have (the phrasings
        whose vectors the gaps report may keep)."""
        ...

    def forget_text(self, log_prompts: str, hook: str) -> int:
        """Take out of the query log the text (``hashed``) or text and hash (``off``) the
        modes no longer keep, once per change of them; how many entries changed."""
        ...

    def counts(self) -> dict[str, int]:
        """``queries_logged``, ``usage_events``, and proposals by status."""
        ...

    # proposals (T1)
    def save_proposal(self, proposal: Proposal) -> None: ...
    def proposals(self, status: str | None = None) -> list[Proposal]: ...
    def open_pulls(self) -> list[Proposal]: ...
    def record_check(
        self, proposal_id: str, status: str | None, error: str | None, at: str
    ) -> None: ...
    def unfollowed(self) -> list[Proposal]:
        """Proposals whose pull request no status read follows, oldest first: pushed without
        one (it may be opened by hand), closed (it may be reopened)."""
        ...

    def record_pull(self, proposal_id: str, number: int, url: str, status: str, at: str) -> None:
        """The pull request found for an unfollowed proposal: followed from now on."""
        ...

    # bundle manifests (B5)
    def save_manifest(self, bundle_id: str, manifest: Manifest, at: str) -> None: ...
    def manifest(self, bundle_id: str) -> Manifest | None: ...
    def prune_manifests(self, cutoff: str) -> int: ...

    # replicas and coordination
    def save_replica(self, status: ReplicaStatus) -> None: ...
    def replicas(self) -> list[ReplicaStatus]: ...
    def prune_replicas(self, cutoff: str) -> int:
        """Forget replicas last seen before ``cutoff`` (gone: scaled down, renamed)."""
        ...

    def save_access(self, line: str | None) -> None:
        """Say what this replica asks of its callers (its token, webhook secret, TLS: a line
        of ``service.agreement``; ``None``: it stopped), so the others can compare."""
        ...

    def accesses(self, fresh_seconds: float) -> dict[str, str]:
        """Each replica's line that was said within ``fresh_seconds``, by replica name."""
        ...

    def claim_deliveries(self, keys: Sequence[str], now: float, window: float) -> str | None:
        """Record signed webhook deliveries (their id and body digest, ``keys``) received at
        ``now`` (epoch seconds), unless one of them was within ``window`` seconds before: then
        that key is returned (a replay, to any replica) and nothing is recorded. Older ones
        are forgotten."""
        ...

    def broadcast(self, channel: str, payload: str) -> None:
        """Tell every other replica (their :meth:`listen` callbacks get ``payload``)."""
        ...

    def listen(self, channel: str, callback: Callable[[str], None]) -> None:
        """Call ``callback`` with what other replicas broadcast on ``channel`` (a thread),
        and with :data:`MISSED` once listening again after a time it could not."""
        ...

    def exclusive(self, name: str, wait: float = 0.0) -> AbstractContextManager[bool]:
        """Yields True when this replica holds the lock ``name`` (no other does meanwhile),
        False when another holds it, after waiting ``wait`` seconds for it to be released
        (none by default; a replica frozen while it holds the lock never releases it)."""
        ...

    def close(self) -> None: ...
