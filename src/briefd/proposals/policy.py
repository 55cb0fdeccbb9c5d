"""Where a proposal's branch may go (T1). Nowhere until ``proposals.enabled``. To the configured
source remote when ``source`` is a git URL (briefd's own clone). Never to the upstream of a
user's own checkout (``make run`` serves the example from inside this repository's clone)
unless ``proposals.push`` says so, with ``true`` or the remote's name: without that, the branch
is made in the checkout and stays there. ``proposals.push: false`` never pushes. Pure."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from briefd.errors import ProposalError, ProposalsOffError
from briefd.settings import Settings
from briefd.sources.knowledge import GitTarget

OFF = (
    "proposals are off on this server: an agent's change would become a branch in the team's "
    "repository, so briefd only does that when `proposals.enabled: true` is set in briefd.yaml"
)


@dataclass(frozen=True, slots=True)
class Delivery:
    """The repository and base branch to build on; ``pushed``: the remote gets the branch
    (False: it stays a local branch of the repository)."""

    target: GitTarget
    pushed: bool
    url: str | None  # the remote's URL (a forge finds its repository there)


def require_enabled(settings: Settings) -> None:
    if not settings.proposals.enabled:
        raise ProposalsOffError(OFF)


def reaches_out(settings: Settings) -> bool:
    """Proposals may push or call a forge (the MCP tool's ``openWorldHint``)."""
    if not settings.proposals.enabled:
        return False
    push = settings.proposals.push
    pushes = push is True or isinstance(push, str) or (push is None and bool(settings.sync.remote))
    return pushes or settings.forge.type != "none"


def delivery(
    settings: Settings, target: GitTarget, url: str | None, url_of: Callable[[str], str | None]
) -> Delivery:
    """Where the proposal goes under ``proposals.push``; ``url``: the target remote's URL,
    ``url_of``: the URL of another remote of the repository (None: no such remote)."""
    push = settings.proposals.push
    if push is False or (push is None and not target.configured):
        return Delivery(target, pushed=False, url=url)
    if isinstance(push, str) and push != target.remote:
        if target.configured:
            raise ProposalError(
                f"proposals.push names the remote '{push}', but the source is a git URL whose "
                "clone has only that URL; set proposals.push to true or false"
            )
        target, url = replace(target, remote=push), url_of(push)
    if url is None:
        raise ProposalError(
            f"proposals.push sends proposals to the remote '{target.remote}', which the "
            f"knowledge checkout {target.repo} does not have; add it with `git remote add "
            f"{target.remote} URL`, or name another remote in proposals.push"
        )
    return Delivery(target, pushed=True, url=url)
