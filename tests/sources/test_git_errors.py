"""What a failed git command tells the user: the hint follows git's message, not digits that
happen to appear in a URL."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from briefd.errors import ProposalError, SourceError
from briefd.settings import Settings, load_settings
from briefd.sources.code import configured
from briefd.sources.git import describe_failure, run
from briefd.sources.knowledge import resolve
from tests.processes import running

FETCH = ["-c", "gc.auto=0", "fetch", "origin"]


def test_a_refused_connection_on_a_port_containing_403_is_unreachable_not_credentials() -> None:
    stderr = (
        "fatal: unable to access 'http://127.0.0.1:40359/kb.git/': Failed to connect to "
        "127.0.0.1 port 40359 after 0 ms: Couldn't connect to server\n"
    )
    message = describe_failure(FETCH, stderr)
    assert message.startswith("git fetch failed: fatal: unable to access")
    assert "unreachable" in message
    assert "credentials" not in message


def test_an_http_403_points_at_the_credentials() -> None:
    stderr = "fatal: unable to access 'https://git.example/kb.git/': The requested URL returned error: 403\n"
    message = describe_failure(FETCH, stderr)
    assert "refused the credentials" in message


def test_a_rejected_push_says_the_remote_s_reason(tmp_path: Path) -> None:
    """Real git: a branch ``briefd`` on the remote blocks ``briefd/proposal-…``; the message
    keeps the remote's reason, not "failed to push some refs"."""
    bare, work = tmp_path / "remote.git", tmp_path / "work"
    for args, cwd in (
        (["init", "--quiet", "--bare", "-b", "main", str(bare)], tmp_path),
        (["clone", "--quiet", str(bare), str(work)], tmp_path),
        (["-c", "user.name=t", "-c", "user.email=t@e", "commit", "--quiet", "--allow-empty",
          "-m", "x"], work),
        (["push", "--quiet", "origin", "HEAD:refs/heads/briefd"], work),
    ):  # fmt: skip
        subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)
    with pytest.raises(SourceError) as caught:
        run(["push", "--quiet", "origin", "HEAD:refs/heads/briefd/proposal-1"], work, 30)
    message = str(caught.value)
    assert message.startswith("git push failed: ")
    assert "refs/heads/briefd" in message and "some refs" not in message


def test_a_git_command_over_its_time_names_the_setting_to_raise(tmp_path: Path) -> None:
    slow = ["-c", "alias.slow=!sleep 3", "slow"]
    with pytest.raises(
        ProposalError, match=r"took longer than 0.3s; .* raise proposals.git_timeout$"
    ):
        run(slow, tmp_path, 0.3, ProposalError)
    with pytest.raises(SourceError, match=r"raise sync.git_timeout$"):
        run(slow, tmp_path, 0.3)
    assert Settings().proposals.git_timeout == 30  # an agent waits for a proposal: not 120 s


def test_a_git_command_over_its_time_leaves_no_helper_running() -> None:
    """A remote that accepts the connection and never answers: git's ``git-remote-http``
    outlived the git that the timeout ended (one more on every sync of a hanging remote)."""
    with socket.create_server(("127.0.0.1", 0)) as hanging:
        url = f"http://127.0.0.1:{hanging.getsockname()[1]}/never-answers.git"
        with pytest.raises(SourceError, match=r"^git ls-remote took longer than 0.5s; "):
            run(["ls-remote", url], None, 0.5)
        deadline = time.monotonic() + 2  # SIGKILL is delivered, not yet acted on
        while running(url) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert running(url) == []


def test_a_git_command_the_shutdown_ends_says_so_not_that_git_failed() -> None:
    """A server stopping ends its sync's git (git.refuse_new): the sync was recorded as
    "git ls-remote failed: no message" until the next one, as if the remote were broken."""
    from briefd.sources import git

    with socket.create_server(("127.0.0.1", 0)) as hanging:
        url = f"http://127.0.0.1:{hanging.getsockname()[1]}/never-answers.git"
        failed: list[BaseException] = []

        def sync() -> None:
            try:
                run(["ls-remote", url], None, 30)
            except SourceError as exc:
                failed.append(exc)

        worker = threading.Thread(target=sync)
        worker.start()
        try:
            deadline = time.monotonic() + 10
            while not running(url) and time.monotonic() < deadline:
                time.sleep(0.02)
            git.refuse_new()
            worker.join(10)
            with pytest.raises(SourceError, match="not run: briefd was stopping"):
                run(["ls-remote", url], None, 30)
        finally:
            git.refuse_new(False)
    assert [str(e) for e in failed] == ["git ls-remote ended: briefd was stopping"]


def test_a_checkout_another_user_owns_is_refused_with_the_fix_not_read_as_a_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git reads no repository another user owns (a host checkout bind-mounted into the
    container, uid 10001). briefd took the knowledge checkout for a plain folder (documents
    dated by the index run, no commit) and said a code repository was "not a git checkout"."""
    work = tmp_path / "kb"
    (work / "domain").mkdir(parents=True)
    (work / "domain" / "glossary.md").write_text("# Glossary\n\nA capture moves money.\n")
    for args in (
        ["init", "--quiet", "-b", "main"],
        ["add", "-A"],
        ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "--quiet", "-m", "x"],
    ):
        subprocess.run(["git", *args], cwd=work, check=True, capture_output=True)
    monkeypatch.setenv("GIT_TEST_ASSUME_DIFFERENT_OWNER", "1")  # git's switch for this case
    settings = load_settings(
        env={},
        overrides={"source": str(work), "db": str(tmp_path / "i.db"), "code.repos": [str(work)]},
    )
    fix = "trust that path with `git config --global --add safe.directory PATH`"
    with pytest.raises(SourceError) as knowledge:
        resolve(settings)
    assert str(knowledge.value).startswith(
        f"git rev-parse failed: fatal: detected dubious ownership in repository at '{work}'; "
    )
    assert fix in str(knowledge.value)
    with pytest.raises(SourceError) as code:
        configured(settings)[0].prepare(fetch=False)
    assert str(code.value).startswith(f"code repo 'kb' ({work}): git rev-parse failed: ")
    assert fix in str(code.value) and "not a git checkout" not in str(code.value)
