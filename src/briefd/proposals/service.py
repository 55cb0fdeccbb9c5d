"""Proposing a knowledge change and following its pull request (T1)."""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from briefd.errors import (
    BriefdError,
    BusyError,
    ForgeAccessError,
    ForgeRateLimitedError,
    ForgeServerError,
    ForgeTokenError,
    IndexNotFoundError,
    ProposalError,
    ProposalRemoteError,
    StateUnavailableError,
)
from briefd.proposals.branch import (
    Author,
    Change,
    local_proposal,
    push_proposal,
    same_text,
)
from briefd.proposals.follow import follow_branches
from briefd.proposals.forge import GitHub, PullRequest, forge_client, open_forge
from briefd.proposals.form import served_body
from briefd.proposals.landed import merged_locally
from briefd.proposals.model import Proposal, ProposalRequest
from briefd.proposals.policy import Delivery, delivery, require_enabled
from briefd.proposals.pushed import pushed_to
from briefd.proposals.upstream import refuse_no_upstream
from briefd.proposals.validate import check_read, checked_path
from briefd.settings import Settings
from briefd.sources import knowledge as sources
from briefd.sources.knowledge import remote_url
from briefd.state import SharedState
from briefd.store import freshness
from briefd.store.db import Store
from briefd.store.scopes import known_scopes
from briefd.sync.state import Refresh
from briefd.text import whole_characters

log = logging.getLogger("briefd.proposals")

TITLE_CHARS = 72
PUSH_STEPS = 4  # a push's git commands and its pull request: what another's push may take
PUSH_BUSY = (
    "another replica has held the proposal push lock for {wait:g} s (its push still runs, or "
    "the replica is frozen); nothing was pushed: propose again later, and if it stays held, "
    "restart the replica holding it (PostgreSQL pg_locks, advisory lock briefd:proposal-push)"
)
NOT_PUSHED_FOR_FORGE = (
    "forge.type opens pull requests from pushed branches, and this source's proposals stay "
    "local (proposals.push); set proposals.push: true to push them to '{remote}', or forge.type: none"
)
UNRECORDED = (
    "{branch} is pushed{pull}, but the shared state did not record the proposal, so briefd "
    "will not list it or follow its pull request: {reason}. Do not propose it again: the "
    "change is on the remote"
)
NO_PULL = (
    "{reason}; the branch {branch} is pushed, so nothing is lost: open a pull request from it "
    "into {base} by hand, or fix the forge setting (forge.* in briefd.yaml, or its token) and "
    "propose again"
)
SUPERSEDED = (
    "superseded: the same text was proposed again as {new}; this branch is left on the "
    "remote, delete it when you like"
)
LIMITED_READS = (
    "GitHub rate-limits the token: %d of %d pull request statuses unread, left for the next sync "
    "(GitHub takes the token's requests again %s)"
)
TOKEN_REFUSED = (
    "{problem}; GitHub refuses the token itself (expired, revoked, or not the one meant), and "
    "would refuse every other request alike, so this sync asked it nothing more: {unread} of "
    "{total} open pull requests unread, each keeping its last status; put a valid token in "
    "${env} (forge.token_env) where briefd runs (a running server reads it when it starts)"
)
REPO_REFUSED = (
    "{problem}; GitHub answers so for forge.repo's repository with this token, and would answer "
    "every other request about it alike, so this sync asked it nothing more: {unread} of "
    "{total} open pull requests unread, each keeping its last status"
)
UNSURE_NO_PULL = (
    "{reason}; the branch {branch} is pushed, so nothing is lost, and GitHub failed on its side "
    "(no setting of briefd's is wrong): the next sync follows a pull request GitHub opened from "
    "it all the same; if none shows, open one from it into {base} by hand, or propose again "
    "once GitHub answers"
)
LIMITED_NO_PULL = (
    "{reason}; the branch {branch} is pushed, so nothing is lost: open a pull request from it "
    "into {base} by hand, or propose again {again} (sooner, GitHub refuses it again)"
)


