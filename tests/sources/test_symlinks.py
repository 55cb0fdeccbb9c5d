"""Failure 1 of issue 16: secrets served through symbolic links. A link is followed only to a
regular file that the scan would index for itself; links into ``.git/``, to ignored files, to
hidden or ignored folders, or out of the source are skipped with a reason and never served."""

from __future__ import annotations

from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.bundles import BundleRequest
from briefd.errors import NotFoundError
from briefd.retrieval.search import SearchRequest
from briefd.settings import Settings
from briefd.sources.knowledge import checkout_dir
from tests.sync.conftest import git_settings
from tests.sync.gitrepo import RETRY, Remote, git

SECRET = "ghp_leakedForgeToken0123456789"


def served_anywhere(api: Briefd, path: str, words: str) -> list[str]:
    """Where ``path`` or ``words`` show up: search hits, the document, a bundle."""
    found = []
    hits = api.search(SearchRequest(words, scopes=("all",), mode="bm25")).hits
    found += [f"search:{h.doc_path}" for h in hits if h.doc_path == path or words in h.content]
    try:
        api.document(path)
        found.append("get_document")
    except NotFoundError:
        pass
    bundle = api.compile_bundle(BundleRequest(words, scopes=("all",), max_tokens=2000))
    found += [f"bundle:{i.doc_path}" for i in bundle.items if i.doc_path == path]
    return found


def test_a_link_into_git_config_of_an_owned_clone_is_never_served(
    tmp_path: Path, remote: Remote
) -> None:
    """A teammate merges ``domain/leak.md -> ../.git/config``: the clone's config (the remote
    URL, with its credentials when the URL carries them) must not reach any reader."""
    (remote.work / "domain" / "leak.md").symlink_to("../.git/config")
    git(remote.work, "add", "domain")
    git(remote.work, "commit", "--quiet", "-m", "add a link")
    git(remote.work, "push", "--quiet", "origin", "main")
    with Briefd(git_settings(tmp_path, remote.url), embedder=None) as api:
        api.sync()
        git(checkout_dir(api.settings), "config", "credential.helper", f"store --token={SECRET}")
        report = api.index()
        skipped = {s.path: s.reason for s in report.skipped}
        assert skipped["domain/leak.md"] == (
            "symbolic link to .git/config, which is in a hidden or ignored folder; not served"
        )
        assert [d.path for d in api.documents()] == ["domain/glossary.md", "domain/retry.md"]
        assert served_anywhere(api, "domain/leak.md", "repositoryformatversion") == []
        assert served_anywhere(api, "domain/leak.md", SECRET) == []


def test_a_link_to_an_ignored_env_file_of_a_checkout_is_never_served(
    settings: Settings, tmp_path: Path
) -> None:
    root = tmp_path / "knowledge"
    (root / "domain").mkdir(parents=True)
    git(root, "init", "--quiet", "--initial-branch=main")
    (root / ".gitignore").write_text(".env\ndrafts/\n")
    (root / ".env").write_text(f"GITHUB_TOKEN={SECRET}\n")
    (root / "domain" / "retry.md").write_text(RETRY)
    (root / "domain" / "env.md").symlink_to("../.env")
    (root / "drafts").mkdir()
    (root / "drafts" / "plan.md").write_text(f"# Plan\n\n{SECRET} draft\n")
    (root / "domain" / "plan.md").symlink_to("../drafts/plan.md")
    with Briefd(settings, embedder=None) as api:
        report = api.index(root)
        skipped = {s.path: s.reason for s in report.skipped}
        assert skipped["domain/env.md"] == (
            "symbolic link to .env, which is not included, excluded or ignored by "
            "index.include / index.exclude / .gitignore; not served"
        )
        assert skipped["domain/plan.md"] == (
            "symbolic link to drafts/plan.md, which is in a hidden or ignored folder; not served"
        )
        assert report.documents == 1
        assert served_anywhere(api, "domain/env.md", SECRET) == []
        assert served_anywhere(api, "domain/plan.md", SECRET) == []


