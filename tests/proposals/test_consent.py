"""Failure 2 of issue 16: pushes without consent. Proposals are off until
``proposals.enabled``; a user's own checkout (what ``make run`` serves) keeps its proposals as
local branches unless ``proposals.push`` names its remote; the tool says ``openWorldHint`` when
it pushes or calls a forge; the example configuration never pushes."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from mcp import Client
from mcp_types import CallToolResult

from briefd.api import Briefd
from briefd.errors import ProposalConflictError, ProposalError
from briefd.proposals import ProposalRequest
from briefd.service import create_app
from briefd.settings import Settings, load_settings, with_overrides
from tests.conftest import REPO
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving
from tests.service.test_mcp import run
from tests.sync.conftest import git_settings
from tests.sync.gitrepo import RETRY, Remote, git, stage

NEW_RETRY = RETRY.replace("three times", "four times").lstrip("\n")
ARGS = {"doc_path": "domain/retry.md", "change_description": "four", "new_content": NEW_RETRY}


def checkout_state(work: Path) -> tuple[str, str, bytes]:
    return (
        git(work, "rev-parse", "HEAD"),
        git(work, "status", "--porcelain"),
        (work / ".git" / "index").read_bytes(),
    )


def remote_branches(remote: Remote) -> str:
    return git(remote.bare, "branch", "--list", "briefd/*")


def test_a_checkout_served_with_default_settings_never_pushes(
    tmp_path: Path, remote: Remote
) -> None:
    """As `make run` does: the source is a directory inside a clone with an upstream. One MCP
    call used to push a branch into the repository the clone came from."""
    settings = load_settings(
        config=None,
        env={},
        overrides={
            "db": str(tmp_path / "index.db"),
            "source": str(remote.work),
            "embeddings.enabled": False,
        },
    )

    async def body(client: Client) -> tuple[set[str], CallToolResult]:
        names = {t.name for t in (await client.list_tools()).tools}
        return names, await client.call_tool("propose_update", ARGS)

    with Briefd(settings, embedder=None) as api:
        api.index()
        with serving(create_app(api, service_config())) as base:
            names, result = run(base + "/mcp", "legacy", body)
            auth = {"Authorization": f"Bearer {TOKEN}"}
            rest = httpx.post(base + "/api/proposals", json=ARGS, headers=auth)
            # an incomplete body is told proposals are off, not which fields to add first
            empty = httpx.post(base + "/api/proposals", json={}, headers=auth)
            unsigned = httpx.post(base + "/api/proposals", json={})
    assert "propose_update" not in names and result.is_error
    assert rest.status_code == 403
    assert (empty.status_code, empty.json()) == (403, rest.json())
    assert unsigned.status_code == 401
    assert rest.json() == {
        "error": "proposals_off",
        "detail": "proposals are off on this server: an agent's change would become a branch "
        "in the team's repository, so briefd only does that when `proposals.enabled: true` is "
        "set in briefd.yaml",
    }
    assert remote_branches(remote) == ""
    assert git(remote.work, "branch", "--list", "briefd/*") == ""


def test_enabled_on_a_checkout_the_branch_stays_local(tmp_path: Path, remote: Remote) -> None:
    from briefd.service.tools import offered

    before = checkout_state(remote.work)
    settings = git_settings(tmp_path, str(remote.work))
    assert [h.open_world_hint for n, h in offered(settings) if n == "propose_update"] == [False]
    with Briefd(settings, embedder=None) as api:
        api.index()
        made = api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    assert made.status == "local" and made.base_branch == "main"
    assert checkout_state(remote.work) == before
    assert remote_branches(remote) == ""
    assert git(remote.work, "rev-list", f"main..{made.branch}").splitlines() == [made.commit_hash]
    assert git(remote.work, "show", f"{made.branch}:domain/retry.md") + "\n" == NEW_RETRY


def test_a_local_proposal_merged_in_the_checkout_is_merged_at_the_next_sync(
    tmp_path: Path, remote: Remote
) -> None:
    """T1: a local proposal (a branch of the user's checkout) merged there stayed "local" in
    `briefd proposals`, GET /api/proposals and the dashboard for good. A sync now finds its
    commit on the base branch and says merged; one not merged stays local."""
    settings = git_settings(tmp_path, str(remote.work))
    with Briefd(settings, embedder=None) as api:
        api.index()
        made = api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
        other = api.propose_update(ProposalRequest("domain/glossary.md", "why", "# G\n"))
        git(remote.work, "merge", "--quiet", "--no-edit", made.branch)

        report = api.sync()
        stored = {p.id: p.status for p in api.proposals()}
        again = api.sync()

    assert report.proposals_changed == (f"{made.id}: local → merged",)
    assert stored == {made.id: "merged", other.id: "local"}
    assert again.proposals_changed == ()


def test_a_checkout_serving_another_branch_is_told_what_the_proposal_would_carry(
    tmp_path: Path, remote: Remote
) -> None:
    git(remote.work, "checkout", "--quiet", "-b", "wip")
    stage(remote.work, {"domain/retry.md": RETRY.replace("three", "five")})
    git(remote.work, "commit", "--quiet", "-m", "Five retries, not merged")
    settings = git_settings(tmp_path, str(remote.work), **{"sync.branch": "main"})
    with Briefd(settings, embedder=None) as api:
        api.index()
        with pytest.raises(ProposalConflictError) as refused:
            api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
        made = api.propose_update(ProposalRequest("domain/glossary.md", "x", "# Glossary\n"))
    head = git(remote.work, "rev-parse", "--short", "HEAD")
    assert str(refused.value).startswith(
        f"domain/retry.md differs on main (last changed {git(remote.work, 'rev-parse', '--short', 'main')} "
        f"by Teammate: first knowledge) from the commit this server serves ({head}, which main "
        "does not contain); new_content would carry that difference into main: push or merge"
    )
    assert made.status == "local" and made.base_branch == "main"


@pytest.mark.parametrize("push", [False, True])
def test_a_pull_the_index_has_not_read_is_a_conflict_until_it_has(
    tmp_path: Path, remote: Remote, push: bool
) -> None:
    """T1: the check compared the base branch with the checkout's HEAD, so after a ``git pull``
    (HEAD moved, the server still serving the text it indexed before) a proposal written on
    the served text silently undid the teammate's change, pushed or local. It compares with
    the commit the served index was read at; indexed again, the proposal goes through."""
    settings = git_settings(tmp_path, str(remote.work), **{"proposals.push": push})
    with Briefd(settings, embedder=None) as api:
        api.index()
        served = api.document("domain/retry.md").body
        pulled = remote.push({"domain/retry.md": RETRY.replace("three", "two")}, "Two retries")
        assert git(remote.work, "rev-parse", "HEAD") == pulled  # what a git pull leaves
        with pytest.raises(ProposalConflictError, match=r"retry\.md changed on main since") as no:
            api.propose_update(ProposalRequest("domain/retry.md", "x", served + "\nMore.\n"))
        assert "by Teammate: Two retries" in str(no.value) and "briefd index" in str(no.value)
        assert api.proposals() == [] and remote_branches(remote) == ""
        assert git(remote.work, "branch", "--list", "briefd/*") == ""

        api.index()
        current = api.document("domain/retry.md").body
        made = api.propose_update(ProposalRequest("domain/retry.md", "x", current + "\nMore.\n"))
    repo = remote.bare if push else remote.work
    assert "two times" in git(repo, "show", f"{made.branch}:domain/retry.md")


def test_a_base_branch_the_checkout_lacks_is_refused_not_replaced_by_head(
    tmp_path: Path, remote: Remote
) -> None:
    """T1: a mistyped ``sync.branch`` on a checkout was silently replaced by HEAD, and the
    proposal recorded a base branch it never started from; one the checkout has only as the
    remote's fetched branch is that branch."""
    refused = proposal_refused(git_settings(tmp_path, str(remote.work), **{"sync.branch": "mian"}))
    assert str(refused) == (
        f"the base branch 'mian' (sync.branch) is not a branch of the checkout {remote.work} "
        "(its branches: main); check sync.branch, or leave it unset to use the branch checked out"
    )
    assert git(remote.work, "branch", "--list", "briefd/*") == ""

    git(remote.work, "checkout", "--quiet", "-b", "wip")
    git(remote.work, "branch", "--quiet", "-D", "main")  # main only as origin/main now
    settings = git_settings(tmp_path, str(remote.work), **{"sync.branch": "main"})
    with Briefd(settings, embedder=None) as api:
        api.index()
        made = api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    assert made.base_branch == "main" and made.base_commit == remote.head()


def test_push_true_or_a_remote_name_pushes_a_checkouts_proposals(
    tmp_path: Path, remote: Remote
) -> None:
    from briefd.service.tools import offered

    backup = tmp_path / "backup.git"
    git(tmp_path, "clone", "--quiet", "--bare", str(remote.bare), str(backup))
    git(remote.work, "remote", "add", "backup", str(backup))
    for push, where in ((True, remote.bare), ("backup", backup)):
        settings = git_settings(tmp_path, str(remote.work), **{"proposals.push": push})
        assert [h.open_world_hint for n, h in offered(settings) if n == "propose_update"] == [True]
        with Briefd(settings, embedder=None) as api:
            api.index()
            made = api.propose_update(ProposalRequest("domain/retry.md", f"{push}", NEW_RETRY))
        assert made.status == "pushed"
        assert git(where, "rev-list", f"main..{made.branch}").splitlines() == [made.commit_hash]
    assert len(remote_branches(remote).splitlines()) == 1


def test_a_named_remote_the_checkout_lacks_is_refused(tmp_path: Path, remote: Remote) -> None:
    settings = git_settings(tmp_path, str(remote.work), **{"proposals.push": "upstream"})
    with Briefd(settings, embedder=None) as api, pytest.raises(ProposalError) as caught:
        api.index()
        api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    assert str(caught.value) == (
        "proposals.push sends proposals to the remote 'upstream', which the knowledge checkout "
        f"{remote.work} does not have; add it with `git remote add upstream URL`, or name "
        "another remote in proposals.push"
    )


def test_a_git_url_source_pushes_to_that_url_unless_push_is_false(
    tmp_path: Path, remote: Remote
) -> None:
    from briefd.proposals.policy import reaches_out

    settings = git_settings(tmp_path, remote.url)
    assert reaches_out(settings)
    local = with_overrides(settings, {"proposals.push": False})
    assert not reaches_out(local)
    with Briefd(local, embedder=None) as api:
        api.sync()
        made = api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    assert made.status == "local" and remote_branches(remote) == ""


def test_a_forge_with_local_proposals_is_refused_before_anything(
    tmp_path: Path, remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    from briefd.proposals.policy import reaches_out

    monkeypatch.setenv("GITHUB_TOKEN", "ghp_test")
    settings = git_settings(
        tmp_path, str(remote.work), **{"forge.type": "github", "forge.repo": "acme/kb"}
    )
    assert reaches_out(settings)  # it would call the forge
    with Briefd(settings, embedder=None) as api, pytest.raises(ProposalError, match="pushed"):
        api.index()
        api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    assert git(remote.work, "branch", "--list", "briefd/*") == ""


def test_proposals_are_off_by_default_and_in_the_example_config(tmp_path: Path) -> None:
    from briefd.errors import ProposalsOffError
    from briefd.proposals.policy import reaches_out
    from briefd.service.tools import offered

    example = load_settings(REPO / "briefd.yaml", env={})
    assert not example.proposals.enabled and not reaches_out(example)
    assert "propose_update" not in dict(offered(example))
    settings = load_settings(config=None, env={}, overrides={"db": str(tmp_path / "x.db")})
    with pytest.raises(ProposalsOffError, match=r"`proposals.enabled: true`"):
        Briefd(settings, embedder=None).propose_update(
            ProposalRequest("domain/a.md", "why", "# A\n")
        )


def test_a_detached_checkout_that_pushes_is_told_which_setting_names_the_branch(
    tmp_path: Path, remote: Remote
) -> None:
    """T1: a checkout with a detached HEAD (a CI job's checkout of a commit) and
    ``proposals.push: true`` answered 502 "git fetch failed: fatal: couldn't find remote ref
    refs/heads/HEAD; the branch does not exist on the remote; check `sync.branch`", a setting
    nobody had set; with it set, the proposal starts from that branch."""
    git(remote.work, "checkout", "--quiet", "--detach")
    head = git(remote.work, "rev-parse", "--short", "HEAD")
    git(remote.work, "remote", "set-head", "origin", "main")
    settings = git_settings(tmp_path, str(remote.work), **{"proposals.push": True})
    refused = proposal_refused(settings)
    assert type(refused) is ProposalError  # a setting to fix (400), not the remote (502)
    assert str(refused) == (
        f"the knowledge checkout {remote.work} has a detached HEAD (at {head}), so a pushed "
        "proposal has no branch of 'origin' to start from; set sync.branch to the branch "
        "proposals start from (sync.branch: main, origin's default branch), or check out a "
        "branch; nothing was proposed"
    )
    assert remote_branches(remote) == ""

    named = with_overrides(settings, {"sync.branch": "main"})
    with Briefd(named, embedder=None) as api:
        api.index()
        made = api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    assert made.status == "pushed" and made.base_branch == "main"
    assert git(remote.bare, "rev-list", f"main..{made.branch}").splitlines() == [made.commit_hash]


def test_a_checkouts_remote_that_is_gone_is_named_not_the_source(
    tmp_path: Path, remote: Remote
) -> None:
    """T1: a checkout pushing its proposals (``proposals.push: true``) to a remote that moved
    was told to "check the repository URL in `source`", whose value is the checkout's folder:
    the URL that failed is its remote's."""
    git(remote.work, "remote", "set-url", "origin", str(tmp_path / "moved.git"))
    refused = proposal_refused(git_settings(tmp_path, str(remote.work), **{"proposals.push": True}))
    assert str(refused) == (
        f"git fetch failed: fatal: '{tmp_path / 'moved.git'}' does not appear to be a git "
        "repository; check the URL of the remote 'origin' of the knowledge checkout "
        f"{remote.work} (git remote get-url origin), or set proposals.push to another remote, "
        "or false to keep proposals as local branches"
        "; nothing was proposed and nothing kept (no branch, no record): send the same proposal again once that is fixed"
    )


def test_a_pre_push_hook_that_refuses_is_named_with_what_it_said(
    tmp_path: Path, remote: Remote
) -> None:
    """T1: a checkout whose own pre-push hook (husky, pre-commit) refused briefd's push
    answered 502 proposal_remote "git push failed: error: failed to push some refs to …":
    the hook's reason was dropped and the remote blamed."""
    hook = remote.work / ".git" / "hooks" / "pre-push"
    hook.write_text(
        "#!/bin/sh\necho 'running the test suite'\n"
        "echo 'husky - pre-push script failed (code 1)' >&2\nexit 1\n",
        encoding="utf-8",
    )
    hook.chmod(0o755)
    refused = proposal_refused(git_settings(tmp_path, str(remote.work), **{"proposals.push": True}))
    message = str(refused)
    branch = re.search(r"push of (briefd/proposal-[0-9a-f]{8})", message)
    assert type(refused) is ProposalError and branch is not None  # 400, not the remote's 502
    assert message == (
        "git push failed: a pre-push hook refused the push: husky - pre-push script failed "
        f"(code 1); the hook is the knowledge repository's own ({remote.work}), run on "
        f"briefd's push of {branch.group(1)} (one Markdown file changed): make it pass such a "
        "push, or set proposals.push: false to keep proposals as local branches; nothing was "
        "proposed"
    )
    assert remote_branches(remote) == ""


def test_a_local_proposal_of_the_same_text_counts_while_its_branch_is_there(
    tmp_path: Path, remote: Remote
) -> None:
    """T1: proposing the same text twice made two local branches of one change; the second
    is refused while the first one's branch is there, and allowed once it is deleted."""
    settings = git_settings(tmp_path, str(remote.work))
    with Briefd(settings, embedder=None) as api:
        api.index()
        first = api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
        with pytest.raises(ProposalError, match=f"what proposal {first.id} \\(branch"):
            api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
        git(remote.work, "branch", "--quiet", "-D", first.branch)
        again = api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    assert again.status == "local" and again.id != first.id
    assert git(remote.work, "branch", "--list", "briefd/*").split() == [again.branch]


def test_a_pushed_proposal_of_the_same_text_counts_while_its_branch_is_on_the_remote(
    tmp_path: Path, remote: Remote
) -> None:
    """T1, forge.type none: the same text proposed again (an agent that retried) pushed a
    second branch of one change, each time, and closed the first as superseded, so reviewers
    found one more branch per retry. The second is refused while the first waits on the
    remote, and allowed once a reviewer deleted it."""
    with Briefd(git_settings(tmp_path, remote.url), embedder=None) as api:
        api.index()
        first = api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
        with pytest.raises(ProposalError, match=f"what proposal {first.id} \\(branch"):
            api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
        assert remote_branches(remote).split() == [first.branch]
        assert [(p.id, p.status) for p in api.proposals()] == [(first.id, "pushed")]
        git(remote.bare, "branch", "--quiet", "-D", first.branch)  # a reviewer's "no"
        again = api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    assert again.status == "pushed" and again.id != first.id
    assert remote_branches(remote).split() == [again.branch]


def test_a_checkouts_upstream_branch_the_remote_lost_is_named(
    tmp_path: Path, remote: Remote
) -> None:
    """T1: a pushing checkout whose upstream branch was deleted on the remote was told to
    check a ``sync.branch`` it had not set; the remote and the branch are named."""
    git(remote.work, "checkout", "--quiet", "-b", "docs")
    git(remote.work, "push", "--quiet", "--set-upstream", "origin", "docs")
    git(remote.bare, "branch", "--quiet", "-D", "docs")
    refused = proposal_refused(git_settings(tmp_path, str(remote.work), **{"proposals.push": True}))
    assert str(refused) == (
        "git fetch failed: fatal: couldn't find remote ref refs/heads/docs; the remote "
        "'origin' has no branch 'docs' (the checkout's upstream branch, or sync.branch): set "
        "sync.branch to the branch of 'origin' proposals start from"
        "; nothing was proposed and nothing kept (no branch, no record): send the same proposal again once that is fixed"
    )


def proposal_refused(settings: Settings) -> ProposalError:
    """The error proposing the test's change to retry.md in a fresh index of ``settings``
    raises; nothing is recorded as proposed."""
    with Briefd(settings, embedder=None) as api:
        api.index()
        with pytest.raises(ProposalError) as refused:
            api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
        assert api.proposals() == []
    return refused.value
