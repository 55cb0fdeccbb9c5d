"""Drift (T4) on real git repositories made in tmp_path, with real dates and authors: a commit
touching a governed path after the document's last change is drift; an unrelated one, or one
before that change, is not; editing the document clears it; a refresh reads only new commits;
a git URL code repository is cloned bare and fetched."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from briefd import SearchRequest
from briefd.api import Briefd
from briefd.bundles import BundleRequest
from briefd.sources.code import CodeSource, parse_log
from briefd.sources.refs import covering, covers_any, paths_covered
from tests.team.coderepo import LEDGER_DOC, RETRY_DOC, Repo, git, settings_for

DOC_AT = "2026-03-10T09:00:00+00:00"


@pytest.fixture
def knowledge(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "knowledge")
    repo.commit(
        {"domain/retry.md": RETRY_DOC, "domain/ledger.md": LEDGER_DOC},
        "Write the payment rules",
        DOC_AT,
        author="Writer",
    )
    return repo


@pytest.fixture
def app(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "app")
    repo.commit(
        {"services/payment/retry.py": "LIMIT = 2\n"}, "Start payments", "2026-03-01T10:00:00+00:00"
    )
    return repo


@pytest.fixture
def api(tmp_path: Path, knowledge: Repo, app: Repo) -> Iterator[Briefd]:
    with Briefd(settings_for(tmp_path, knowledge, str(app.path)), embedder=None) as instance:
        yield instance


def test_a_commit_after_the_document_on_a_governed_path_is_drift(api: Briefd, app: Repo) -> None:
    drifted = app.commit(
        {"services/payment/retry.py": "LIMIT = 5\n"},
        "Raise the soft decline retry limit to 5",
        "2026-03-15T12:30:00+00:00",
        author="Dev One",
    )
    app.commit(
        {"services/search/index.py": "pass\n"},
        "Unrelated search tweak",
        "2026-03-16T08:00:00+00:00",
    )

    api.index()
    report = api.drift()

    assert report.governed == 2
    assert [d.doc_path for d in report.documents] == ["domain/retry.md"]
    doc = report.documents[0]
    assert doc.updated_at == DOC_AT
    assert doc.since == "2026-03-15T12:30:00+00:00"
    assert doc.days >= 0
    assert [(c.hash, c.subject, c.author, c.at, c.paths) for c in doc.commits] == [
        (
            drifted,
            "Raise the soft decline retry limit to 5",
            "Dev One",
            "2026-03-15T12:30:00+00:00",
            ("services/payment/retry.py",),
        )
    ]
    (repo,) = report.repos
    assert repo.name == "app" and repo.branch == "main" and repo.error is None
    assert repo.head == git(app.path, "rev-parse", "HEAD")


def test_commits_before_the_document_or_elsewhere_are_not_drift(api: Briefd, app: Repo) -> None:
    app.commit({"services/ledger/post.py": "x\n"}, "Before the doc", "2026-03-09T00:00:00+00:00")
    app.commit({"services/ledgers/other.py": "x\n"}, "Similar prefix", "2026-03-20T00:00:00+00:00")
    app.commit({"tools/close/deep/run.py": "x\n"}, "Too deep for *.py", "2026-03-21T00:00:00+00:00")

    api.index()

    assert api.drift().documents == ()


def test_several_globs_and_commits_are_listed_newest_first(api: Briefd, app: Repo) -> None:
    first = app.commit(
        {"services/ledger/post.py": "a\n"}, "Post twice", "2026-03-11T00:00:00+00:00"
    )
    second = app.commit(
        {"tools/close/run.py": "b\n", "services/ledger/post.py": "c\n", "README.md": "d\n"},
        "Close the month",
        "2026-03-12T00:00:00+00:00",
        author="Dev Two",
    )

    api.index()
    (doc,) = api.drift().documents

    assert doc.doc_path == "domain/ledger.md"
    assert [(c.hash, c.paths) for c in doc.commits] == [
        (second, ("services/ledger/post.py", "tools/close/run.py")),
        (first, ("services/ledger/post.py",)),
    ]
    assert doc.since == "2026-03-11T00:00:00+00:00"


def test_a_later_edit_of_the_document_clears_its_drift(
    api: Briefd, app: Repo, knowledge: Repo
) -> None:
    app.commit({"services/payment/retry.py": "LIMIT = 5\n"}, "Raise", "2026-03-15T00:00:00+00:00")
    api.index()
    assert [d.doc_path for d in api.drift().documents] == ["domain/retry.md"]

    knowledge.commit(
        {"domain/retry.md": RETRY_DOC.replace("three times", "five times")},
        "Retry five times",
        "2026-03-18T00:00:00+00:00",
    )
    api.index()

    assert api.drift().documents == ()


def test_moving_a_document_unchanged_keeps_its_age_and_its_drift(
    api: Briefd, app: Repo, knowledge: Repo
) -> None:
    app.commit({"services/payment/retry.py": "LIMIT = 5\n"}, "Raise", "2026-03-15T00:00:00+00:00")
    knowledge.commit(
        {"domain/retry.md": None, "domain/payments/retry.md": RETRY_DOC},
        "Move the payment rules into a folder",
        "2026-03-20T00:00:00+00:00",
    )
    knowledge.commit(
        {"domain/ledger.md": None, "domain/payments/ledger.md": LEDGER_DOC + "\nEdited.\n"},
        "Move and edit the ledger rules",
        "2026-03-21T00:00:00+00:00",
    )

    api.index()

    (doc,) = api.drift().documents
    assert (doc.doc_path, doc.updated_at, doc.since) == (
        "domain/payments/retry.md",
        DOC_AT,  # the move is no review of the rules: the raise still drifts from them
        "2026-03-15T00:00:00+00:00",
    )
    ages = {d.path: d.updated_at for d in api.documents()}
    assert ages == {
        "domain/payments/ledger.md": "2026-03-21T00:00:00+00:00",  # moved with an edit
        "domain/payments/retry.md": DOC_AT,
    }


def test_a_second_sync_reads_only_the_new_commits(api: Briefd, app: Repo) -> None:
    for day in (11, 12, 13):
        app.commit(
            {f"services/payment/f{day}.py": "x\n"}, f"Day {day}", f"2026-03-{day}T00:00:00+00:00"
        )
    first = api.sync()
    assert first.error is None
    (repo,) = api.drift().repos
    assert (repo.last_read, repo.commits) == (3, 3)  # the 2026-03-01 commit predates every doc

    newest = app.commit({"services/payment/f14.py": "x\n"}, "Day 14", "2026-03-14T00:00:00+00:00")
    api.sync()
    (repo,) = api.drift().repos
    assert (repo.last_read, repo.commits) == (1, 4)
    assert api.drift().documents[0].commits[0].hash == newest

    api.sync()
    (repo,) = api.drift().repos
    assert (repo.last_read, repo.commits) == (0, 4)


def test_a_rewritten_code_branch_is_read_again(api: Briefd, app: Repo) -> None:
    app.commit({"services/payment/a.py": "x\n"}, "Gone soon", "2026-03-12T00:00:00+00:00")
    api.index()
    git(app.path, "reset", "--quiet", "--hard", "HEAD~1")
    kept = app.commit({"services/payment/b.py": "x\n"}, "Rewritten", "2026-03-13T00:00:00+00:00")

    api.index()
    report = api.drift()

    assert report.repos[0].commits == 1
    assert [c.hash for c in report.documents[0].commits] == [kept]


def _feature(app: Repo, files: dict[str, str | None], message: str, at: str) -> str:
    """A commit on branch ``feature`` (made off main when there is none; main checked out
    again after)."""
    there = git(app.path, "branch", "--list", "feature")
    git(app.path, "checkout", "--quiet", *(["feature"] if there else ["-b", "feature"]))
    made = app.commit(files, message, at, author="Dev Two")
    git(app.path, "checkout", "--quiet", "main")
    return made


def test_a_commit_merged_after_the_document_is_drift_dated_by_its_merge(
    api: Briefd, app: Repo
) -> None:
    """GitHub's "Create a merge commit": the feature commit is dated before the document's
    last change (03-10), merged after it. It arrived after: drift, named as itself (its
    author and subject), dated by the merge; the merge itself is no commit of the list. One
    dated before the first read's window (a long-lived branch) counts too."""
    early = _feature(
        app, {"services/ledger/old.py": "x\n"}, "Long-lived branch", "2026-01-15T00:00:00+00:00"
    )
    drifted = _feature(
        app, {"services/ledger/a.py": "x\n"}, "Post in cents", "2026-03-08T00:00:00+00:00"
    )
    app.commit({"README.md": "x\n"}, "Meanwhile on main", "2026-03-09T00:00:00+00:00")
    app.merge("feature", "Merge pull request #7", "2026-03-20T00:00:00+00:00")

    api.index()
    (doc,) = api.drift().documents

    assert doc.doc_path == "domain/ledger.md"
    listed = sorted((c.hash, c.author, c.subject, c.at, c.paths) for c in doc.commits)
    assert listed == sorted([
        (early, "Dev Two", "Long-lived branch", "2026-03-20T00:00:00+00:00",
         ("services/ledger/old.py",)),
        (drifted, "Dev Two", "Post in cents", "2026-03-20T00:00:00+00:00",
         ("services/ledger/a.py",)),
    ])  # fmt: skip
    assert doc.since == "2026-03-20T00:00:00+00:00"


