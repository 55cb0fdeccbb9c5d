"""T1 with real git: what a sync learns from the proposal branches on the bare remote — a
branch deleted unmerged closes its proposal (no forge follows it), and a branch whose record
was lost is adopted."""

from __future__ import annotations

import sqlite3
import time
from dataclasses import replace
from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.proposals import ProposalRequest
from briefd.proposals.follow import ADOPT_AFTER
from briefd.proposals.service import locate
from briefd.settings import with_overrides
from tests.sync.conftest import git_settings
from tests.sync.gitrepo import GLOSSARY, RETRY, Remote, git, stage

NEW_RETRY = RETRY.replace("three times", "four times").lstrip("\n")
NEW_GLOSSARY = GLOSSARY.replace("pays the merchant", "pays the merchant, daily").lstrip("\n")


def test_a_pushed_branch_deleted_unmerged_closes_its_proposal_at_the_next_sync(
    git_api: Briefd, remote: Remote
) -> None:
    """T1, forge.type: none (GitLab, Gitea teams): a pushed proposal whose branch a reviewer
    deleted without merging it stayed "pushed" for good, listed as waiting. The sync closes
    it, saying why; one squash-merged (its text on main, its branch deleted) is merged."""
    git_api.sync()
    dropped = git_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    squashed = git_api.propose_update(ProposalRequest("domain/glossary.md", "daily", NEW_GLOSSARY))
    kept = git_api.propose_update(ProposalRequest("domain/fx.md", "FX", "# FX\n\nHourly.\n"))
    remote.push({"domain/glossary.md": NEW_GLOSSARY}, "Settle daily (squashed)")
    git(remote.bare, "branch", "-D", dropped.branch, squashed.branch)

    report = git_api.sync()
    again = git_api.sync()

    assert sorted(report.proposals_changed) == sorted(
        [f"{dropped.id}: pushed → closed", f"{squashed.id}: pushed → merged"]
    )
    assert again.proposals_changed == ()
    stored = {p.id: p for p in git_api.proposals()}
    assert stored[dropped.id].status == "closed"
    assert stored[dropped.id].forge_error == (
        f"its branch {dropped.branch} is no longer on the remote 'origin', and main does not "
        "hold its change (deleted unmerged), so a sync closed it; propose the change again if "
        "it is still wanted"
    )
    assert stored[squashed.id].status == "merged" and stored[squashed.id].forge_error is None
    assert stored[kept.id].status == "pushed"


