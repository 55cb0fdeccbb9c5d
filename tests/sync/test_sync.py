"""K3 with real git: an owned clone of a bare remote in tmp_path follows pushes, force-pushes
and deletions; a failing remote never takes the served index down."""

from __future__ import annotations

import dataclasses
import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.errors import BriefdError, ProposalConflictError
from briefd.model import IndexReport
from briefd.proposals import Proposal, ProposalRequest
from briefd.replicas.agree import knowledge_commit
from briefd.retrieval.search import SearchRequest
from briefd.sources.knowledge import checkout_dir, sync_lock
from briefd.sync.runner import run_sync
from briefd.sync.state import Refresh, SyncReport
from tests.sync.conftest import git_settings
from tests.sync.gitrepo import GLOSSARY, RETRY, Remote, git


def paths(api: Briefd, query: str) -> list[str]:
    return [hit.doc_path for hit in api.search(SearchRequest(query, mode="bm25")).hits]


def test_first_sync_clones_and_indexes(git_api: Briefd, remote: Remote) -> None:
    report = git_api.sync()

    assert report.error is None
    assert report.kind == "clone" and report.branch == "main"
    assert report.commit == remote.head()
    assert report.index is not None
    assert report.index.added == ("domain/glossary.md", "domain/retry.md")
    clone = checkout_dir(git_api.settings)
    assert git(clone, "rev-parse", "HEAD") == remote.head()
    assert paths(git_api, "soft decline retried") == ["domain/retry.md"]
    status = git_api.sync_status()
    assert status.last_commit == remote.head()
    assert status.last_error is None and status.kind == "clone"
    assert status.source == remote.url


def test_the_clone_is_readable_by_its_user_alone(git_api: Briefd, remote: Remote) -> None:
    """A clone holds the knowledge, and its .git/config the remote's URL with any
    user:token@ in it: made with the umask (0755) in a folder briefd did not make, every user
    of the machine could read both."""
    shared = git_api.settings.db.parent
    shared.mkdir(mode=0o755)  # an existing folder: left as it is
    umask = os.umask(0o022)
    try:
        report = git_api.sync()
    finally:
        os.umask(umask)
    assert report.error is None
    clone = checkout_dir(git_api.settings)
    assert oct(clone.stat().st_mode & 0o777) == "0o700"
    assert (clone / "domain" / "retry.md").read_text() == RETRY.lstrip()


def test_push_then_sync_makes_new_content_searchable(git_api: Briefd, remote: Remote) -> None:
    git_api.sync()
    assert paths(git_api, "chargeback") == []
    commit = remote.push(
        {"domain/chargebacks.md": "# Chargebacks\n\n## Disputes\nA chargeback reverses it.\n"}
    )

    report = git_api.sync()

    assert report.error is None and report.commit == commit
    assert report.index is not None and report.index.added == ("domain/chargebacks.md",)
    assert report.index.unchanged == 2
    assert paths(git_api, "chargeback") == ["domain/chargebacks.md"]


def test_a_sync_names_its_commit_as_soon_as_it_serves_its_documents(
    git_api: Briefd, remote: Remote
) -> None:
    """``/api/health``, ``briefd version``, the sync status, ``/api/stats`` and the replicas'
    listing name the commit whose documents are served. A replica's health named the commit before a push for as long as the
    forge refresh after the reindex took (the sync was recorded only after it), while its
    search already found the pushed document: the fresh-clone CI of 1c023825 caught it."""
    git_api.sync()
    before = remote.head()
    commit = remote.push({"domain/chargebacks.md": "# Chargebacks\n\nA chargeback reverses it.\n"})
    seen: dict[str, object] = {}
    steps = git_api._sync_steps()

    def named() -> tuple[str | None, ...]:
        """The commit health, version, the sync status, /api/stats and the replicas' list
        name."""
        stats = git_api.overview()["sources"]
        assert isinstance(stats, list)
        return (
            knowledge_commit(git_api.store),
            git_api.sync_status().last_commit,
            next(s["last_commit"] for s in stats if s["source"] == "git"),
            git_api.state.replicas()[0].commit,
        )

    def reindex(root: Path) -> IndexReport:
        report = steps.reindex(root)  # the real one; then what a reader sees at once
        seen["after the reindex"] = (*named(), paths(git_api, "chargeback"))
        return report

    def refresh(fetched: bool) -> Refresh:
        seen["during the forge refresh"] = named()
        return steps.after(fetched)  # the real one

    report = run_sync(dataclasses.replace(steps, reindex=reindex, after=refresh))

    assert report.error is None and report.commit == commit != before
    assert seen == {
        "after the reindex": (commit, commit, commit, commit, ["domain/chargebacks.md"]),
        "during the forge refresh": (commit, commit, commit, commit),
    }
    assert named() == (commit, commit, commit, commit)