def test_a_merge_after_the_last_read_is_drift_and_one_before_the_document_is_not(
    api: Briefd, app: Repo
) -> None:
    """Read incrementally (a sync before the merge, one after); a branch merged before the
    document's last change is not drift, whatever its commits touched."""
    _feature(app, {"services/ledger/b.py": "x\n"}, "Merged early", "2026-03-05T00:00:00+00:00")
    app.merge("feature", "Merge pull request #6", "2026-03-06T00:00:00+00:00")
    git(app.path, "branch", "--quiet", "-D", "feature")
    api.index()
    assert api.drift().documents == ()

    drifted = _feature(
        app, {"services/ledger/a.py": "x\n"}, "Post in cents", "2026-03-08T00:00:00+00:00"
    )
    app.merge("feature", "Merge pull request #7", "2026-03-20T00:00:00+00:00")
    api.index()
    report = api.drift()

    assert [(d.doc_path, [(c.hash, c.at) for c in d.commits]) for d in report.documents] == [
        ("domain/ledger.md", [(drifted, "2026-03-20T00:00:00+00:00")])
    ]
    assert (report.repos[0].last_read, report.repos[0].commits) == (1, 1)


def test_a_git_url_code_repo_is_cloned_bare_and_fetched(
    tmp_path: Path, knowledge: Repo, app: Repo
) -> None:
    remote = app.bare_copy(tmp_path / "app-remote.git")
    url = remote.as_uri()
    settings = settings_for(
        tmp_path, knowledge, {"source": url, "branch": "main", "name": "payments"}
    )
    with Briefd(settings, embedder=None) as api:
        api.index()
        clone = tmp_path / "data" / "code" / "payments.git"
        assert git(clone, "rev-parse", "--is-bare-repository") == "true"
        assert oct(clone.stat().st_mode & 0o777) == "0o700"  # its config holds the URL
        assert api.drift().documents == ()

        pushed = app.commit(
            {"services/payment/retry.py": "LIMIT = 9\n"}, "Nine", "2026-03-20T00:00:00+00:00"
        )
        app.push_to()
        report = api.sync()
        assert report.error is None

        drift = api.drift()
        (repo,) = drift.repos
        assert (repo.name, repo.location, repo.branch, repo.last_read) == (
            "payments",
            url,
            "main",
            1,
        )
        assert [c.hash for c in drift.documents[0].commits] == [pushed]
        assert git(clone, "rev-parse", "main") == pushed


