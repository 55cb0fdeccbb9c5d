"""K3, S1: a token in the ``source`` URL (``https://user:token@host/repo.git``) reaches the
remote, never a command line: git used to get the URL as an argument (``git clone URL``, and
``git-remote-http origin URL`` at every fetch), where every user of the machine reads it
(``ps``, ``/proc/*/cmdline``), and kept it in the clone's ``.git/config``. Against a real
git smart-HTTP remote that wants the credentials."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.proposals import ProposalRequest
from briefd.retrieval.search import SearchRequest
from briefd.sources import git as git_module
from tests.processes import running
from tests.sync.conftest import git_settings
from tests.sync.gitrepo import RETRY, Remote, git
from tests.sync.httpgit import AuthenticatedGit

TOKEN = "ghp-never-on-a-command-line-5f1c"


class CommandLines:
    """Every command line holding ``marker`` while the block runs (sampled every 20 ms)."""

    def __init__(self, marker: str) -> None:
        self.marker, self.seen = marker, set[str]()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.wait(0.02):
            self.seen.update(running(self.marker))

    def __enter__(self) -> CommandLines:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


@pytest.fixture
def server(remote: Remote) -> Iterator[AuthenticatedGit]:
    with AuthenticatedGit(remote.bare.parent, "alice", TOKEN, delay=0.3) as made:
        yield made


def sync(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "BRIEFD_SOURCE": source,
        "BRIEFD_DB": str(tmp_path / "data" / "index.db"),
        "BRIEFD_EMBEDDINGS__ENABLED": "false",
    }
    if "PYTHONPATH" in os.environ:  # the briefd under test, not the one installed
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return subprocess.run(
        [sys.executable, "-m", "briefd", "sync"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_a_token_in_the_url_is_never_on_a_command_line_nor_in_the_clone(
    tmp_path: Path, remote: Remote, server: AuthenticatedGit
) -> None:
    source = server.url(remote.bare.name, f"alice:{TOKEN}")
    with CommandLines(TOKEN) as secret, CommandLines(f"127.0.0.1:{server.port}") as git_runs:
        first = sync(tmp_path, source)  # a clone
        remote.push({"domain/fx.md": "# FX\n\n## Rates\nRates refresh hourly.\n"})
        second = sync(tmp_path, source)  # a fetch
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    assert any("git-remote-http" in line for line in git_runs.seen)  # git was watched
    assert secret.seen == set()
    clone = tmp_path / "data" / "repo"
    assert (clone / "domain" / "fx.md").is_file()
    assert TOKEN not in (clone / ".git" / "config").read_text()
    assert git(clone, "remote", "get-url", "origin") == server.url(remote.bare.name)
    with Briefd(git_settings(tmp_path, source), embedder=None) as api:
        hits = api.search(SearchRequest("rates refresh hourly", mode="bm25")).hits
    assert [h.doc_path for h in hits][:1] == ["domain/fx.md"]


def test_a_proposal_is_pushed_with_the_token_kept_off_command_lines(
    tmp_path: Path, remote: Remote, server: AuthenticatedGit
) -> None:
    source = server.url(remote.bare.name, f"alice:{TOKEN}")
    assert sync(tmp_path, source).returncode == 0
    with CommandLines(TOKEN) as secret, Briefd(git_settings(tmp_path, source)) as api:
        made = api.propose_update(
            ProposalRequest("domain/retry.md", "Retry four times", RETRY.replace("three", "four"))
        )
    assert made.status == "pushed"
    assert "four" in git(remote.bare, "show", f"{made.branch}:domain/retry.md")
    assert secret.seen == set()


def test_a_clone_made_with_the_token_in_its_origin_loses_it_at_the_next_sync(
    tmp_path: Path, remote: Remote, server: AuthenticatedGit
) -> None:
    """Clones made before kept ``origin`` = the URL with the token, in .git/config."""
    source = server.url(remote.bare.name, f"alice:{TOKEN}")
    assert sync(tmp_path, source).returncode == 0
    clone = tmp_path / "data" / "repo"
    subprocess.run(["git", "-C", str(clone), "config", "--unset-all", "credential.helper"])
    git(clone, "remote", "set-url", "origin", source)  # as an older briefd left it
    assert sync(tmp_path, source).returncode == 0
    assert TOKEN not in (clone / ".git" / "config").read_text()


def test_a_wrong_token_is_refused_without_a_prompt(
    tmp_path: Path, remote: Remote, server: AuthenticatedGit
) -> None:
    failed = sync(tmp_path, server.url(remote.bare.name, "alice:not-the-token"))
    assert failed.returncode == 1
    assert "the remote refused the credentials" in failed.stderr + failed.stdout
    assert "not-the-token" not in failed.stderr + failed.stdout
    assert server.refused >= 1


def test_a_token_taken_out_of_the_url_takes_briefds_helper_with_it(
    tmp_path: Path, remote: Remote, server: AuthenticatedGit
) -> None:
    """Once `source` has no token (credentials from the user's own helper, or an SSH key),
    briefd's helper, which would answer with none and hide the user's, leaves the clone."""
    assert sync(tmp_path, server.url(remote.bare.name, f"alice:{TOKEN}")).returncode == 0
    clone = tmp_path / "data" / "repo"
    helpers = ["git", "-C", str(clone), "config", "--local", "--get-all", "credential.helper"]
    kept = subprocess.run(helpers, capture_output=True, text=True).stdout.splitlines()
    assert kept == ["", git_module.CREDENTIAL_HELPER]
    plain = sync(tmp_path, server.url(remote.bare.name))  # no helper here: refused
    assert plain.returncode == 1 and "the remote refused the credentials" in plain.stderr
    assert subprocess.run(helpers, capture_output=True, text=True).stdout == ""


def test_a_token_written_as_the_user_name_works_and_stays_off_command_lines(
    tmp_path: Path, remote: Remote
) -> None:
    """``https://TOKEN@github.com/org/kb.git`` (a GitHub token as the user name, no password)
    is a common way to write a token into a URL: it synced, but the token was on the command
    lines of git and git-remote-http, and in the clone's origin."""
    token = "ghp_" + "Zx81" * 9  # a token's shape: 40 characters
    with AuthenticatedGit(remote.bare.parent, token, "", delay=0.3) as server:
        source = server.url(remote.bare.name, token)
        with CommandLines(token) as secret:
            first = sync(tmp_path, source)
            remote.push({"domain/fx.md": "# FX\n\n## Rates\nRates refresh hourly.\n"})
            second = sync(tmp_path, source)
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    assert secret.seen == set()
    clone = tmp_path / "data" / "repo"
    assert (clone / "domain" / "fx.md").is_file()
    assert token not in (clone / ".git" / "config").read_text()


def test_only_a_user_name_with_a_tokens_shape_leaves_the_url() -> None:
    """A person's name stays (their own credential helper has its password); a token's shape
    (32 or more letters, digits, ``_`` or ``-``, with both a letter and a digit) leaves."""
    token = "github_pat_11ABCDEFG0123456789_abcdefghij"
    for url, plain, env in (
        ("https://alice@git.example.com/kb.git", "https://alice@git.example.com/kb.git", {}),
        (
            "https://jane.doe.contractor.example.org@h/kb",
            "https://jane.doe.contractor.example.org@h/kb",
            {},
        ),
        ("ssh://" + token + "@h/kb", "ssh://" + token + "@h/kb", {}),
        (
            f"https://{token}@github.com/o/kb.git",
            "https://github.com/o/kb.git",
            (token, "", "https://github.com"),
        ),
        (f"https://x:{token}@h:8443/kb", "https://h:8443/kb", ("x", token, "https://h:8443")),
    ):
        made = git_module.remote(url)
        assert made.url == plain, url
        assert tuple(made.env.values()) == tuple(env), url


def test_the_token_never_follows_a_redirect_to_another_host(
    tmp_path: Path, remote: Remote, server: AuthenticatedGit
) -> None:
    """git follows the first redirect of a fetch and asks its credential helpers again for the
    new host; briefd's helper answered every host, so the token taken out of the URL went
    wherever the remote (or whoever answered for it) redirected: git, given the token in the
    URL itself, sends it to no other host. The helper now answers only for the URL's own."""

    class Redirect(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(301)
            self.send_header("Location", f"http://127.0.0.1:{server.port}{self.path}")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    redirector = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    threading.Thread(target=redirector.serve_forever, daemon=True).start()
    try:
        port = redirector.server_address[1]
        moved = sync(tmp_path, f"http://alice:{TOKEN}@127.0.0.1:{port}/{remote.bare.name}")
    finally:
        redirector.shutdown()
        redirector.server_close()
    assert moved.returncode == 1
    assert "the remote refused the credentials" in moved.stderr, moved.stderr
    assert server.refused >= 1 and not (tmp_path / "data" / "repo" / "domain").exists()


def test_a_remote_that_breaks_off_mid_fetch_is_said_so_and_the_next_sync_fetches(
    tmp_path: Path, remote: Remote
) -> None:
    """A fetch whose answer stopped mid-pack (the remote restarted, a proxy timed out) said
    'git fetch failed: error: RPC failed; curl 18 transfer closed with … bytes remaining to
    read' and nothing more: whether the clone was damaged, or what to do, went unsaid."""
    with AuthenticatedGit(remote.bare.parent, "alice", TOKEN) as server:
        url = server.url(remote.bare.name, f"alice:{TOKEN}")
        with Briefd(git_settings(tmp_path, url), embedder=None) as api:
            assert api.sync().error is None
            commit = remote.push({"domain/fx.md": "# FX\n\n## Rates\nRates refresh hourly.\n"})
            server.cut_fetch = True
            failed = api.sync()
            assert failed.error is not None and failed.error.startswith("git fetch failed: ")
            assert failed.error.endswith(
                "; the connection to the remote broke off mid-transfer (the remote, or a proxy "
                "in between, went away); the clone and the index are as they were, and the next "
                "sync fetches again"
            ), failed.error
            server.cut_fetch = False
            again = api.sync()
            assert (again.error, again.commit) == (None, commit)
            hits = api.search(SearchRequest("rates refresh hourly", mode="bm25")).hits
            assert [h.doc_path for h in hits] == ["domain/fx.md"]
