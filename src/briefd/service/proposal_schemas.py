"""Wire shapes of proposals (G1), shared by REST (OpenAPI) and MCP (``outputSchema``), and
the pure conversion from :class:`briefd.proposals.model.Proposal` into them."""

from __future__ import annotations

from pydantic import BaseModel, Field

from briefd.proposals.model import Proposal, ProposalStatus
from briefd.service.request_body import RequestIn


class ProposalIn(RequestIn):
    doc_path: str = Field(min_length=1, max_length=1000, description="e.g. domain/retry.md")
    # no min_length: an empty or blank text gets the proposal check's own words (400), alike
    change_description: str = Field(
        max_length=10_000, description="Why; becomes the commit message."
    )
    new_content: str = Field(
        max_length=2_000_000,
        description="The complete new Markdown (the document's front matter is kept when this "
        "has none).",
    )
    scopes: list[str] | None = Field(None, description="Scopes the caller may see ('all').")
    client: str | None = Field(None, max_length=200)


# Every field of briefd.proposals.model.Proposal (a test keeps them in step), in the order REST
# has always sent them. No docstring: it would become the schema's description on both surfaces.
class ProposalOut(BaseModel):
    id: str
    branch: str
    doc_path: str
    description: str
    commit_hash: str | None
    pr_url: str | None
    pr_number: int | None
    status: ProposalStatus | str
    client: str | None
    created_at: str
    base_branch: str | None
    base_commit: str | None
    forge_error: str | None
    status_checked_at: str | None
    pushed_to: str | None = Field(
        default=None,
        description="The URL (without credentials) of the remote the branch was pushed to; "
        "null for a local proposal, or one pushed before briefd recorded where.",
    )
    superseded_by: list[str] | None = Field(  # only in the answer to a new proposal
        default=None,
        exclude_if=lambda value: not value,
        description="Documents whose front matter says they supersede doc_path: the current "
        "text is there, and a change to the rule may belong there instead.",
    )
    where: str | None = Field(  # only in the answer to a new proposal
        default=None,
        exclude_if=lambda value: value is None,
        description="Where the new proposal's branch is and what comes next, when status and "
        "pr_url do not say it: a local branch of the checkout, not pushed anywhere (how to push "
        "it), or a branch pushed with no forge to open its pull request (forge.type: none). "
        "The same words as the MCP answer's text.",
    )


class ProposalsOut(BaseModel):
    proposals: list[ProposalOut]
    counts: dict[str, int]
    total: int = Field(description="Proposals of the status asked, those of other pages too.")
    next_cursor: str | None = Field(
        default=None,
        description="Pass as cursor for the next page (null: no more proposals).",
    )


def proposal_out(proposal: Proposal) -> ProposalOut:
    """The one wire shape of a proposal, for REST and MCP alike."""
    return ProposalOut.model_validate(proposal, from_attributes=True)