def test_deleted_file_disappears(git_api: Briefd, remote: Remote) -> None:
    git_api.sync()
    assert paths(git_api, "settlement acquirer") == ["domain/glossary.md"]
    remote.push({"domain/glossary.md": None}, "drop the glossary")

    report = git_api.sync()

    assert report.index is not None and report.index.deleted == ("domain/glossary.md",)
    assert paths(git_api, "settlement acquirer") == []
    assert not (checkout_dir(git_api.settings) / "domain" / "glossary.md").exists()


def test_force_push_rewriting_history_is_followed(git_api: Briefd, remote: Remote) -> None:
    git_api.sync()
    old = remote.head()
    new = remote.rewrite(
        {"domain/refunds.md": "# Refunds\n\n## Partial refunds\nPartial refunds are allowed.\n"}
    )

    report = git_api.sync()

    assert report.error is None
    assert report.previous_commit == old and report.commit == new
    assert git(checkout_dir(git_api.settings), "rev-parse", "HEAD") == new
    assert paths(git_api, "partial refunds") == ["domain/refunds.md"]
    assert paths(git_api, "soft decline") == []
    assert [(s.name, s.documents) for s in git_api.scopes()] == [("domain", 1)]
    assert git_api.document("domain/refunds.md").updated_at.startswith("20")


def test_updated_commit_comes_from_git_history(git_api: Briefd, remote: Remote) -> None:
    first = remote.head()
    git_api.sync()
    second = remote.push({"domain/glossary.md": GLOSSARY + "\n## Payout\nA payout.\n"})
    git_api.sync()

    with git_api.store.read() as conn:
        rows = {
            r["path"]: (r["updated_commit"], r["updated_at"])
            for r in conn.execute("SELECT path, updated_commit, updated_at FROM documents")
        }
    assert rows["domain/retry.md"][0] == first
    assert rows["domain/glossary.md"][0] == second
    stamp = git(remote.bare, "show", "-s", "--format=%cI", second)
    assert rows["domain/glossary.md"][1][:16] == stamp[:16]  # same minute (UTC both here)
    assert git_api.document("domain/glossary.md").updated_at == rows["domain/glossary.md"][1]


def test_failing_remote_keeps_the_last_good_index(git_api: Briefd, remote: Remote) -> None:
    good = git_api.sync()
    moved = remote.bare.with_name("moved.git")
    shutil.move(remote.bare, moved)

    report = git_api.sync()

    assert report.error is not None and "git fetch failed" in report.error
    assert "check the repository URL" in report.error
    assert report.commit == good.commit and report.index is None
    assert paths(git_api, "soft decline retried") == ["domain/retry.md"]
    status = git_api.sync_status()
    assert status.last_error == report.error
    assert status.last_commit == good.commit
    assert status.last_success_at == good.started_at

    shutil.move(moved, remote.bare)
    assert git_api.sync().error is None
    assert git_api.sync_status().last_error is None


def test_a_failed_sync_still_names_the_branch_served(git_api: Briefd, remote: Remote) -> None:
    """With no sync.branch, a sync whose fetch failed recorded branch None: GET /api/sync and
    the dashboard showed the commit still served with no branch, until a sync got through."""
    assert git_api.sync().branch == "main"
    shutil.move(remote.bare, remote.bare.with_name("moved.git"))
    report = git_api.sync()
    assert report.error is not None
    assert (report.branch, git_api.sync_status().branch) == ("main", "main")


@pytest.mark.parametrize("branch", ["nope", "notes"])
def test_a_failed_sync_to_another_branch_names_the_branch_still_served(
    tmp_path: Path, git_api: Briefd, remote: Remote, branch: str
) -> None:
    """sync.branch changed to a branch the remote lacks (nope), or to one holding no document
    (notes): the sync failed and main's index kept being served, but GET /api/sync and
    `briefd sync` paired main's commit with the new branch ("branch": "nope", "last_commit":
    main's), so the index read as that branch's."""
    served = git_api.sync()
    git(remote.work, "checkout", "--quiet", "-b", "notes")
    git(remote.work, "rm", "--quiet", "-r", "domain")
    remote.work.joinpath("notes.md").write_text("# Notes\n\nOutside every scope.\n")
    git(remote.work, "add", ".")
    git(remote.work, "commit", "--quiet", "-m", "notes only")
    git(remote.work, "push", "--quiet", "origin", "notes")

    with Briefd(git_settings(tmp_path, remote.url, **{"sync.branch": branch}), None) as api:
        failed = api.sync()
        status = api.sync_status()

    assert failed.error is not None and served.commit == remote.head("main")
    assert (failed.branch, failed.commit) == ("main", served.commit)
    assert (status.branch, status.last_commit) == ("main", served.commit)