def test_a_bare_code_repository_on_this_machine_is_read_in_place(
    tmp_path: Path, knowledge: Repo, app: Repo
) -> None:
    """A team's code on this machine as a bare repository (a server's ``/srv/git/app.git``,
    pushed to directly): drift reported it as "not a git checkout" and checked none of it."""
    bare = app.bare_copy(tmp_path / "srv" / "app.git")
    with Briefd(settings_for(tmp_path, knowledge, str(bare)), embedder=None) as api:
        api.index()
        pushed = app.commit(
            {"services/payment/retry.py": "LIMIT = 9\n"}, "Nine", "2026-03-20T00:00:00+00:00"
        )
        app.push_to()
        drift = api.drift(refresh=True)
        (repo,) = drift.repos
        assert (repo.name, repo.location, repo.branch, repo.error) == (
            "app",
            str(bare),
            "main",
            None,
        )
        assert [d.doc_path for d in drift.documents] == ["domain/retry.md"]
        assert [c.hash for c in drift.documents[0].commits] == [pushed]
    assert not (tmp_path / "data" / "code").exists()  # read where it is, not cloned


def test_a_git_url_code_repo_s_errors_point_at_its_own_settings(
    tmp_path: Path, knowledge: Repo, app: Repo
) -> None:
    """A code repository's clone and fetch failures read as the knowledge source's: a branch
    the remote lacks said "check the repository URL in `source`" (clone) or "check
    `sync.branch`" (fetch, once the branch was deleted), and neither named the repository."""
    remote = app.bare_copy(tmp_path / "app-remote.git")
    git(remote, "branch", "release", "main")
    url, gone = remote.as_uri(), (tmp_path / "gone.git").as_uri()
    repos = [
        {"source": url, "branch": "nope", "name": "typo"},
        {"source": url, "branch": "release", "name": "release"},
        {"source": gone, "name": "gone"},
    ]
    with Briefd(settings_for(tmp_path, knowledge, *repos), embedder=None) as api:
        api.index()
        git(remote, "branch", "-D", "release")
        errors = {r.name: r.error for r in api.drift(refresh=True).repos}

    assert errors["typo"] == (
        f"code repo 'typo' ({url}): the remote has no branch 'nope'; check code.repos[].branch"
    )
    assert errors["release"] == (
        f"code repo 'release' ({url}): the remote has no branch 'release'; check "
        "code.repos[].branch"
    )
    assert (errors["gone"] or "").startswith(f"code repo 'gone' ({gone}): git clone failed")
    assert (errors["gone"] or "").endswith("check the repository URL in code.repos[].source")
    # nothing of the failed clones is left beside the clones (a '.gone.git.cloning' folder was)
    clones = tmp_path / "data" / "code"
    assert sorted(p.name for p in clones.iterdir()) == ["release.git"]