def test_links_to_files_the_scan_indexes_anyway_still_work(
    api: Briefd, write_files: object, tmp_path: Path
) -> None:
    root = tmp_path / "knowledge"
    (root / "domain").mkdir(parents=True)
    (root / "projects" / "alpha").mkdir(parents=True)
    (root / "domain" / "refunds.md").write_text("# Refunds\n\nRefund window is 180 days.\n")
    (root / "projects" / "alpha" / "refunds.md").symlink_to("../../domain/refunds.md")
    (root / "notes").mkdir()
    (root / "notes" / "loose.md").write_text("# Loose\n\nNot in a scope.\n")
    (root / "domain" / "loose.md").symlink_to("../notes/loose.md")
    (root / "domain" / "folder").symlink_to(root / "notes")
    report = api.index(root)
    skipped = {s.path: s.reason for s in report.skipped}
    assert skipped["domain/loose.md"] == (
        "symbolic link to notes/loose.md, which is outside every scope; not served"
    )
    assert skipped["domain/folder/"] == (
        "symbolic link to the folder notes/, which is in the knowledge source; not followed: "
        "its documents are read there (when in a scope), not twice"
    )
    paths = [d.path for d in api.documents(("all",))]
    assert paths == ["domain/refunds.md", "projects/alpha/refunds.md"]


@pytest.mark.parametrize("target", ["/etc/hostname", "../outside.md"])
def test_links_out_of_the_source_are_skipped(api: Briefd, tmp_path: Path, target: str) -> None:
    root = tmp_path / "knowledge"
    (root / "domain").mkdir(parents=True)
    (tmp_path / "outside.md").write_text("# Outside\n")
    (root / "domain" / "ok.md").write_text("# Ok\n")
    (root / "domain" / "out.md").symlink_to(target if target.startswith("/") else "../" + target)
    report = api.index(root)
    assert {s.path: s.reason for s in report.skipped} == {
        "domain/out.md": "symbolic link to a file outside the knowledge source; not served: move or copy the "
        "file into the knowledge source"
    }


def test_a_link_to_a_folder_outside_the_source_says_what_helps(api: Briefd, tmp_path: Path) -> None:
    """A scope folder linked in from beside the source (``docs/domain`` → ``../shared/domain``,
    as monorepos share docs) was skipped with "not followed (link the files, or move the
    folder)"; linking the files is no help, as a link to a file outside the source is not
    followed either, so the team was sent round in a circle."""
    (tmp_path / "shared" / "domain").mkdir(parents=True)
    (tmp_path / "shared" / "domain" / "fees.md").write_text("# Fees\n")
    root = tmp_path / "knowledge"
    (root / "conventions").mkdir(parents=True)
    (root / "conventions" / "style.md").write_text("# Style\n")
    (root / "domain").symlink_to("../shared/domain")
    report = api.index(root)
    assert {s.path: s.reason for s in report.skipped} == {
        "domain/": "symbolic link to a folder outside the knowledge source ('../shared/domain'); "
        "not followed, nor are links to its files: move the folder into the knowledge source, "
        "or give the folder that holds both as the source"
    }
    assert report.added == ("conventions/style.md",)


def test_a_broken_link_names_its_target_and_what_to_do(api: Briefd, tmp_path: Path) -> None:
    """A link whose target was moved or renamed (the page it pointed to went to another
    folder) was skipped as 'broken symbolic link', naming neither where it pointed nor what
    to do; the document it served before left the index with that line alone."""
    root = tmp_path / "knowledge"
    (root / "domain" / "shared").mkdir(parents=True)
    (root / "domain" / "shared" / "fees.md").write_text("# Fees\n\nThe fee is two percent.\n")
    (root / "domain" / "fees.md").symlink_to("shared/fees.md")
    assert "domain/fees.md" in api.index(root).added
    (root / "domain" / "shared").rename(root / "domain" / "archive")
    report = api.index(root)
    assert {s.path: s.reason for s in report.skipped} == {
        "domain/fees.md": "broken symbolic link: its target 'shared/fees.md' does not exist "
        "(moved or renamed?); not served: point the link at the document, or remove it"
    }
    assert "domain/fees.md" in report.deleted
