"""K3: a directory that is a git checkout is read in place — never fetched, never reset — and
its history gives documents their ``updated_commit``; plain directories keep file times."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.retrieval.search import SearchRequest
from briefd.service import create_app
from tests.service.conftest import service_config
from tests.service.live import TOKEN
from tests.sync.conftest import git_settings
from tests.sync.gitrepo import Remote, git


def updated(api: Briefd) -> dict[str, str | None]:
    with api.store.read() as conn:
        rows = conn.execute("SELECT path, updated_commit FROM documents ORDER BY path")
        return {r["path"]: r["updated_commit"] for r in rows}


def test_checkout_is_read_in_place_and_never_reset(tmp_path: Path, remote: Remote) -> None:
    head = remote.head()
    retry = remote.work / "domain" / "retry.md"
    retry.write_text(retry.read_text() + "\n## Local draft\nAn uncommitted idea.\n")
    (remote.work / "domain" / "draft.md").write_text("# Draft\n\n## Untracked\nNot committed.\n")
    other = tmp_path / "colleague"  # the remote moves on; briefd must not pull it in here
    git(tmp_path, "clone", "--quiet", str(remote.bare), str(other))
    (other / "domain" / "later.md").write_text("# Later\n\n## Pushed\nPushed elsewhere.\n")
    git(other, "add", ".")
    git(other, "commit", "--quiet", "-m", "later")
    git(other, "push", "--quiet", "origin", "main")

    with Briefd(git_settings(tmp_path, str(remote.work)), embedder=None) as api:
        report = api.sync()

        assert report.error is None and report.kind == "checkout"
        assert report.commit == head != remote.head()
        assert api.search(SearchRequest("pushed elsewhere", mode="bm25")).hits == ()
        assert report.source == str(remote.work)
        hits = api.search(SearchRequest("uncommitted idea", mode="bm25")).hits
        assert [h.doc_path for h in hits] == ["domain/retry.md"]
        assert updated(api) == {
            "domain/draft.md": None,  # untracked: no commit yet
            "domain/glossary.md": head,
            "domain/retry.md": None,  # modified since its last commit
        }
    assert git(remote.work, "rev-parse", "HEAD") == head
    assert "An uncommitted idea." in retry.read_text()
    assert (remote.work / "domain" / "draft.md").exists()
    assert git(remote.work, "status", "--porcelain") != ""


def test_a_checkouts_branch_is_the_one_checked_out(tmp_path: Path, remote: Remote) -> None:
    """GET /api/sync and `briefd sync --json` showed "branch": null for a checkout (only
    sync.branch, unset, was asked): it is the branch checked out, which is what is read."""
    git(remote.work, "checkout", "--quiet", "-b", "notes")
    with Briefd(git_settings(tmp_path, str(remote.work)), embedder=None) as api:
        report = api.sync()
        assert (report.error, report.kind, report.branch) == (None, "checkout", "notes")
        with TestClient(create_app(api, service_config())) as http:
            status = http.get("/api/sync", headers={"authorization": f"Bearer {TOKEN}"}).json()
        assert (status["kind"], status["branch"]) == ("checkout", "notes")
        git(remote.work, "checkout", "--quiet", "--detach")
        assert api.sync().branch is None  # a detached HEAD is on no branch


def test_knowledge_in_a_subdirectory_of_a_repository(tmp_path: Path) -> None:
    repo = Remote(tmp_path)
    commit = repo.push({"docs/kb/domain/a.md": "# A\n\n## Alpha\nAlpha text.\n", "README.md": "x"})

    with Briefd(git_settings(tmp_path, str(repo.work / "docs" / "kb")), embedder=None) as api:
        api.index()
        assert updated(api) == {"domain/a.md": commit}
        stamp = git(repo.work, "show", "-s", "--format=%ct", commit)
        view = api.document("domain/a.md")
        expected = datetime.fromtimestamp(int(stamp), UTC).isoformat(timespec="seconds")
        assert view.updated_at == expected


def test_plain_directory_keeps_file_times(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    (root / "domain").mkdir(parents=True)
    (root / "domain" / "a.md").write_text("# A\n\n## Alpha\nAlpha text.\n")

    with Briefd(git_settings(tmp_path, str(root)), embedder=None) as api:
        report = api.sync()
        assert report.error is None and report.kind == "directory" and report.commit is None
        assert updated(api) == {"domain/a.md": None}
        assert api.document("domain/a.md").updated_at.startswith("20")
        assert api.sync_status().kind == "directory"


def test_a_checkout_gone_between_syncs_is_named_in_the_sync_report(tmp_path: Path) -> None:
    """A served checkout moved away (or its disk unmounted): every poll logged "sync of  failed"
    and ``/api/sync`` said ``source: null``, ``kind: none``, as if none were configured, the
    error naming a source the report did not."""
    repo = Remote(tmp_path)
    repo.push({"domain/a.md": "# A\n\n## Alpha\nAlpha text.\n"})
    with Briefd(git_settings(tmp_path, str(repo.work)), embedder=None) as api:
        assert api.sync().error is None
        repo.work.rename(tmp_path / "moved")
        report = api.sync()
        status = api.sync_status()
        assert (report.source, status.source) == (str(repo.work), str(repo.work))
        assert report.error == status.last_error
        assert report.error is not None
        assert report.error.startswith(f"knowledge source {repo.work} does not exist; ")
        assert [h.doc_path for h in api.search(SearchRequest("alpha", mode="bm25")).hits] == [
            "domain/a.md"
        ]