@pytest.mark.parametrize("age", [3600, -86_400], ids=["an hour ago", "a day ahead"])
def test_a_lock_a_killed_git_left_in_a_bare_code_clone_is_cleared(
    tmp_path: Path, knowledge: Repo, app: Repo, age: int
) -> None:
    """A git killed mid-fetch (a timeout, a killed server) leaves its ref lock in the bare
    clone; without clearing it every later fetch fails and drift stops at that commit. (A lock
    younger than the git timeout may be another process's live fetch: it is left alone.) One
    dated ahead of the clock (the clone restored from a backup, the clock set back since) was
    never old enough: drift said "0 of 1 document … drift" with a fetch error until the clock
    caught up."""
    remote = app.bare_copy(tmp_path / "app-remote.git")
    settings = settings_for(
        tmp_path, knowledge, {"source": remote.as_uri(), "branch": "main", "name": "payments"}
    )
    with Briefd(settings, embedder=None) as api:
        api.index()
        clone = tmp_path / "data" / "code" / "payments.git"
        lock = clone / "refs" / "heads" / "main.lock"
        lock.write_text("")  # what a killed fetch left
        os.utime(lock, (time.time() - age, time.time() - age))
        pushed = app.commit(
            {"services/payment/retry.py": "LIMIT = 9\n"}, "Nine", "2026-03-20T00:00:00+00:00"
        )
        app.push_to()
        assert api.sync().error is None

        (repo,) = api.drift().repos
        assert repo.error is None
        assert [c.hash for c in api.drift().documents[0].commits] == [pushed]
        assert not lock.exists()


