"""Git URL sources in settings, and remotes that fail: unreachable, asking for credentials
(git must fail at once, never prompt), a missing branch — always one line that says what to do."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.errors import SourceError
from briefd.settings import load_settings
from briefd.settings.raw import is_git_url
from briefd.state.postgres import redacted
from tests.embeddings.fakehttp import Reply, closed_port_url, fake_server
from tests.sync.conftest import git_settings
from tests.sync.gitrepo import RETRY, Remote, git


@pytest.mark.parametrize(
    "value, url",
    [
        ("https://github.com/acme/kb.git", True),
        ("ssh://git@github.com/acme/kb.git", True),
        ("git@github.com:acme/kb.git", True),
        ("file:///srv/kb.git", True),
        ("knowledge", False),
        ("/srv/knowledge", False),
        ("C:/knowledge", False),
    ],
)
def test_git_urls_are_recognised(value: str, url: bool) -> None:
    assert is_git_url(value) is url


def test_a_git_url_source_moves_to_sync_remote(tmp_path: Path) -> None:
    config = tmp_path / "briefd.yaml"
    config.write_text("source: git@github.com:acme/kb.git\nsync:\n  branch: main\n")
    settings = load_settings(config, env={})
    assert settings.source is None
    assert settings.sync.remote == "git@github.com:acme/kb.git"
    assert settings.sync.branch == "main"
    flag = load_settings(config, env={}, overrides={"source": str(tmp_path)})
    assert flag.source == tmp_path and flag.sync.remote is None  # a directory flag wins


def test_an_unreachable_remote_fails_fast(tmp_path: Path) -> None:
    settings = git_settings(tmp_path, f"{closed_port_url()}/kb.git")
    with Briefd(settings, embedder=None) as api:
        report = api.sync()
    assert report.error is not None
    assert report.error.startswith("git clone failed: fatal: unable to access")
    assert report.error.endswith("the remote is unreachable; check the network and the URL")
    assert report.index is None and report.kind == "clone"


def test_a_remote_that_never_answers_costs_a_sync_one_git_timeout(
    tmp_path: Path, remote: Remote
) -> None:
    """A remote that accepts the connection and never answers: the fetch's timeout ended it,
    then the sync asked that remote for its default branch and for its branches (to explain
    the failure), waiting sync.git_timeout on each: three timeouts a sync (two for a clone)."""
    with socket.create_server(("127.0.0.1", 0)) as hanging:
        url = f"http://127.0.0.1:{hanging.getsockname()[1]}/never-answers.git"
        with Briefd(git_settings(tmp_path, remote.url), embedder=None) as api:
            assert api.sync().ok
        for fresh in (False, True):  # briefd's clone there (fetch), then none yet (clone)
            db = tmp_path / ("fresh" if fresh else "data") / "index.db"
            settings = git_settings(tmp_path, url, **{"db": str(db), "sync.git_timeout": 2})
            with Briefd(settings, embedder=None) as api:
                started = time.monotonic()
                report = api.sync()
                elapsed = time.monotonic() - started
            command = "clone" if fresh else "fetch"
            assert report.error == (
                f"git {command} took longer than 2s; check the remote, or raise sync.git_timeout"
            )
            assert elapsed < 3.5, (command, elapsed)
    assert report.commit is None


def test_a_remote_asking_for_credentials_fails_without_prompting(tmp_path: Path) -> None:
    with fake_server() as server:
        server.on(
            "GET",
            "/kb.git/info/refs?service=git-upload-pack",
            lambda _: Reply(401, b"", "text/plain"),
        )
        settings = git_settings(tmp_path, f"{server.url}/kb.git")
        started = time.monotonic()
        with Briefd(settings, embedder=None) as api:
            report = api.sync()
        elapsed = time.monotonic() - started
    assert elapsed < 10
    assert report.error is not None
    assert report.error == (
        f"git clone failed: fatal: Authentication failed for '{server.url}/kb.git/'; the "
        "remote refused the credentials; briefd never prompts, so put a token in the URL, "
        "configure a credential helper or an SSH key"
    )
    assert report.forge_error is None


def test_credentials_in_urls_never_reach_messages(tmp_path: Path) -> None:
    url = closed_port_url().replace("http://", "http://bot:ghp_secret@") + "/kb.git"
    with Briefd(git_settings(tmp_path, url), embedder=None) as api:
        report = api.sync()
        assert report.error is not None and "ghp_secret" not in report.error
        assert "ghp_secret" not in report.source and "***@" in report.source
        assert "ghp_secret" not in str(api.sync_status())


def test_a_password_holding_an_at_sign_is_hidden_whole(tmp_path: Path) -> None:
    """``bot:ghp_se@cret@host``: the redaction stopped at the first ``@`` and showed the rest of
    the password (``***@cret@host``) in the source, the error and the sync status."""
    url = closed_port_url().replace("http://", "http://bot:ghp_se@cret@") + "/kb.git"
    with Briefd(git_settings(tmp_path, url), embedder=None) as api:
        report = api.sync()
        host = url.rpartition("@")[2]
        assert report.source == f"http://***@{host}"
        assert report.error is not None and "cret" not in report.error
        assert "cret" not in str(api.sync_status())
    assert redacted("postgresql://u:s3@cret@h:5/db") == "postgresql://u:***@h:5/db"


def test_background_triggers_coalesce(git_api: Briefd, remote: Remote) -> None:
    git_api.sync()
    remote.push({"domain/fx.md": "# FX\n\n## Rates\nRates refresh hourly.\n"})
    started = [git_api.trigger_sync() for _ in range(20)]
    deadline = time.monotonic() + 10
    while (git_api.sync_status().running or git_api.sync_status().syncs < 2) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.02)
    time.sleep(0.2)
    assert started[0] is True
    assert 2 <= git_api.sync_status().syncs <= 3  # the first sync, then one or two for 20 asks
    assert git_api.sync_status().last_commit == remote.head()


@pytest.mark.parametrize("branch", [None, "main"])
def test_an_empty_remote_says_so_and_is_followed_once_pushed(
    tmp_path: Path, branch: str | None
) -> None:
    empty = Remote(tmp_path)  # created on the forge; nothing pushed yet
    overrides = {"sync.branch": branch} if branch else {}
    with Briefd(git_settings(tmp_path, empty.url, **overrides), embedder=None) as api:
        first = api.sync()
        empty.push({"domain/retry.md": RETRY})
        second = api.sync()
    assert first.error == (
        f"the repository {empty.url} is empty (no branch, no commit yet); push the knowledge "
        "to it (domain/, conventions/, projects/<name>/) and sync again"
    )
    assert second.error is None and second.commit == empty.head()
    assert second.index is not None and second.index.added == ("domain/retry.md",)


def test_an_index_run_on_an_empty_remote_says_it_is_empty(tmp_path: Path) -> None:
    """``briefd index`` on a git URL source created empty blamed the setup ('found none;
    check the source path, index.include…'); it says what ``briefd sync`` says."""
    empty = Remote(tmp_path)
    with Briefd(git_settings(tmp_path, empty.url), embedder=None) as api:
        with pytest.raises(SourceError) as refused:
            api.index()
        empty.push({"domain/retry.md": RETRY})
        assert api.sync().error is None and api.document("domain/retry.md") is not None
    assert str(refused.value) == (
        f"the repository {empty.url} is empty (no branch, no commit yet); push the knowledge "
        "to it (domain/, conventions/, projects/<name>/) and sync again"
    )


def test_a_remote_whose_head_names_a_missing_branch_says_which_to_follow(
    tmp_path: Path,
) -> None:
    """A bare repository made with `git init --bare` (HEAD: master) and then pushed `main`:
    every sync said "couldn't find remote ref refs/heads/master; the branch does not exist on
    the remote; check `sync.branch`", and a sync.branch the remote lacks (a clone with
    --branch) said to "check the repository URL"."""
    remote = Remote(tmp_path)
    remote.push({"domain/retry.md": RETRY})
    git(remote.bare, "symbolic-ref", "HEAD", "refs/heads/master")
    with Briefd(git_settings(tmp_path, remote.url), embedder=None) as api:
        report = api.sync()
    assert report.error == (
        f"{remote.url} names master as its default branch (its HEAD) but has no such branch; "
        "its branches are main: set sync.branch: main (or BRIEFD_SYNC__BRANCH=main), or point "
        "the remote's HEAD at it (git symbolic-ref HEAD refs/heads/main in the bare repository)"
    )
    other = tmp_path / "other"
    other.mkdir()
    with Briefd(git_settings(other, remote.url, **{"sync.branch": "trunk"}), embedder=None) as api:
        report = api.sync()
    assert report.error == (
        f"the branch trunk (sync.branch) is not on {remote.url}, whose branches are main; set "
        "sync.branch to the one to follow"
    )
    with Briefd(git_settings(other, remote.url, **{"sync.branch": "main"}), embedder=None) as api:
        report = api.sync()
    assert report.error is None and report.commit == remote.head()


def test_a_remote_written_without_its_scheme_is_told_to_write_it_as_a_url(
    tmp_path: Path,
) -> None:
    """``sync.remote: github.com/acme/kb.git`` (an address as a browser's bar shows it) is a
    folder to git: the sync said only "repository 'github.com/acme/kb.git' does not exist;
    check the repository URL in `source`", not what is wrong with it."""
    config = tmp_path / "briefd.yaml"
    config.write_text(
        f"db: {tmp_path / 'data' / 'index.db'}\nembeddings:\n  enabled: false\n"
        "sync:\n  remote: github.com/acme/kb.git\n"
    )
    with Briefd(load_settings(config, env={}), embedder=None) as api:
        report = api.sync()
    assert report.error is not None and report.error.endswith(
        "check the repository URL in `source`: github.com/acme/kb.git has no scheme, so git "
        "read it as a folder; write it as a URL (https://github.com/acme/kb.git, or "
        "git@github.com:acme/kb.git for SSH)"
    )