def test_a_proposal_branch_whose_record_was_lost_is_adopted_at_a_sync(
    git_api: Briefd, remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    """T1: briefd killed between the push and the record (or a full disk past its stop) left a
    briefd/proposal-* branch on the remote that briefd never listed or followed. A sync adopts
    it once it is older than a push can take; a younger one, and a branch not briefd's (another
    author), are left alone."""
    git_api.sync()
    an_hour_ago = f"@{int(time.time()) - 3600} +0000"
    monkeypatch.setenv("GIT_COMMITTER_DATE", an_hour_ago)
    lost = git_api.propose_update(ProposalRequest("domain/retry.md", "Four\n\nOps.", NEW_RETRY))
    git(remote.work, "checkout", "--quiet", "-b", "briefd/proposal-0000beef")
    stage(remote.work, {"domain/notes.md": "# Notes\n"})
    git(remote.work, "commit", "--quiet", "-m", "A teammate's own branch")
    git(remote.work, "push", "--quiet", "origin", "briefd/proposal-0000beef")
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    young = git_api.propose_update(ProposalRequest("domain/glossary.md", "daily", NEW_GLOSSARY))
    with sqlite3.connect(git_api.settings.db) as conn:  # the records a kill -9 never wrote
        conn.execute("DELETE FROM proposals WHERE id IN (?, ?)", (lost.id, young.id))
    assert git_api.proposals() == []

    report = git_api.sync()

    assert report.proposals_changed == (
        f"{lost.id}: unrecorded → pushed (branch {lost.branch} adopted)",
    )
    (adopted,) = git_api.proposals()
    assert (adopted.id, adopted.branch, adopted.commit_hash) == (
        lost.id,
        lost.branch,
        lost.commit_hash,
    )
    assert (adopted.doc_path, adopted.description, adopted.status) == (
        "domain/retry.md",
        "Four\n\nOps.",
        "pushed",
    )
    assert adopted.base_commit == lost.base_commit and adopted.client is None
    assert adopted.forge_error is not None and adopted.forge_error.startswith(
        f"adopted at a sync: briefd found the branch {lost.branch} without its record"
    )
    assert ADOPT_AFTER <= 3600  # the lost one is old enough, the young one is not
    assert git_api.sync().proposals_changed == ()


def test_a_local_branch_deleted_unmerged_closes_its_proposal(
    tmp_path: Path, remote: Remote
) -> None:
    """T1: a local proposal (a branch of the user's checkout) whose branch was deleted without
    being merged stayed "local" for good; a sync closes it, naming the checkout."""
    with Briefd(git_settings(tmp_path, str(remote.work)), embedder=None) as api:
        api.index()
        made = api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
        git(remote.work, "branch", "--quiet", "-D", made.branch)
        report = api.sync()
        (stored,) = api.proposals()
    assert report.proposals_changed == (f"{made.id}: local → closed",)
    assert stored.forge_error is not None
    assert stored.forge_error.startswith(f"its branch {made.branch} is no longer in {remote.work},")


def test_a_branch_prefix_changed_since_leaves_the_waiting_proposals_as_they_are(
    tmp_path: Path, remote: Remote
) -> None:
    """T1: proposals.branch_prefix changed (as a remote's branch rules, and briefd's refusal of
    the push, ask) made the next sync list only the new prefix's branches, so every proposal
    still waiting under the old one was closed, "no longer on the remote … deleted unmerged",
    its branch there all along. Each prefix a waiting proposal has is listed too: they stay
    pushed, and one of them whose branch a reviewer deleted is still closed."""
    settings = git_settings(tmp_path, remote.url)
    with Briefd(settings, embedder=None) as api:
        api.sync()
        kept = api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
        dropped = api.propose_update(ProposalRequest("domain/glossary.md", "daily", NEW_GLOSSARY))
    renamed = with_overrides(settings, {"proposals.branch_prefix": "kb-bot/"})
    with Briefd(renamed, embedder=None) as api:
        new = api.propose_update(ProposalRequest("domain/fx.md", "FX", "# FX\n\nHourly.\n"))
        first = api.sync()
        git(remote.bare, "branch", "-D", dropped.branch)
        second = api.sync()
        stored = {p.id: p for p in api.proposals()}

    assert new.branch == f"kb-bot/{new.id}"
    assert first.proposals_changed == ()
    assert second.proposals_changed == (f"{dropped.id}: pushed → closed",)
    assert (stored[kept.id].status, stored[kept.id].forge_error) == ("pushed", None)
    assert (stored[new.id].status, stored[dropped.id].status) == ("pushed", "closed")


def test_a_proposal_its_reviewer_amended_or_rebased_then_merged_is_merged(
    git_api: Briefd, remote: Remote
) -> None:
    """T1, forge.type: none: a reviewer who edited a proposal's commit (amend, force-push) and
    merged it, deleting its branch, had the sync close it "deleted unmerged … propose the
    change again", its text merged with the edit; one rebased onto main (main had moved) and
    fast-forwarded stayed "pushed" for as long as its branch stood. The commit on main with
    the proposal's author, author date and subject that changed its document is it, merged."""
    git_api.sync()
    amended = git_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    rebased = git_api.propose_update(ProposalRequest("domain/glossary.md", "daily", NEW_GLOSSARY))
    dropped = git_api.propose_update(ProposalRequest("domain/fx.md", "FX", "# FX\n\nHourly.\n"))
    work = remote.work
    git(work, "fetch", "--quiet", "origin")
    git(work, "checkout", "--quiet", "-b", "review", f"origin/{amended.branch}")
    stage(work, {"domain/retry.md": NEW_RETRY.replace("four times", "four times (reviewed)")})
    git(work, "commit", "--quiet", "--amend", "--no-edit")  # keeps the author and its date
    git(work, "checkout", "--quiet", "main")
    git(work, "merge", "--quiet", "--no-ff", "review", "-m", "Merge the reviewed proposal")
    stage(work, {"domain/refunds.md": "# Refunds\n\nWithin 30 days.\n"})
    git(work, "commit", "--quiet", "-m", "Refunds")
    git(work, "rebase", "--quiet", "main", f"origin/{rebased.branch}")
    git(work, "checkout", "--quiet", "-B", "main")
    git(work, "push", "--quiet", "origin", "main", f":{amended.branch}", f":{dropped.branch}")

    report = git_api.sync()

    assert sorted(report.proposals_changed) == sorted(
        [
            f"{amended.id}: pushed → merged",
            f"{rebased.id}: pushed → merged",
            f"{dropped.id}: pushed → closed",
        ]
    )
    stored = {p.id: p for p in git_api.proposals()}
    assert stored[amended.id].forge_error is None and stored[rebased.id].forge_error is None
    assert remote.head() != rebased.commit_hash  # rebased: another commit


def test_a_branch_deleted_after_its_document_changed_is_not_said_deleted_unmerged(
    git_api: Briefd, remote: Remote
) -> None:
    """T1: a proposal squash-merged with its reviewer's edits (GitLab, Gitea: squash on merge,
    the branch deleted) leaves main with neither its commit nor its text: the sync closed it
    saying, as a fact, "deleted unmerged … propose the change again". It is still closed (a
    squash cannot be told from a rejection), saying what it cannot tell and the change on
    main that may be it."""
    git_api.sync()
    made = git_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    reviewed = NEW_RETRY.replace("four times", "four times, then stop")
    squash = remote.push({"domain/retry.md": reviewed}, "Retry four times (!12)")
    git(remote.bare, "branch", "-D", made.branch)

    report = git_api.sync()

    assert report.proposals_changed == (f"{made.id}: pushed → closed",)
    (stored,) = git_api.proposals()
    assert stored.forge_error == (
        f"its branch {made.branch} is no longer on the remote 'origin', and main holds neither "
        f"its commit nor its text, but domain/retry.md changed there since it was proposed "
        f"(last {squash[:7]} by Teammate: Retry four times (!12)): if that is this proposal "
        "merged with edits (a squash merge of the reviewer's changes), nothing is lost; else "
        "it was deleted unmerged. A sync closed it; propose the change again if it is still "
        "wanted and not on main"
    )


def test_proposals_pushed_before_proposals_push_named_another_remote_stay_followed(
    tmp_path: Path, remote: Remote
) -> None:
    """T1: a checkout's proposals.push changed from one remote to another (origin to a fork)
    made the next sync list the branches on the new remote alone, so each proposal still
    waiting on the old one was closed, "no longer on the remote 'fork' … deleted unmerged",
    its branch on origin all along. The other remotes of the checkout are asked too: they
    stay pushed, and one whose branch a reviewer deleted there is still closed."""
    fork = tmp_path / "fork.git"
    git(tmp_path, "clone", "--quiet", "--bare", str(remote.bare), str(fork))
    git(remote.work, "remote", "add", "fork", str(fork))
    settings = git_settings(tmp_path, str(remote.work), **{"proposals.push": "origin"})
    with Briefd(settings, embedder=None) as api:
        api.index()
        kept = api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
        dropped = api.propose_update(ProposalRequest("domain/glossary.md", "daily", NEW_GLOSSARY))
    moved = with_overrides(settings, {"proposals.push": "fork"})
    with Briefd(moved, embedder=None) as api:
        new = api.propose_update(ProposalRequest("domain/fx.md", "FX", "# FX\n\nHourly.\n"))
        first = api.sync()
        git(remote.bare, "branch", "-D", dropped.branch)
        second = api.sync()
        stored = {p.id: p for p in api.proposals()}

    assert git(fork, "branch", "--list", new.branch) != ""
    assert first.proposals_changed == ()
    assert second.proposals_changed == (f"{dropped.id}: pushed → closed",)
    assert (stored[kept.id].status, stored[kept.id].forge_error) == ("pushed", None)
    assert (stored[new.id].status, stored[dropped.id].status) == ("pushed", "closed")


def test_a_lost_branch_dated_ahead_of_the_clock_is_adopted_once_seen_long_enough(
    git_api: Briefd, remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    """T1, clock skew: a branch whose record was lost, its commit dated a day ahead of this
    machine's clock (made where the clock was ahead, or this one set back since), was taken
    for a push still being recorded until the clock caught up: a day unlisted and unfollowed
    (a year, for a year). Its date is not believed: it is adopted once syncs have seen it
    unrecorded for as long as a push may take, dated when first seen."""
    git_api.sync()
    monkeypatch.setenv("GIT_COMMITTER_DATE", f"@{int(time.time()) + 86_400} +0000")
    lost = git_api.propose_update(ProposalRequest("domain/retry.md", "Four", NEW_RETRY))
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    with sqlite3.connect(git_api.settings.db) as conn:  # the record a kill -9 never wrote
        conn.execute("DELETE FROM proposals WHERE id = ?", (lost.id,))

    first = git_api.sync()
    repo = locate(git_api.settings).target.repo  # briefd's clone of the remote
    marks = git(repo, "for-each-ref", "--format=%(refname)", "refs/briefd/")
    assert marks.splitlines() == [f"refs/briefd/unrecorded/{lost.id}"]
    seen = time.time() - ADOPT_AFTER - 60  # as if that sync had run 11 minutes ago
    (repo.parent / "seen").write_text(f"{seen:.3f}\n")
    blob = git(repo, "hash-object", "-w", str(repo.parent / "seen"))
    git(repo, "update-ref", f"refs/briefd/unrecorded/{lost.id}", blob)
    second = git_api.sync()

    assert first.proposals_changed == ()
    assert second.proposals_changed == (
        f"{lost.id}: unrecorded → pushed (branch {lost.branch} adopted)",
    )
    (adopted,) = git_api.proposals()
    assert (adopted.id, adopted.commit_hash) == (lost.id, lost.commit_hash)
    assert adopted.created_at < lost.created_at  # when first seen, not a day ahead
    assert git(repo, "for-each-ref", "refs/briefd/") == ""  # the sighting is dropped


def test_a_record_written_after_a_sync_adopted_its_branch_replaces_the_adoption(
    git_api: Briefd, remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    """T1, clock skew: a commit dated an hour behind (its clock was behind) looked old enough
    to adopt while its record was still being written, and the record, written next, was
    dropped for the adoption's ("INSERT OR IGNORE"): the proposal was listed with its client
    unknown and "adopted at a sync", its pull request forgotten. The record replaces it."""
    git_api.sync()
    monkeypatch.setenv("GIT_COMMITTER_DATE", f"@{int(time.time()) - 3600} +0000")
    request = ProposalRequest("domain/retry.md", "Four", NEW_RETRY, client="mcp")
    made = git_api.propose_update(request)
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    with sqlite3.connect(git_api.settings.db) as conn:  # not written yet when the sync ran
        conn.execute("DELETE FROM proposals WHERE id = ?", (made.id,))
    adopting = git_api.sync()

    git_api.state.save_proposal(made)  # the record, written after the sync

    assert adopting.proposals_changed == (
        f"{made.id}: unrecorded → pushed (branch {made.branch} adopted)",
    )
    (stored,) = git_api.proposals()
    assert (stored.client, stored.forge_error, stored.created_at) == (
        "mcp",
        None,
        made.created_at,
    )
    other = replace(made, commit_hash="0" * 40, client="rest")
    git_api.state.save_proposal(other)  # a record that is not that branch's changes nothing
    assert git_api.proposals() == [stored]


def test_a_proposal_rebased_with_its_subject_reworded_then_edited_again_is_merged(
    git_api: Briefd, remote: Remote
) -> None:
    """T1, forge.type: none: a reviewer who rebased (cherry-picked) a proposal onto main with
    its subject reworded, then edited the document again and deleted the branch, had the sync
    close it ("holds neither its commit nor its text … propose the change again"): the commit
    was matched by its author, date and subject alone. The very change on main (git's patch
    id) is it, merged; a proposal whose change main never got is still closed."""
    git_api.sync()
    made = git_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    dropped = git_api.propose_update(ProposalRequest("domain/glossary.md", "daily", NEW_GLOSSARY))
    work = remote.work
    git(work, "fetch", "--quiet", "origin")
    git(work, "cherry-pick", f"origin/{made.branch}")
    git(work, "commit", "--quiet", "--amend", "--reset-author", "-m", "Retry: four times (!7)")
    stage(work, {"domain/retry.md": NEW_RETRY + "\nLog each retry.\n"})
    stage(work, {"domain/glossary.md": GLOSSARY.lstrip("\n") + "\nSee also: payouts.\n"})
    git(work, "commit", "--quiet", "-m", "Log retries; glossary link")
    git(work, "push", "--quiet", "origin", "main", f":{made.branch}", f":{dropped.branch}")

    report = git_api.sync()

    assert sorted(report.proposals_changed) == sorted(
        [f"{made.id}: pushed → merged", f"{dropped.id}: pushed → closed"]
    )
    stored = {p.id: p for p in git_api.proposals()}
    assert stored[made.id].forge_error is None
