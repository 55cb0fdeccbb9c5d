"""Knowledge change proposals (T1): an agent's suggested edit becomes a branch
``briefd/proposal-<id>`` with one commit on the knowledge remote and, with a GitHub forge
configured, a pull request. The serving checkout and the index are never touched.

Modules: :mod:`~briefd.proposals.model` (request and record), :mod:`~briefd.proposals.validate`
(pure checks), :mod:`~briefd.proposals.branch` (git plumbing), :mod:`~briefd.proposals.forge`
(GitHub REST), :mod:`~briefd.proposals.service` (propose and refresh; proposals are stored in
the shared state, :mod:`briefd.state`).
"""

from briefd.proposals.model import Proposal, ProposalRequest

__all__ = ["Proposal", "ProposalRequest"]