def propose(
    settings: Settings,
    request: ProposalRequest,
    state: Callable[[], SharedState],
    index: Callable[[], Store],
) -> Proposal:
    """Validate, make a one-commit branch (pushed where :mod:`.policy` allows, else local),
    open a pull request when a forge is configured, and store the proposal in the shared
    state ``state`` opens (callers need no lock). The serving checkout and the index are not
    touched; the index (``index``) says which commit the served text was read at. Without an
    index or a reachable state nothing is pushed (the error says why)."""
    require_enabled(settings)
    request = replace(request, new_content=served_body(request.new_content, request.doc_path))
    doc_path = checked_path(request, settings, lambda: _indexed_scopes(index))
    going = locate(settings)
    refuse_no_upstream(going.target, settings.sync.branch, settings.proposals.git_timeout)
    check_read(doc_path, going.target.repo / going.target.prefix, settings)
    with index().read() as conn:
        read_at = freshness.served_commit(conn)
        served_hash = freshness.served_hash(conn, doc_path)
    store = state()
    problem = store.problem()
    if problem is not None:
        raise StateUnavailableError(f"nothing was pushed: {problem}")
    client, proxy = forge_client(settings.forge)
    with client:
        # config gaps fail early too
        forge = open_forge(settings.forge, going.url, client, settings.project_named, proxy)
        if forge is not None and not going.pushed:
            raise ProposalError(NOT_PUSHED_FOR_FORGE.format(remote=going.target.remote))
        wait = PUSH_STEPS * settings.proposals.git_timeout
        read = (read_at, served_hash)
        proposal = _pushed(
            store, lambda: _make(settings, request, doc_path, going, read, store), forge, wait
        )
    try:
        store.save_proposal(proposal)
    except StateUnavailableError as exc:  # the server went away after the push
        pull = f" (pull request {proposal.pr_url})" if proposal.pr_url else ""
        said = UNRECORDED.format(branch=proposal.branch, pull=pull, reason=exc)
        raise StateUnavailableError(said) from exc
    _supersede(store, proposal, going, settings.proposals.git_timeout)
    return proposal


def _indexed_scopes(index: Callable[[], Store]) -> list[str]:
    with index().read() as conn:
        return known_scopes(conn)


def _supersede(store: SharedState, proposal: Proposal, going: Delivery, timeout: float) -> None:
    """Close the proposals pushed without a pull request (the forge refused it) that proposed
    the very text ``proposal`` proposes again, as their refusal advised: else each stayed
    "pushed" with its old error for good, and every sync looked for its pull request. Their
    branches stay on the remote (briefd deletes nothing there). Never fails the proposal."""
    if proposal.status not in ("pushed", "open"):
        return
    try:
        for old in store.proposals("pushed"):
            if old.id == proposal.id or old.pr_number or old.doc_path != proposal.doc_path:
                continue
            if not old.commit_hash or not proposal.commit_hash:
                continue
            commits = (old.commit_hash, proposal.commit_hash)
            if same_text(going.target, commits, proposal.doc_path, timeout):
                said = SUPERSEDED.format(new=_named(proposal))
                store.record_check(old.id, "closed", said, _now())
    except BriefdError as exc:
        log.warning("proposals proposed again not closed: %s", exc)


def _pushed(
    store: SharedState, make: Callable[[], Proposal], forge: GitHub | None, wait: float
) -> Proposal:
    """The proposal made and pushed (its pull request opened) by one replica at a time, after
    ``wait`` seconds at most for another's. The server going away ends the lock's
    transaction, not the work: what was pushed is kept."""
    made: Proposal | None = None
    try:
        with store.exclusive("proposal-push", wait=wait) as mine:
            if not mine:
                raise BusyError(PUSH_BUSY.format(wait=wait))
            made = make()
            if forge is not None:
                made = _open_pull(forge, made)
    except StateUnavailableError:
        if made is None:
            raise
    assert made is not None
    return made


def _make(
    settings: Settings,
    request: ProposalRequest,
    doc_path: str,
    going: Delivery,
    read: tuple[str, str],
    store: SharedState,
) -> Proposal:
    """The proposal made (``read``: the commit the index serves, and the SHA-256 of the
    document's file as it read it)."""
    proposal_id = secrets.token_hex(4)
    branch = settings.proposals.branch_prefix + proposal_id
    author = Author(settings.proposals.author_name, settings.proposals.author_email)
    description = request.change_description.strip()
    earlier = tuple(
        (p.doc_path, p.commit_hash, _named(p), p.branch, "local" if s == "local" else "remote")
        for s in (*WAITING, "pushed")
        for p in store.proposals(s)
        if p.commit_hash and (s != "pushed" or _reviewed_as_pushed(p))
    )
    read_at, served_hash = read
    message = description + "\n"
    change = Change(doc_path, request.new_content, message, author, read_at, earlier, served_hash)
    make = push_proposal if going.pushed else local_proposal
    with sources.clone_in_use(settings):  # a sync's lock-file cleanup leaves this git's alone
        made = make(going.target, branch, change, settings.proposals.git_timeout)
    return Proposal(
        id=proposal_id,
        branch=branch,
        doc_path=made.doc_path,
        description=description,
        commit_hash=made.commit,
        pr_url=None,
        status="pushed" if going.pushed else "local",
        client=request.client,
        created_at=_now(),
        base_branch=going.target.base_branch,
        base_commit=made.base_commit,
        pushed_to=pushed_to(going.url) if going.pushed else None,
    )