def test_concurrent_syncs_coalesce(git_api: Briefd, remote: Remote) -> None:
    git_api.sync()
    remote.push({"domain/fx.md": "# FX\n\n## Rates\nRates refresh hourly.\n"})
    reports = []
    start = threading.Barrier(8)

    def call() -> None:
        start.wait()
        reports.append(git_api.sync())

    threads = [threading.Thread(target=call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(reports) == 8 and all(r.error is None for r in reports)
    ran = git_api.sync_status().syncs - 1
    assert 1 <= ran <= 2  # one run, or one plus the run queued behind it
    assert sum(not r.coalesced for r in reports) == ran
    assert paths(git_api, "rates refresh hourly") == ["domain/fx.md"]


def test_branch_setting_follows_that_branch(tmp_path: Path, remote: Remote) -> None:
    from tests.sync.conftest import git_settings

    git(remote.work, "checkout", "--quiet", "-b", "release")
    (remote.work / "domain" / "release.md").write_text("# Release\n\n## Freeze\nCode freeze.\n")
    git(remote.work, "add", ".")
    git(remote.work, "commit", "--quiet", "-m", "release notes")
    git(remote.work, "push", "--quiet", "origin", "release")
    settings = git_settings(tmp_path, remote.url, **{"sync.branch": "release"})

    with Briefd(settings, embedder=None) as api:
        report = api.sync()
        assert report.error is None and report.branch == "release"
        assert paths(api, "code freeze") == ["domain/release.md"]


def test_a_renamed_default_branch_is_followed(git_api: Briefd, remote: Remote) -> None:
    """The team renames master to main on the forge: the clone's origin/HEAD still named the
    old branch, and every sync failed "couldn't find remote ref" until someone set sync.branch."""
    assert git_api.sync().branch == "main"
    git(remote.bare, "branch", "-m", "main", "trunk")
    git(remote.bare, "symbolic-ref", "HEAD", "refs/heads/trunk")
    git(remote.work, "fetch", "--quiet", "origin")
    git(remote.work, "checkout", "--quiet", "-B", "trunk", "origin/trunk")
    (remote.work / "domain" / "fx.md").write_text("# FX\n\n## Rates\nRates refresh hourly.\n")
    git(remote.work, "add", ".")
    git(remote.work, "commit", "--quiet", "-m", "fx")
    git(remote.work, "push", "--quiet", "origin", "trunk")

    renamed = git_api.sync()
    again = git_api.sync()

    assert renamed.error is None and renamed.branch == "trunk"
    assert renamed.commit == remote.head("trunk")
    assert renamed.index is not None and renamed.index.added == ("domain/fx.md",)
    assert paths(git_api, "rates refresh hourly") == ["domain/fx.md"]
    assert (again.error, again.branch, again.commit) == (None, "trunk", renamed.commit)


def test_a_new_default_branch_is_followed_while_the_old_one_stays(
    git_api: Briefd, remote: Remote
) -> None:
    """The team makes trunk the forge's default branch and keeps main for a while: briefd,
    told to follow the default (no sync.branch), went on serving main, with no error, while
    GitHub's push webhook, which names the new default, started syncs for trunk's pushes that
    fetched main and ignored main's."""
    assert git_api.sync().branch == "main"
    git(remote.work, "checkout", "--quiet", "-b", "trunk")
    remote.work.joinpath("domain", "fx.md").write_text("# FX\n\n## Rates\nRates refresh hourly.\n")
    git(remote.work, "add", ".")
    git(remote.work, "commit", "--quiet", "-m", "fx")
    git(remote.work, "push", "--quiet", "origin", "trunk")
    git(remote.bare, "symbolic-ref", "HEAD", "refs/heads/trunk")

    switched = git_api.sync()

    assert (switched.error, switched.branch) == (None, "trunk")
    assert switched.commit == remote.head("trunk")
    assert paths(git_api, "rates refresh hourly") == ["domain/fx.md"]
    assert git_api.sync_status().branch == "trunk"


def test_unknown_branch_is_a_clear_error(tmp_path: Path, remote: Remote) -> None:
    from tests.sync.conftest import git_settings

    settings = git_settings(tmp_path, remote.url, **{"sync.branch": "nope"})
    with Briefd(settings, embedder=None) as api:
        report = api.sync()
    assert report.error == (  # not git's "not found", which read as a wrong URL
        f"the branch nope (sync.branch) is not on {remote.url}, whose branches are main; set "
        "sync.branch to the one to follow"
    )


def test_index_clones_a_git_url_source_on_first_use(git_api: Briefd, remote: Remote) -> None:
    report = git_api.index()

    assert report.documents == 2
    assert report.source == str(checkout_dir(git_api.settings))
    assert paths(git_api, "settlement") == ["domain/glossary.md"]


def test_lock_files_left_by_a_killed_git_are_cleared(git_api: Briefd, remote: Remote) -> None:
    git_api.sync()
    clone = checkout_dir(git_api.settings)
    (clone / ".git" / "index.lock").write_text("")
    (clone / ".git" / "refs" / "remotes" / "origin" / "main.lock").write_text("")
    remote.push({"domain/fx.md": "# FX\n\n## Rates\nRates refresh hourly.\n"})

    report = git_api.sync()

    assert report.error is None and report.commit == remote.head()
    assert not (clone / ".git" / "index.lock").exists()


# A reference-transaction hook runs while git holds the locks of the refs it updates ("prepared"):
# here it keeps a proposal's fetch holding refs/briefd/scratch/<id>.lock until the test says go.
HOLD_SCRATCH_LOCK = """#!/bin/sh
[ "$1" = prepared ] || exit 0
grep -q " refs/briefd/scratch/" || exit 0
[ -e "{go}" ] && exit 0
touch "{held}"
while [ ! -e "{go}" ]; do sleep 0.05; done
"""


def test_a_sync_leaves_a_running_proposals_git_lock_alone(
    tmp_path: Path, git_api: Briefd, remote: Remote
) -> None:
    """A sync deleted every lock file in briefd's clone, also the live one of a proposal's git
    (proposals run git there without the sync lock), and the proposal then failed. While a
    proposal runs, a sync now removes only locks older than any git briefd runs can live."""
    git_api.sync()
    clone = checkout_dir(git_api.settings)
    held, go = tmp_path / "held", tmp_path / "go"
    hook = clone / ".git" / "hooks" / "reference-transaction"
    hook.write_text(HOLD_SCRATCH_LOCK.format(held=held, go=go))
    hook.chmod(0o755)
    stale = clone / ".git" / "refs" / "remotes" / "origin" / "main.lock"  # a killed sync's
    stale.write_text("")
    an_hour_ago = time.time() - 3600
    os.utime(stale, (an_hour_ago, an_hour_ago))
    remote.push({"domain/fx.md": "# FX\n\n## Rates\nRates refresh hourly.\n"})
    outcome: list[Proposal | BriefdError] = []
    new = RETRY.replace("three times", "four times")
    thread = threading.Thread(target=_propose, args=(git_api, new, outcome))
    thread.start()
    try:
        _wait_for(held)
        [live] = (clone / ".git" / "refs" / "briefd" / "scratch").glob("*.lock")
        with Briefd(git_api.settings, embedder=None) as poller:  # or `briefd sync`
            report = poller.sync()
        survived = live.exists()
    finally:
        go.touch()
        thread.join(60)

    assert report.error is None and report.commit == remote.head()
    assert not stale.exists()  # older than sync.git_timeout: no live git's
    assert survived
    [made] = outcome
    assert isinstance(made, Proposal), made
    assert git(remote.bare, "rev-parse", made.branch) == made.commit_hash


def _propose(api: Briefd, new: str, outcome: list[Proposal | BriefdError]) -> None:
    try:
        outcome.append(api.propose_update(ProposalRequest("domain/retry.md", "four", new)))
    except BriefdError as exc:
        outcome.append(exc)


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + 20
    while not path.exists():
        assert time.monotonic() < deadline, "the proposal's fetch never took its ref lock"
        time.sleep(0.02)


def test_a_half_finished_clone_is_started_over(git_api: Briefd, remote: Remote) -> None:
    leftover = checkout_dir(git_api.settings).with_name(".repo.cloning")
    leftover.mkdir(parents=True)
    (leftover / "junk").write_text("killed mid-clone")

    assert git_api.sync().error is None
    assert not leftover.exists()
    assert paths(git_api, "settlement") == ["domain/glossary.md"]


def test_a_moved_source_url_is_followed(tmp_path: Path, git_api: Briefd, remote: Remote) -> None:
    from tests.sync.conftest import git_settings

    git_api.sync()
    moved = remote.bare.with_name("moved.git")
    shutil.move(remote.bare, moved)
    with Briefd(git_settings(tmp_path, moved.as_uri()), embedder=None) as api:
        report = api.sync()
        assert report.error is None and report.source == moved.as_uri()
        assert git(checkout_dir(api.settings), "remote", "get-url", "origin") == moved.as_uri()


def test_a_checkout_dir_briefd_did_not_clone_is_never_reset(tmp_path: Path, remote: Remote) -> None:
    """sync.checkout_dir pointing at someone's own repository: the sync refuses it, and the
    work there (commits, edits, untracked files, its origin) is untouched."""
    own = tmp_path / "proj"
    own.mkdir()
    git(own, "init", "--quiet", "-b", "main")
    (own / "work.txt").write_text("w\n")
    git(own, "add", "-A")
    git(own, "commit", "--quiet", "-m", "mine")
    git(own, "remote", "add", "origin", "https://example.invalid/me/proj.git")
    (own / "work.txt").write_text("w\nedit\n")
    (own / "uncommitted.txt").write_text("precious\n")
    head = git(own, "rev-parse", "HEAD")
    settings = git_settings(tmp_path, remote.url, **{"sync.checkout_dir": str(own)})
    with Briefd(settings, embedder=None) as api:
        report = api.sync()
    assert report.error is not None
    assert report.error.startswith(f"sync.checkout_dir {own} is a git checkout briefd did not make")
    assert git(own, "rev-parse", "HEAD") == head
    assert git(own, "remote", "get-url", "origin") == "https://example.invalid/me/proj.git"
    assert (own / "work.txt").read_text() == "w\nedit\n"
    assert (own / "uncommitted.txt").read_text() == "precious\n"


def test_a_teammates_own_clone_of_the_source_as_checkout_dir_is_never_reset(
    tmp_path: Path, remote: Remote
) -> None:
    """sync.checkout_dir at someone's own clone of the knowledge repository (origin is the
    source): it was taken for a clone briefd made before it marked them, and the sync's reset
    and clean took their local commit, edits and untracked files. A clean one (nothing to
    lose) is still adopted."""
    own = remote.work
    git(own, "remote", "set-url", "origin", remote.url)  # cloned from the source's URL
    (own / "domain" / "retry.md").write_text("# Retry\n\nmy edit\n")
    git(own, "commit", "--quiet", "-am", "local, not pushed")
    (own / "domain" / "draft.md").write_text("# Draft\n")
    head = git(own, "rev-parse", "HEAD")
    settings = git_settings(tmp_path, remote.url, **{"sync.checkout_dir": str(own)})
    with Briefd(settings, embedder=None) as api:
        report = api.sync()
    assert report.error == (
        f"sync.checkout_dir {own} is a clone of {remote.url} that briefd did not make, holding "
        "1 commit(s) on no branch of origin and 1 changed, untracked or ignored file(s); every "
        "sync resets and cleans briefd's clone, so it leaves this one alone: point "
        "sync.checkout_dir at an empty or new folder"
    )
    assert git(own, "rev-parse", "HEAD") == head
    assert (own / "domain" / "draft.md").read_text() == "# Draft\n"
    clean = tmp_path / "clean"
    git(tmp_path, "clone", "--quiet", remote.url, str(clean))
    settings = git_settings(tmp_path, remote.url, **{"sync.checkout_dir": str(clean)})
    with Briefd(settings, embedder=None) as api:
        assert api.sync().ok
    assert git(clean, "config", "--get", "briefd.clone") == "true"


def test_a_clone_briefd_made_in_checkout_dir_follows_a_moved_source(
    tmp_path: Path, remote: Remote
) -> None:
    """briefd marks the clones it makes: its own clone in sync.checkout_dir follows the source
    to a new URL (the remote moved), as the default clone does."""
    settings = git_settings(tmp_path, remote.url, **{"sync.checkout_dir": str(tmp_path / "kb")})
    with Briefd(settings, embedder=None) as api:
        assert api.sync().error is None
    assert git(tmp_path / "kb", "config", "--get", "briefd.clone") == "true"
    moved = tmp_path / "moved.git"
    shutil.copytree(remote.bare, moved)
    settings = git_settings(tmp_path, moved.as_uri(), **{"sync.checkout_dir": str(tmp_path / "kb")})
    with Briefd(settings, embedder=None) as api:
        report = api.sync()
    assert report.error is None
    assert git(tmp_path / "kb", "remote", "get-url", "origin") == moved.as_uri()


def test_two_indexes_sharing_a_checkout_dir_sync_one_at_a_time(
    tmp_path: Path, remote: Remote
) -> None:
    """Two indexes (one following main, one dev) given one sync.checkout_dir: their syncs took
    only their own index's lock, so one reset the clone while the other's git ran there or its
    index run read the tree ("git checkout failed: … index.lock': File exists"); two first
    clones at once: the next test."""
    remote.push({f"domain/bulk/n{i}.md": f"# Note {i}\n\nSettlement {i}.\n" for i in range(300)})
    git(remote.work, "checkout", "--quiet", "-b", "dev")
    git(remote.work, "rm", "-r", "--quiet", "domain/bulk")
    git(remote.work, "commit", "--quiet", "-m", "dev without the notes")
    git(remote.work, "push", "--quiet", "origin", "dev")
    shared = {"sync.checkout_dir": str(tmp_path / "kb")}
    apis = [
        Briefd(git_settings(tmp_path, remote.url, **shared, db=str(tmp_path / f"{b}" / "i.db"),
                            **{"sync.branch": b}), embedder=None)
        for b in ("main", "dev")
    ]  # fmt: skip
    errors: list[str | None] = []
    documents: list[int] = []

    def sync(api: Briefd) -> None:
        report = api.sync()
        errors.append(report.error)
        documents.append(report.index.documents if report.index else -1)

    with apis[0], apis[1]:
        assert apis[0].sync().ok and apis[1].sync().ok  # the clone made (one at a time)
        for _ in range(4):
            threads = [threading.Thread(target=sync, args=(api,)) for api in apis]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        assert errors == [None] * 8
        assert len(apis[0].documents()) == 302 and len(apis[1].documents()) == 2


def test_two_first_clones_into_one_checkout_dir_go_one_at_a_time(
    tmp_path: Path, remote: Remote
) -> None:
    """K3: the shared lock lived in the clone's git folder, which a first clone has not made
    yet: a second index's first sync, started meanwhile, cloned into the same temporary folder
    and failed with a traceback (FileExistsError: '.kb.cloning'). It now waits for the first."""
    shared = {"sync.checkout_dir": str(tmp_path / "kb")}
    first, second = (
        git_settings(tmp_path, remote.url, **shared, db=str(tmp_path / name / "i.db"))
        for name in ("first", "second")
    )
    reports: list[SyncReport] = []
    with Briefd(second, embedder=None) as api:
        with sync_lock(first):  # the first index's first clone runs (no git folder yet)
            thread = threading.Thread(target=lambda: reports.append(api.sync()))
            thread.start()
            thread.join(2)
            assert thread.is_alive() and not (tmp_path / "kb").exists()  # it waits its turn
        thread.join(30)
        assert reports and reports[0].error is None
        assert len(api.documents()) == 2
    with Briefd(first, embedder=None) as api:
        assert api.sync().ok and len(api.documents()) == 2  # the clone made, reused


def test_a_proposal_after_source_moved_is_refused_until_a_sync_follows_it(
    tmp_path: Path, git_api: Briefd, remote: Remote
) -> None:
    """Started without indexing (`serve --no-index`) after `source` moved, briefd's clone still
    follows the old repository: a proposal must not be pushed there."""
    git_api.sync()
    other = Remote(tmp_path / "other")
    other.push({"domain/retry.md": RETRY}, "the knowledge, moved")
    new = RETRY.replace("three", "four")
    with Briefd(git_settings(tmp_path, other.url), embedder=None) as api:
        with pytest.raises(ProposalConflictError, match=r"briefd sync.*nothing was proposed"):
            api.propose_update(ProposalRequest("domain/retry.md", "four", new))
        assert git(remote.bare, "branch", "--list", "briefd/*") == ""
        assert git(other.bare, "branch", "--list", "briefd/*") == ""
        api.sync()
        made = api.propose_update(ProposalRequest("domain/retry.md", "four", new))
    assert git(other.bare, "branch", "--list", "briefd/*").strip() == made.branch
    assert git(remote.bare, "branch", "--list", "briefd/*") == ""