def test_a_missing_code_repo_is_reported_and_never_fails_indexing(
    tmp_path: Path, knowledge: Repo
) -> None:
    settings = settings_for(tmp_path, knowledge, str(tmp_path / "nowhere"))
    with Briefd(settings, embedder=None) as api:
        report = api.index()
        assert report.documents == 2
        (repo,) = api.drift().repos
        assert repo.error is not None
        assert "not a git checkout" in repo.error and "nowhere" in repo.error


def test_a_commit_dated_before_its_parent_hides_no_drift_on_the_first_read(
    api: Briefd, app: Repo
) -> None:
    """A first read goes back to the document's last change (``--since``), and git stops
    walking at the first commit dated before it: one made on a clock a week slow hid the
    governed commit under it, made after the document."""
    drifted = app.commit(
        {"services/payment/retry.py": "LIMIT = 4\n"}, "Four", "2026-03-12T00:00:00+00:00"
    )
    app.commit({"README.md": "x\n"}, "Slow clock", "2026-03-05T00:00:00+00:00")

    api.index()

    assert [(d.doc_path, [c.hash for c in d.commits]) for d in api.drift().documents] == [
        ("domain/retry.md", [drifted])
    ]


def test_a_code_repo_without_commits_says_so(tmp_path: Path, knowledge: Repo) -> None:
    """A repository just created for the code: its error names it and says what is missing,
    not git's "ambiguous argument 'HEAD'"; once it has a commit, it is read."""
    fresh = Repo(tmp_path / "new-service")  # git init, nothing committed
    with Briefd(settings_for(tmp_path, knowledge, str(fresh.path)), embedder=None) as api:
        api.index()
        (repo,) = api.drift().repos
        assert repo.error == (
            f"code repo 'new-service' ({fresh.path}): has no commit yet; drift is read once it "
            "has some"
        )

        fresh.commit({"services/payment/a.py": "x\n"}, "First", "2026-03-20T00:00:00+00:00")
        report = api.drift(refresh=True)
        assert report.repos[0].error is None
        assert [d.doc_path for d in report.documents] == ["domain/retry.md"]


def test_a_shallow_clone_s_cut_commit_is_not_drift_on_every_file_of_its_tree(
    tmp_path: Path, knowledge: Repo, app: Repo
) -> None:
    """A CI checkout (``--depth 2``): git shows the commit whose parent was not fetched as
    adding every file of its tree, so it read as touching the retry service when it changed
    the README only; the commits after it are read as they are."""
    app.commit({"README.md": "docs\n"}, "Write the README", "2026-03-15T00:00:00+00:00")
    drifted = app.commit(
        {"tools/close/run.py": "x\n"}, "Close the month", "2026-03-16T00:00:00+00:00"
    )
    shallow = tmp_path / "ci-checkout"
    git(tmp_path, "clone", "--quiet", "--depth", "2", app.path.as_uri(), str(shallow))
    assert git(shallow, "rev-parse", "--is-shallow-repository") == "true"
    with Briefd(settings_for(tmp_path, knowledge, str(shallow)), embedder=None) as api:
        api.index()
        report = api.drift()

    assert [(d.doc_path, [c.hash for c in d.commits]) for d in report.documents] == [
        ("domain/ledger.md", [drifted])
    ]
    assert report.repos[0].commits == 2 and report.repos[0].error is None