# proposals that wait for review: a pull request open at the last sync, a local branch (while
# it is there); a pushed branch without one may have been deleted unseen
WAITING = ("local", "open")


def _reviewed_as_pushed(proposal: Proposal) -> bool:
    """A pushed proposal that waits for review as it is: no forge opens pull requests
    (``forge.type: none``), so its branch is what a reviewer merges or deletes. One whose pull
    request the forge refused (``forge_error``) is proposed again as its refusal advises."""
    return proposal.pr_number is None and proposal.forge_error is None


def _named(proposal: Proposal) -> str:
    pull = f", pull request {proposal.pr_url}" if proposal.pr_url else ""
    return f"proposal {proposal.id} (branch {proposal.branch}, {proposal.status}{pull})"


def _open_pull(forge: GitHub, proposal: Proposal) -> Proposal:
    """The branch is pushed whatever happens here; a refusal is kept in ``forge_error``, with
    what the caller can do about it (every front end shows that field)."""
    title = proposal.description.splitlines()[0]
    if len(title) > TITLE_CHARS:
        title = title[: whole_characters(title, TITLE_CHARS - 1)] + "…"
    by = f" by {code_span(proposal.client)}" if proposal.client else ""
    body = f"{proposal.description}\n\n---\nProposed through briefd for "
    body += f"{code_span(proposal.doc_path)}{by}."
    base = proposal.base_branch or "main"
    try:
        pull = forge.create_pull(proposal.branch, base, title, body)
    except ProposalError as exc:  # ProposalRemoteError too: the forge did not answer, or 5xx
        unanswered = isinstance(exc, ProposalRemoteError)
        found = _opened_anyway(forge, proposal.branch) if unanswered else None
        if found is None:
            return replace(proposal, forge_error=_no_pull(exc, proposal.branch, base))
        pull = found
    return replace(proposal, pr_url=pull.url, pr_number=pull.number, status=pull.status)


def code_span(text: str) -> str:
    """``text`` as one Markdown code span, read as written: fenced by one backtick more than
    its longest run of them (a backtick in it ended a span of one, and the rest read as
    Markdown: a mention, a link), set off by spaces when it starts or ends with one."""
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _no_pull(refusal: ProposalError, branch: str, base: str) -> str:
    """What to do about a pull request not opened: a rate limit needs no setting fixed, only
    the wait it names; nor does a server error, after which GitHub may still show one."""
    if isinstance(refusal, ForgeRateLimitedError):
        again = refusal.again
        return LIMITED_NO_PULL.format(reason=refusal, branch=branch, base=base, again=again)
    said = UNSURE_NO_PULL if isinstance(refusal, ForgeServerError) else NO_PULL
    return said.format(reason=refusal, branch=branch, base=base)


def _opened_anyway(forge: GitHub, branch: str) -> PullRequest | None:
    """The pull request a forge that did not answer in time, or answered with a server error,
    opened all the same (else
    "propose again" would open a second one, and opening one by hand would be refused)."""
    try:
        return forge.find_pull(branch)
    except ProposalError:
        return None


LOCAL_BRANCH = (
    "a local branch of the repository {repo}, not pushed anywhere (proposals.push keeps this "
    "source's proposals there), so nobody sees it until it is merged there or pushed for review "
    "(git -C {repo} push {remote} {branch})"
)
PUSHED_NO_FORGE = (
    "pushed to {remote}; no pull request is opened (forge.type: none), so open one from it into "
    "{base} for review, or merge it there; syncs follow the branch: merged once {base} holds "
    "its change, closed when the branch is deleted unmerged"
)


def where_kept(settings: Settings, proposal: Proposal) -> str | None:
    """Where a new proposal's branch is and what comes next, as its answer says it (None:
    nothing to add to its status and pull request or forge error): a local one stands in the
    repository alone, never on the team's remote; a pushed one no forge follows waits there
    for someone to open its pull request."""
    if proposal.pr_url or proposal.forge_error or proposal.status not in ("local", "pushed"):
        return None
    if proposal.status == "pushed" and settings.forge.type != "none":
        return None
    try:
        going = locate(settings)
    except BriefdError:  # the checkout moved since: the status alone is left to say
        return None
    target = going.target
    if proposal.status == "local":
        remote = target.remote if going.url is not None else "<remote>"  # none of that name
        return LOCAL_BRANCH.format(repo=target.repo, remote=remote, branch=proposal.branch)
    remote = "the source's remote" if target.configured else f"the remote '{target.remote}'"
    base = proposal.base_branch or target.base_branch
    return PUSHED_NO_FORGE.format(remote=remote, base=base)


