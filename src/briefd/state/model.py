"""The nouns of the shared state: what both engines store and hand back. Pure."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Proposal:
    """A stored knowledge change proposal (T1); see :mod:`briefd.proposals`."""

    id: str
    branch: str
    doc_path: str
    description: str
    commit_hash: str | None
    pr_url: str | None
    status: str
    client: str | None
    created_at: str
    pr_number: int | None = None
    base_branch: str | None = None
    base_commit: str | None = None
    forge_error: str | None = None  # the last forge failure for this proposal, if any
    status_checked_at: str | None = None


@dataclass(frozen=True, slots=True)
class Manifest:
    """What a bundle held (B5): its request key, (chunk id, fingerprint of what the client holds,
    tokens) per section, and the knowledge commit and replica it was compiled on (None on a
    single node)."""

    request_key: str
    sections: tuple[tuple[str, str, int], ...]
    commit: str | None = None
    replica: str | None = None


@dataclass(frozen=True, slots=True)
class ReplicaStatus:
    """One replica as it last said: the knowledge commit and index it serves, when."""

    replica: str
    commit: str | None
    fingerprint: str | None
    seen_at: str
    last_error: str | None = None