def test_a_shallow_knowledge_checkout_says_its_documents_drift_is_not_seen(
    tmp_path: Path, knowledge: Repo, app: Repo
) -> None:
    """A CI checkout of the knowledge (``fetch-depth: 1``): git shows its one commit adding
    every file, so each document was dated by that (unrelated) commit and the code changed
    since the document's real last change was no drift, with nothing saying why. The report
    names the documents and how to see their drift; with the whole history it drifts."""
    app.commit({"services/payment/retry.py": "LIMIT = 5\n"}, "Five", "2026-03-15T00:00:00Z")
    knowledge.commit({"README.md": "x\n"}, "Readme", "2026-03-20T00:00:00+00:00")
    checkout = tmp_path / "ci-knowledge"
    git(tmp_path, "clone", "--quiet", "--depth", "1", knowledge.path.as_uri(), str(checkout))
    settings = replace(settings_for(tmp_path, knowledge, str(app.path)), source=checkout)
    with Briefd(settings, embedder=None) as api:
        api.index()
        shallow = api.drift()
        git(checkout, "fetch", "--quiet", "--unshallow")
        api.index()
        complete = api.drift()

    assert shallow.documents == ()
    (warning,) = shallow.warnings
    assert f"knowledge source {checkout} is a shallow clone: domain/ledger.md, " in warning
    assert "domain/retry.md are dated by its oldest commit" in warning
    assert "git fetch --unshallow" in warning
    assert [d.doc_path for d in complete.documents] == ["domain/retry.md"]
    assert complete.warnings == ()


def test_a_repo_no_longer_configured_is_forgotten(
    tmp_path: Path, knowledge: Repo, app: Repo
) -> None:
    app.commit({"services/payment/x.py": "x\n"}, "Drift", "2026-03-15T00:00:00+00:00")
    with Briefd(settings_for(tmp_path, knowledge, str(app.path)), embedder=None) as api:
        api.index()
        assert len(api.drift().documents) == 1
    with Briefd(settings_for(tmp_path, knowledge), embedder=None) as api:
        api.index()
        report = api.drift()
        assert (report.repos, report.documents) == ((), ())


def test_refs_written_from_the_repository_root_with_dot_slash_govern_the_same_code(
    tmp_path: Path, app: Repo
) -> None:
    """``./services/payment/**`` is how a path is often written; gitignore alone matches
    nothing with it, so neither drift nor ``--paths`` ever found the document."""
    knowledge = Repo(tmp_path / "dot-knowledge")
    doc = RETRY_DOC.replace('"services/payment/**"', '"./services/payment/**"')
    knowledge.commit({"domain/retry.md": doc, "domain/ledger.md": LEDGER_DOC}, "Rules", DOC_AT)
    app.commit({"services/payment/retry.py": "LIMIT = 5\n"}, "Raise", "2026-03-15T00:00:00+00:00")
    with Briefd(settings_for(tmp_path, knowledge, str(app.path)), embedder=None) as api:
        api.index()
        assert [(d.doc_path, d.refs) for d in api.drift().documents] == [
            ("domain/retry.md", ("./services/payment/**",))
        ]
        asked = SearchRequest("ledger postings debit credit", paths=("services/payment/x.py",))
        assert [h.doc_path for h in api.search(asked).hits][:2] == [
            "domain/retry.md",  # governs the path: leads the better word match
            "domain/ledger.md",
        ]
    assert covering(["./services/payment/**"], ["services/payment/retry.py"]) == (
        "refs ./services/payment/** covers services/payment/retry.py"
    )
    assert covering(["./retry.py"], ["services/payment/retry.py"]) is None  # root only