def locate(settings: Settings) -> Delivery:
    """The repository and branch a proposal is built on, and whether it is pushed."""
    target, url = sources.resolve(settings).push_target()
    return delivery(
        settings,
        target,
        url,
        lambda name: remote_url(target.repo, name, settings.proposals.git_timeout),
    )


def refresh_after_sync(
    state: Callable[[], SharedState], settings: Settings, fetched: bool = True
) -> Refresh:
    """:func:`refresh_statuses` after a sync (``fetched``: its source was updated), by one
    replica at a time (the others skip it): a forge or store problem never fails the sync."""
    try:
        shared = state()
        with shared.exclusive("forge-refresh") as mine:
            if not mine:
                return Refresh(0, (), None)
            return refresh_statuses(shared, settings, fetched)
    except IndexNotFoundError:  # no index, so no proposals either
        return Refresh(0, (), None)
    except BriefdError as exc:
        return Refresh(0, (), str(exc))


def refresh_statuses(store: SharedState, settings: Settings, fetched: bool = True) -> Refresh:
    """Read the state of every stored open pull request, and look for those opened since for
    pushed proposals that had none (by hand, as the forge's refusal advised) and those
    reopened since they were closed; local proposals whose branch was merged are merged, and
    so are pushed ones without a pull request (no forge, or merged past it) whose branch the
    base branch fetched holds; then, after a sync that reached its source (``fetched``), the
    proposal branches tell which were deleted unmerged and which lost their record
    (:mod:`.follow`). Never raises for forge or git trouble."""
    merged = _merged_locally(store, settings, "local")
    read = _forge_refresh(store, settings)
    # pushed ones after the forge: a pull request it found for one is kept, with its state
    landed = _merged_locally(store, settings, "pushed")
    followed, unfollowed = _follow(store, settings, read.error is None) if fetched else ((), None)
    error = read.error or unfollowed
    return Refresh(read.checked, merged + read.changed + landed + followed, error)


UNFOLLOWED = (
    "{count} pushed proposal(s) not followed: {problem}; they are kept as they are until a "
    "sync can reach the remote they were pushed to"
)


def _follow(
    store: SharedState, settings: Settings, forge_read: bool
) -> tuple[tuple[str, ...], str | None]:
    """The sync's changes from the proposal branches, and why they could not be followed
    (None: they were, or there are none to follow)."""
    if not settings.proposals.enabled:
        return (), None
    try:
        going = locate(settings)
    except ProposalError as exc:  # proposals.push names a remote the checkout no longer has
        waiting = [p for p in store.proposals("pushed") if not p.pr_number]
        said = UNFOLLOWED.format(count=len(waiting), problem=exc) if waiting else None
        return (), said
    except BriefdError:  # the checkout gone or moved: nothing to tell
        return (), None
    return follow_branches(store, settings, going, close_gone=forge_read), None


def _forge_refresh(store: SharedState, settings: Settings) -> Refresh:
    if settings.forge.type == "none":
        return Refresh(0, (), None)
    pending, unfollowed = store.open_pulls(), store.unfollowed()
    if not pending and not unfollowed:
        return Refresh(0, (), None)
    try:
        forge_url = locate(settings).url
    except BriefdError:
        forge_url = settings.sync.remote
    try:
        client, proxy = forge_client(settings.forge)
    except ProposalError as exc:
        return Refresh(0, (), str(exc))
    with client:
        try:
            forge = open_forge(settings.forge, forge_url, client, settings.project_named, proxy)
        except ProposalError as exc:
            return Refresh(0, (), str(exc))
        assert forge is not None
        read = _read_open(store, forge, pending, settings.forge.token_env)
        if not unfollowed or read.stopped:
            return read.refresh
        found = _found_pulls(store, forge, unfollowed)
    error = read.refresh.error or found.error
    checked = read.refresh.checked + found.checked
    return Refresh(checked, read.refresh.changed + found.changed, error)


