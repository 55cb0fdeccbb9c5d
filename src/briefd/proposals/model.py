"""The nouns of proposals: what a caller asks for and what is stored."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from briefd.state.model import Proposal

__all__ = ["Proposal", "ProposalRequest", "ProposalStatus"]

# local: a branch in the knowledge checkout, not pushed (proposals.push); pushed: a branch on
# the remote without a pull request (no forge, or the forge refused: see forge_error)
ProposalStatus = Literal["local", "pushed", "open", "merged", "closed"]


@dataclass(frozen=True, slots=True)
class ProposalRequest:
    """Replace (or create) ``doc_path`` with ``new_content``; ``change_description`` becomes
    the commit message. ``scopes`` are the scopes the caller may see (default: the default
    scopes; ``all``: every scope)."""

    doc_path: str
    change_description: str
    new_content: str
    scopes: tuple[str, ...] | None = None
    client: str | None = None