def test_paths_covered_and_covers_any_agree_with_covering() -> None:
    paths = [
        "services/payment/a.py",
        "services/payments/b.py",
        "docs/x.md",
        "a/b/c/README.md",
        "root.txt",
    ]
    for glob in (
        "services/payment/**",
        "*.md",
        "docs/",
        "/root.txt",
        "a/**/README.md",
        "!x",
        "services/*",
        "./services/payment/**",
        "./root.txt",
    ):
        assert paths_covered(glob, paths) == [p for p in paths if covering([glob], [p])]
        for path in paths:  # the uncovered-refs check stops at the first; the same rule
            assert covers_any(glob, [path]) == (covering([glob], [path]) is not None), glob


def test_parse_log_reads_names_with_spaces_and_subjects_with_separators() -> None:
    out = (
        "\x1eabc\x1fdef\x1f2026-01-01T00:00:00+00:00\x1fDev One\x1fFix: a|b\x1fc\0\nsvc/a b.py\0"
        "svc/c.py\0"
        "\x1edef\x1f\x1f2025-12-31T00:00:00+00:00\x1fDev Two\x1fMerge-free\0\nREADME.md\0"
    )
    logged = parse_log(out, "app")
    assert [e.parents for e in logged] == [("def",), ()]
    commits = [e.commit for e in logged]
    assert [(c.hash, c.at, c.author, c.subject, c.paths) for c in commits] == [
        (
            "abc",
            "2026-01-01T00:00:00+00:00",
            "Dev One",
            "Fix: a|b\x1fc",
            ("svc/a b.py", "svc/c.py"),
        ),
        ("def", "2025-12-31T00:00:00+00:00", "Dev Two", "Merge-free", ("README.md",)),
    ]


def test_code_repo_names_come_from_the_path_or_url(tmp_path: Path, knowledge: Repo) -> None:
    settings = settings_for(tmp_path, knowledge, "git@github.com:acme/payments.git", "../ledger/")
    names = [CodeSource(settings, r).name for r in settings.code.repos]
    assert names == ["payments", "ledger"]


def test_a_long_drift_lists_the_newest_commits_and_counts_all(
    api: Briefd, app: Repo, knowledge: Repo
) -> None:
    hashes = [
        app.commit(
            {"services/payment/retry.py": f"LIMIT = {n}\n"},
            f"Step {n}",
            f"2026-03-11T00:{n:02d}:00+00:00",
        )
        for n in range(22)
    ]
    api.index()
    (doc,) = api.drift().documents
    assert doc.commit_count == 22 and len(doc.commits) == 20
    assert [c.hash for c in doc.commits] == hashes[::-1][:20]
    assert doc.since == "2026-03-11T00:00:00+00:00"

    knowledge.commit({"domain/retry.md": None}, "Retire the retry doc", "2026-03-20T00:00:00+00:00")
    api.index()
    assert api.drift().documents == ()


def test_a_path_committed_decomposed_drifts_the_document_whose_refs_spell_it_composed(
    tmp_path: Path,
) -> None:
    """A macOS checkout commits ``ödeme/`` as ``o`` + U+0308 and git prints it so; the refs,
    read composed (NFC), never covered it: no drift, and ``--paths`` led with nothing."""
    knowledge = Repo(tmp_path / "knowledge")
    doc = "---\nrefs: [servisler/ödeme/**]\n---\n# Ödeme\n\n## İade\nİade 14 gün.\n"
    knowledge.commit({"domain/odeme.md": doc}, "Ödeme kuralları", DOC_AT, author="Yazar")
    app = Repo(tmp_path / "app")
    decomposed = "servisler/o\u0308deme/iade.py"
    app.commit({decomposed: "GUN = 14\n"}, "Başlangıç", "2026-03-01T10:00:00+00:00")
    changed = app.commit(
        {decomposed: "GUN = 30\n"}, "İade süresi 30 gün", "2026-03-12T10:00:00+00:00"
    )
    with Briefd(settings_for(tmp_path, knowledge, str(app.path)), embedder=None) as api:
        api.index()
        report = api.drift()
        bundle = api.compile_bundle(BundleRequest("süre", max_tokens=500, paths=(decomposed,)))
    assert [(d.doc_path, [c.hash for c in d.commits]) for d in report.documents] == [
        ("domain/odeme.md", [changed])
    ]
    assert report.documents[0].commits[0].paths == (decomposed,)  # as git printed it
    governed = [(i.doc_path, i.reasons) for i in bundle.items if i.tier == "governed"]
    assert governed == [
        ("domain/odeme.md", ("refs servisler/ödeme/** covers servisler/ödeme/iade.py",))
    ]