def _merged_locally(store: SharedState, settings: Settings, status: str) -> tuple[str, ...]:
    """Proposals of ``status`` (local; pushed without a pull request) whose commit the base
    branch now holds (merged in the checkout, or on the remote and fetched), or holds
    rewritten (amended by a reviewer, rebased: :func:`.landed.merged_locally`), are merged;
    the others stay as they are (a local one whose branch was deleted unmerged no longer
    counts as waiting: :data:`WAITING`). A squash merge leaves no such commit: not seen."""
    waiting = [p for p in store.proposals(status) if p.commit_hash and not p.pr_number]
    if not waiting:
        return ()
    try:
        target = locate(settings).target
    except BriefdError:  # the checkout gone or moved: nothing to tell
        return ()
    changed: list[str] = []
    timeout = settings.proposals.git_timeout
    for proposal in waiting:
        base = proposal.base_branch or target.base_branch
        since, path = proposal.base_commit or "", proposal.doc_path
        if merged_locally(target, proposal.commit_hash or "", base, timeout, since, path):
            store.record_check(proposal.id, "merged", None, _now())
            changed.append(f"{proposal.id}: {status} → merged")
    return tuple(changed)


@dataclass(frozen=True, slots=True)
class _Read:
    refresh: Refresh
    stopped: bool  # the forge did not answer, or rate-limits the token: ask it nothing more


def _read_open(store: SharedState, forge: GitHub, pending: list[Proposal], env: str) -> _Read:
    """Read the pull requests ``pending``, oldest first, until a refusal that every other read
    would meet too (the forge away or down, answering 5xx; the token rate-limited or refused:
    ``env`` names it)."""
    changed: list[str] = []
    error: str | None = None
    checked = 0
    for proposal in pending:
        checked += 1
        status, refused = _check(forge, proposal)
        problem = None if refused is None else str(refused)
        error = problem or error
        if status is not None and status != proposal.status:
            changed.append(f"{proposal.id}: {proposal.status} → {status}")
        store.record_check(proposal.id, status, problem, _now())
        if isinstance(refused, ForgeRateLimitedError):
            unread = len(pending) - checked + 1
            log.warning(LIMITED_READS, unread, len(pending), refused.again)
        if isinstance(refused, ForgeTokenError | ForgeAccessError):  # said once, not per pull
            unread, total = len(pending) - checked + 1, len(pending)
            said = TOKEN_REFUSED if isinstance(refused, ForgeTokenError) else REPO_REFUSED
            error = said.format(problem=problem, env=env, unread=unread, total=total)
            log.warning("%s", error)
            return _Read(Refresh(checked, tuple(changed), error), stopped=True)
        # a forge that does not answer would cost every other pull request its timeout, one
        # that fails on its side (5xx: ForgeServerError, a ProposalRemoteError) would fail them
        # all, and one that rate-limits the token would refuse them all, each a request more
        if isinstance(refused, ProposalRemoteError | ForgeRateLimitedError):
            if checked < len(pending):
                error = f"{problem}; {len(pending) - checked} more left for the next sync"
            return _Read(Refresh(checked, tuple(changed), error), stopped=True)
    return _Read(Refresh(checked, tuple(changed), error), stopped=False)


def _found_pulls(store: SharedState, forge: GitHub, unfollowed: list[Proposal]) -> Refresh:
    """The pull requests of unfollowed proposals, where the list of those updated last shows
    one opened (a pushed proposal's branch's) or reopened (a closed one's number) since; they
    are followed from now on. One request for them all; the others stay as they were."""
    try:
        recent = forge.recent_pulls()
    except ProposalError as exc:
        return Refresh(0, (), str(exc))
    by_branch: dict[str, PullRequest] = {}
    for branch, pull in recent:
        by_branch.setdefault(branch, pull)  # the one of a branch updated last
    by_number = {pull.number: pull for _, pull in recent}
    changed: list[str] = []
    for proposal in unfollowed:
        number = proposal.pr_number
        now = by_branch.get(proposal.branch) if number is None else by_number.get(number)
        if now is not None and now.status != proposal.status:
            store.record_pull(proposal.id, now.number, now.url, now.status, _now())
            changed.append(f"{proposal.id}: {proposal.status} → {now.status}")
    return Refresh(0, tuple(changed), None)  # checked: the open pull requests read


def _check(forge: GitHub, proposal: Proposal) -> tuple[str | None, ProposalError | None]:
    """The pull request's status (None: unknown) and the refusal reading it (None: read)."""
    assert proposal.pr_number is not None
    try:
        return forge.pull(proposal.pr_number).status, None
    except ProposalError as exc:  # ProposalRemoteError: the forge did not answer, or 5xx
        return None, exc


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")  # two a second: still ordered
