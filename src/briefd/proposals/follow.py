"""What a sync learns from the proposal branches themselves (T1). One listing of the branches
named like proposals (``proposals.branch_prefix`` + 8 hex digits, and the prefix of proposals
made before it was changed) — on the remote for pushed proposals (``git ls-remote``, one
request), in the repository for local ones — shows:

- a proposal without a pull request whose branch is gone: deleted unmerged (a reviewer's
  "no" where no forge is followed, ``forge.type: none``; a local one's branch deleted, made
  before proposals were pushed too), it is closed, saying so; merged
  when the base branch holds its text (a squash or rebase merge, its branch deleted);
- a branch whose record was lost (briefd killed between the push and the record, a full disk
  past the server's stop): adopted as a proposal once it is older than a push may take
  (:func:`adopt_after`), when it is what briefd makes (one commit by ``proposals.author_*`` changing one Markdown
  file), so it is listed and followed like the others.
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from briefd.errors import BriefdError, ProposalError, ProposalRemoteError
from briefd.proposals.branch import FETCH, same_text
from briefd.proposals.landed import merged_locally
from briefd.proposals.policy import Delivery
from briefd.proposals.pushed import look_for, pushed_to, remote_lister
from briefd.settings import Settings
from briefd.sources import git
from briefd.sources.knowledge import GitTarget
from briefd.state import SharedState
from briefd.state.model import ADOPTED_AS, UNFOLLOWED_AS, Proposal

log = logging.getLogger("briefd.proposals")

ADOPT_AFTER = 600  # seconds at least: a branch younger may be a push whose record is being
# written (longer when a push's git commands and its pull request may take longer: adopt_after)
ADOPT_REF = "refs/briefd/adopt/"  # + the id: an unrecorded branch fetched to be read
# + the id: a blob holding when a sync first saw an unrecorded branch whose commit is dated
# ahead of this machine's clock (the clock that made it was ahead, or this one is behind)
SEEN_REF = "refs/briefd/unrecorded/"
CLOCK_SLACK = 60  # seconds a commit may be dated ahead of this clock and still be believed
SUFFIXES = (".md", ".markdown")
GONE = (
    "its branch {branch} is no longer {where}, and {base} does not hold its change (deleted "
    "unmerged), so a sync closed it; propose the change again if it is still wanted"
)
EDITED = (
    "its branch {branch} is no longer {where}, and {base} holds neither its commit nor its "
    "text, but {since}: if that is this proposal merged with edits (a squash merge of the "
    "reviewer's changes), nothing is lost; else it was deleted unmerged. A sync closed it; "
    "propose the change again if it is still wanted and not on {base}"
)
ADOPTED = ADOPTED_AS + (
    " briefd found the branch {branch} without its record (briefd stopped "
    "between making the branch and recording it, or the index could not take the record), so "
    "the client that proposed it is not known"
)


def follow_branches(
    store: SharedState, settings: Settings, going: Delivery, close_gone: bool = True
) -> tuple[str, ...]:
    """Close the proposals whose branch is gone (unless not ``close_gone``: the forge, which
    may know a pull request that merged one, could not be read), adopt the branches without a
    proposal; the changes as a sync reports them ("id: pushed → closed"). Git trouble is
    logged, never raised: the next sync lists again."""
    timeout, prefix = settings.proposals.git_timeout, settings.proposals.branch_prefix
    try:
        known = store.proposals()
        try:
            listed = _listed(going, _prefixes(prefix, known), timeout)
        except ProposalRemoteError as exc:  # those pushed there say so; the others wait
            return _on_their_remotes(store, going, _recorded(known), exc, timeout).changed
        changed = _gone(store, going, known, listed, timeout) if close_gone else ()
        ours, recorded = _named(prefix), {p.branch for p in known}
        unknown = {b: c for b, c in listed.items() if ours.fullmatch(b) and b not in recorded}
        return changed + _adopt(store, settings, going, unknown)
    except BriefdError as exc:
        log.warning("proposal branches not followed: %s", exc)
        return ()


def _prefixes(prefix: str, known: list[Proposal]) -> tuple[str, ...]:
    """``proposals.branch_prefix`` and the prefixes of the branches of proposals that wait as
    branches (made before the setting was changed, as a remote's branch rules may ask): listed
    under the new prefix alone, each of those looked deleted, and a sync closed it."""
    waiting = {p.branch.removesuffix(p.id) for p in known if _unfollowed_branch(p)}
    return (prefix, *sorted(waiting - {prefix}))


def _unfollowed_branch(proposal: Proposal) -> bool:
    """A proposal :func:`_gone` looks for: a branch waiting without a pull request."""
    pushed_or_local = proposal.status in ("pushed", "local") and not proposal.pr_number
    return pushed_or_local and proposal.branch.endswith(proposal.id)


def _named(prefix: str) -> re.Pattern[str]:
    return re.compile(re.escape(prefix) + "[0-9a-f]{8}")


def _listed(going: Delivery, prefixes: tuple[str, ...], timeout: float) -> dict[str, str]:
    """The branches named like proposals under any of ``prefixes`` where proposals go (the
    remote, or the repository), by name: their commits. One listing for them all."""
    target, patterns = going.target, [f"refs/heads/{prefix}*" for prefix in prefixes]
    if going.pushed:
        args = ["ls-remote", _url(target, timeout), *patterns]
        out = git.run(args, target.repo, timeout, ProposalRemoteError, target.env)
    else:
        args = ["for-each-ref", "--format=%(objectname)\t%(refname)", *patterns]
        out = git.run(args, target.repo, timeout, ProposalError)
    named = [_named(prefix) for prefix in prefixes]
    listed: dict[str, str] = {}
    for line in out.splitlines():
        commit, _, ref = line.partition("\t")
        branch = ref.removeprefix("refs/heads/")
        if any(n.fullmatch(branch) for n in named):
            listed[branch] = commit
    return listed


def _gone(
    store: SharedState,
    going: Delivery,
    known: list[Proposal],
    listed: dict[str, str],
    timeout: float,
) -> tuple[str, ...]:
    """Proposals of this delivery (pushed ones when proposals are pushed, and local ones the
    repository lacks; else local ones, and pushed ones no remote of the repository has)
    without a pull request whose branch is not listed: merged when the base branch holds
    their text, else closed. One whose commit this repository lacks (another replica's) is
    left as it is: whether its base holds it cannot be told."""
    target, status = going.target, "pushed" if going.pushed else "local"
    where = f"on the remote '{target.remote}'" if going.pushed else f"in {target.repo}"
    missing = [p for p in known if p.status == status and _branch_only(p)]
    pushed = _recorded(known)
    missing = [p for p in missing if p.branch not in listed and not p.pushed_to]
    if going.pushed and missing:  # pushed before proposals.push named this remote
        elsewhere = _elsewhere(target, [p.branch for p in missing], timeout, target.remote)
        missing = [p for p in missing if p.branch not in elsewhere]
    gone = [(p, where) for p in missing]
    if not going.pushed:  # pushed before proposals.push was turned off: on a remote still
        gone += _gone_from_remotes(target, known, timeout)
    else:  # made before proposals.push was turned on: in the repository
        gone += _gone_locally(target, known, listed, timeout)
    found = _on_their_remotes(store, going, pushed, listed, timeout)
    gone += found.gone
    changed = list(found.changed)
    for p, where in gone:
        assert p.commit_hash is not None
        base = _base_ref(target, p.base_branch or target.base_branch, timeout)
        if base is None or not _has(target, p.commit_hash, timeout):
            continue
        name = p.base_branch or target.base_branch
        if merged_locally(target, p.commit_hash, name, timeout, p.base_commit or "", p.doc_path):
            continue  # merged: the sync's own check says so
        if same_text(target, (p.commit_hash, base), p.doc_path, timeout):
            now, said = "merged", None
        else:
            now, said = "closed", GONE.format(branch=p.branch, where=where, base=name)
            since = _changed_since(target, p, base, timeout)
            if since:
                said = EDITED.format(branch=p.branch, where=where, base=name, since=since)
        store.record_check(p.id, now, said, _now())
        changed.append(f"{p.id}: {p.status} → {now}")
    return tuple(changed)


@dataclass(frozen=True, slots=True)
class _Looked:
    gone: list[tuple[Proposal, str]]
    changed: tuple[str, ...]


def _recorded(known: list[Proposal]) -> list[Proposal]:
    """The pushed proposals followed by their branch that recorded where it was pushed."""
    return [p for p in known if p.status == "pushed" and _branch_only(p) and p.pushed_to]


def _on_their_remotes(
    store: SharedState,
    going: Delivery,
    pushed: list[Proposal],
    listed: dict[str, str] | BriefdError,
    timeout: float,
) -> _Looked:
    """Of the pushed proposals that recorded the remote they were pushed to (``pushed``),
    those whose branch is gone from it; the others are kept, and those whose remote could not
    be asked (removed, not answering) say so in their record, as the sync's changes do the
    first time (:mod:`.pushed`)."""
    if not pushed:
        return _Looked([], ())
    target = going.target
    others = remote_lister(target, [f"refs/heads/{p.branch}" for p in pushed], timeout)
    here = pushed_to(going.url) if going.pushed else None

    def branches(name: str) -> set[str]:  # the remote proposals go to was listed already
        if not here or here != _url_of(target, name, timeout):
            return others(name)
        if isinstance(listed, BriefdError):
            raise listed
        return set(listed)

    found = look_for(target, pushed, branches, timeout)
    changed: list[str] = []
    for p in pushed:
        note = found.notes.get(p.id)
        mine = p.forge_error is None or p.forge_error.startswith(UNFOLLOWED_AS)
        if not mine or note == p.forge_error:  # another's words (a forge's refusal) are kept
            continue
        store.record_check(p.id, None, note, _now())
        if note is not None:
            changed.append(f"{p.id}: {p.status}, kept: " + note.removeprefix(UNFOLLOWED_AS).strip())
    return _Looked(found.gone, tuple(changed))


def _url_of(target: GitTarget, name: str, timeout: float) -> str | None:
    """The recorded form of the URL of the remote ``name`` (None: git cannot tell)."""
    try:
        return pushed_to(git.run(["remote", "get-url", name], target.repo, timeout, ProposalError))
    except ProposalError:
        return None


def _branch_only(proposal: Proposal) -> bool:
    """A proposal followed by its branch alone: made, with no pull request."""
    return not proposal.pr_number and bool(proposal.commit_hash)


def _gone_from_remotes(
    target: GitTarget, known: list[Proposal], timeout: float
) -> list[tuple[Proposal, str]]:
    """Pushed proposals (before ``proposals.push`` was turned off) whose branch no remote of
    the repository has: a sync that looked for local branches alone left them "pushed" for
    ever once their branch was deleted. A repository without remotes tells nothing."""
    pushed = [p for p in known if p.status == "pushed" and _branch_only(p) and not p.pushed_to]
    if not pushed:
        return []
    on_remotes = _elsewhere(target, [p.branch for p in pushed], timeout, None)
    where = f"on any remote of {target.repo}"
    return [(p, where) for p in pushed if p.branch not in on_remotes]


def _gone_locally(
    target: GitTarget, known: list[Proposal], listed: dict[str, str], timeout: float
) -> list[tuple[Proposal, str]]:
    """Local proposals (made before ``proposals.push`` was turned on) whose branch the
    repository no longer has, nor the remote proposals now go to (``listed``: pushed there by
    hand): a sync that listed that remote's branches alone left them "local" for ever."""
    local = [p for p in known if p.status == "local" and _branch_only(p)]
    local = [p for p in local if p.branch not in listed]
    if not local:
        return []
    args = ["for-each-ref", "--format=%(refname)", *(f"refs/heads/{p.branch}" for p in local)]
    there = git.run(args, target.repo, timeout, ProposalError).splitlines()
    return [(p, f"in {target.repo}") for p in local if f"refs/heads/{p.branch}" not in there]


def _elsewhere(
    target: GitTarget, branches: list[str], timeout: float, skip: str | None
) -> set[str]:
    """Of ``branches`` (proposal branches the remote proposals go to lacks, ``skip``), those
    another remote of the repository has, or may have: a checkout whose ``proposals.push``
    named another remote when they were pushed keeps them there, waiting for review, and a
    sync that closed them as deleted unmerged lost track of every one. A remote that does not
    answer may have them all (asked again at the next sync), as may one removed when no
    remote but ``skip`` is left to ask (with ``skip`` None: none at all)."""
    others = git.run(["remote"], target.repo, timeout, ProposalError).split()
    if skip is None and not others:
        return set(branches)
    patterns = [f"refs/heads/{branch}" for branch in branches]
    found: set[str] = set()
    for remote in (r for r in others if r != skip):
        try:
            args = ["ls-remote", _url(replace(target, remote=remote), timeout), *patterns]
            out = git.run(args, target.repo, timeout, ProposalRemoteError, target.env)
        except BriefdError as exc:
            log.warning("proposal branches on the remote '%s' not listed: %s", remote, exc)
            return set(branches)
        found |= {line.partition("\t")[2].removeprefix("refs/heads/") for line in out.splitlines()}
    return found


def _changed_since(target: GitTarget, proposal: Proposal, base: str, timeout: float) -> str:
    """How the proposal's document last changed on ``base`` since the commit the proposal
    was made on ('' when it did not, or git cannot tell)."""
    if not proposal.base_commit:
        return ""
    path = target.prefix + proposal.doc_path
    args = ["log", "-1", "--format=%h by %an: %s", base, f"^{proposal.base_commit}", "--", path]
    try:
        last = git.run(args, target.repo, timeout, ProposalError, {"GIT_LITERAL_PATHSPECS": "1"})
    except ProposalError:
        return ""
    return f"{proposal.doc_path} changed there since it was proposed (last {last})" if last else ""


def _adopt(
    store: SharedState, settings: Settings, going: Delivery, unknown: dict[str, str]
) -> tuple[str, ...]:
    """Record the unknown branches that are proposals briefd made (see the module docstring)."""
    target, timeout = going.target, settings.proposals.git_timeout
    _forget_seen(target, unknown, timeout)
    if not unknown:
        return ()
    refs = {branch: ADOPT_REF + branch[-8:] for branch in unknown}
    changed: list[str] = []
    drop = list(refs.values())
    try:
        if going.pushed:  # their commits, which this repository may lack
            specs = [f"+refs/heads/{b}:{ref}" for b, ref in refs.items()]
            git.run(
                [*FETCH, _url(target, timeout), *specs],
                target.repo,
                timeout,
                ProposalRemoteError,
                target.env,
            )
        for branch, commit in unknown.items():
            found = _orphan(target, settings, going, branch, commit)
            if found is None:
                continue
            store.save_proposal(found)
            drop.append(SEEN_REF + found.id)  # its first sighting, if any
            changed.append(f"{found.id}: unrecorded → {found.status} (branch {branch} adopted)")
            log.warning("%s", ADOPTED.format(branch=branch))
    finally:
        for ref in drop:
            with contextlib.suppress(BriefdError):
                git.run(["update-ref", "-d", ref], target.repo, timeout, ProposalError)
    return tuple(changed)


def _orphan(
    target: GitTarget, settings: Settings, going: Delivery, branch: str, commit: str
) -> Proposal | None:
    """The proposal the branch ``branch`` at ``commit`` is (None: not one briefd made, or
    too young to tell from one whose record is being written)."""
    timeout = settings.proposals.git_timeout
    shown = git.run(
        ["show", "-s", "--format=%P%x00%ae%x00%ct%x00%B", commit],
        target.repo,
        timeout,
        ProposalError,
    )
    parents, email, stamp, message = shown.split("\0", 3)
    if len(parents.split()) != 1 or email != settings.proposals.author_email:
        return None
    made_at = _made_at(target, branch, int(stamp), timeout)
    if time.time() - made_at < adopt_after(settings):
        return None
    changed = git.run(
        ["diff-tree", "-r", "-z", "--name-only", "--no-commit-id", parents, commit],
        target.repo,
        timeout,
        ProposalError,
    ).split("\0")
    paths = [p for p in changed if p]
    if len(paths) != 1 or not paths[0].startswith(target.prefix):
        return None
    if not paths[0].lower().endswith(SUFFIXES):
        return None
    made = datetime.fromtimestamp(made_at, UTC).isoformat(timespec="milliseconds")
    return Proposal(
        id=branch[-8:],
        branch=branch,
        doc_path=paths[0].removeprefix(target.prefix),
        description=message.strip(),
        commit_hash=commit,
        pr_url=None,
        status="pushed" if going.pushed else "local",
        client=None,
        created_at=made,
        base_branch=target.base_branch,
        base_commit=parents.strip(),
        forge_error=ADOPTED.format(branch=branch),
        pushed_to=pushed_to(going.url) if going.pushed else None,
    )


def _made_at(target: GitTarget, branch: str, stamp: int, timeout: float) -> float:
    """When the unrecorded ``branch`` was made, as far as this machine's clock can tell: its
    commit's date (``stamp``), unless that lies ahead of the clock, which a commit made here
    cannot: then the commit tells nothing (a branch dated a day ahead waited a day to be
    adopted, one dated a year ahead a year), and the time a sync first saw the branch without
    a record stands in, kept in the repository (:data:`SEEN_REF`) from sync to sync."""
    now = time.time()
    if stamp <= now + CLOCK_SLACK:
        return stamp
    ref = SEEN_REF + branch[-8:]
    with contextlib.suppress(BriefdError, ValueError):
        seen = float(git.run(["cat-file", "blob", ref], target.repo, timeout, ProposalError))
        if seen <= now + CLOCK_SLACK:  # else this clock was set back since: seen now
            return seen
    blob = git.run(
        ["hash-object", "-w", "--stdin"],
        target.repo,
        timeout,
        ProposalError,
        stdin=f"{now:.3f}\n".encode(),
    )
    git.run(["update-ref", ref, blob], target.repo, timeout, ProposalError)
    return now


def _forget_seen(target: GitTarget, unknown: dict[str, str], timeout: float) -> None:
    """Drop the first sightings (:func:`_made_at`) of branches no longer unrecorded (adopted,
    recorded after all, or deleted)."""
    args = ["for-each-ref", "--format=%(refname)", SEEN_REF]
    listed = git.run(args, target.repo, timeout, ProposalError)
    waiting = {branch[-8:] for branch in unknown}
    for ref in listed.splitlines():
        if ref.removeprefix(SEEN_REF) not in waiting:
            with contextlib.suppress(BriefdError):
                git.run(["update-ref", "-d", ref], target.repo, timeout, ProposalError)


def adopt_after(settings: Settings) -> float:
    """Seconds after its commit that a branch without a record counts as lost: longer than a
    push (its git commands, each ``proposals.git_timeout`` at most, and its pull request's
    requests) may take before its record is written."""
    push = 4 * settings.proposals.git_timeout + 3 * settings.forge.timeout_seconds
    return max(ADOPT_AFTER, 2 * push)


def _url(target: GitTarget, timeout: float) -> str:
    """Where proposals are pushed: the remote's push URL."""
    args = ["remote", "get-url", "--push", target.remote]
    return git.run(args, target.repo, timeout, ProposalError)


def _base_ref(target: GitTarget, base: str, timeout: float) -> str | None:
    """The repository's branch ``base`` (its own, else the remote's it fetched), or None."""
    for ref in (f"refs/heads/{base}", f"refs/remotes/{target.remote}/{base}", "HEAD"):
        if ref == "HEAD" and base != "HEAD":
            continue
        with contextlib.suppress(ProposalError):
            args = ["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"]
            return git.run(args, target.repo, timeout, ProposalError)
    return None


def _has(target: GitTarget, commit: str, timeout: float) -> bool:
    try:
        git.run(["cat-file", "-e", f"{commit}^{{commit}}"], target.repo, timeout, ProposalError)
    except ProposalError:
        return False
    return True


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")