def test_a_refs_glob_with_a_bang_takes_generated_code_back(tmp_path: Path) -> None:
    """refs are gitignore-style: ``!services/payment/generated/**`` after
    ``services/payment/**`` leaves the generated code out. Each glob was matched alone, a
    ``!`` one matching nothing, so a regenerated client drifted the document and ``paths``
    naming it led with it."""
    knowledge = Repo(tmp_path / "knowledge")
    doc = RETRY_DOC.replace(
        '"services/payment/**"', '"services/payment/**", "!./services/payment/generated/**"'
    )
    knowledge.commit({"domain/retry.md": doc, "domain/ledger.md": LEDGER_DOC}, "Rules", DOC_AT)
    app = Repo(tmp_path / "app")
    app.commit({"services/payment/retry.py": "LIMIT = 2\n"}, "Start", "2026-03-01T10:00:00+00:00")
    app.commit(
        {"services/payment/generated/client.py": "v2\n"}, "Regenerate", "2026-03-12T00:00:00+00:00"
    )
    with Briefd(settings_for(tmp_path, knowledge, str(app.path)), embedder=None) as api:
        api.index()
        assert api.drift().documents == ()
        generated = ("services/payment/generated/client.py",)
        bundle = api.compile_bundle(BundleRequest("retry limit", paths=generated))
        assert [i.doc_path for i in bundle.items if i.tier == "governed"] == []
        changed = app.commit(
            {"services/payment/retry.py": "LIMIT = 5\n", **dict.fromkeys(generated, "v3\n")},
            "Raise the limit",
            "2026-03-13T00:00:00+00:00",
        )
        api.index()
        report = api.drift()
    assert [(d.doc_path, [(c.hash, c.paths) for c in d.commits]) for d in report.documents] == [
        ("domain/retry.md", [(changed, ("services/payment/retry.py",))])
    ]


def test_code_and_its_document_merged_in_one_pull_request_are_no_drift(tmp_path: Path) -> None:
    """The knowledge folder inside the code repository (``code.repos: [.]``): a pull request
    changes the code (03-12) and then its document (03-13) and is merged with a merge commit
    (03-20). Both arrived with the merge: the document is as new as the code, no drift; its
    last change is the merge."""
    mono = Repo(tmp_path / "mono")
    mono.commit(
        {"domain/ledger.md": LEDGER_DOC, "services/ledger/post.py": "a\n"},
        "Start",
        "2026-03-01T00:00:00+00:00",
    )
    git(mono.path, "checkout", "--quiet", "-b", "feature")
    mono.commit({"services/ledger/post.py": "b\n"}, "Post in cents", "2026-03-12T00:00:00+00:00")
    mono.commit(
        {"domain/ledger.md": LEDGER_DOC + "\nAmounts are in cents.\n"},
        "Document cents",
        "2026-03-13T00:00:00+00:00",
    )
    git(mono.path, "checkout", "--quiet", "main")
    mono.merge("feature", "Merge pull request #8", "2026-03-20T00:00:00+00:00")

    with Briefd(settings_for(tmp_path, mono, str(mono.path)), embedder=None) as api:
        api.index()
        report = api.drift()
        ages = {d.path: d.updated_at for d in api.documents()}

    assert report.repos[0].error is None and report.repos[0].commits == 2  # both arrived
    assert report.documents == ()
    assert ages == {"domain/ledger.md": "2026-03-20T00:00:00+00:00"}
