"""The nouns of the shared state: what both engines store and hand back. Pure."""

from __future__ import annotations

from dataclasses import dataclass

ADOPTED_AS = "adopted at a sync:"  # how the forge_error of a proposal a sync adopted starts
# how the forge_error starts of a pushed proposal whose remote a sync could not ask (removed
# from the repository, or not answering): kept as it is, that said (proposals.pushed)
UNFOLLOWED_AS = "not followed at the last sync:"
# a proposal's own record, written after a sync adopted its branch (a record that waited, or a
# commit whose clock was behind), replaces the adopted one, which knew neither its client nor
# its pull request; a record a later sync changed, or another proposal's, is left alone
REPLACES_ADOPTED = (
    " ON CONFLICT (id) DO UPDATE SET branch = excluded.branch, doc_path = excluded.doc_path, "
    "description = excluded.description, pr_url = excluded.pr_url, status = excluded.status, "
    "client = excluded.client, created_at = excluded.created_at, pr_number = "
    "excluded.pr_number, base_branch = excluded.base_branch, base_commit = "
    "excluded.base_commit, forge_error = excluded.forge_error, status_checked_at = "
    "excluded.status_checked_at, pushed_to = excluded.pushed_to WHERE proposals.commit_hash = excluded.commit_hash AND "
    f"proposals.client IS NULL AND proposals.forge_error LIKE '{ADOPTED_AS}%'"
)


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
    # the URL (without user:token@) of the remote its branch was pushed to; None: not pushed,
    # or pushed before briefd recorded where
    pushed_to: str | None = None


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
