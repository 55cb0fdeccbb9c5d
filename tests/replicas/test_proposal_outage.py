"""A proposal pushed while PostgreSQL goes away (S1, T1): the branch is on the remote, so the
caller is told so, and never that the shared state was merely unreachable."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from briefd.errors import StateUnavailableError
from briefd.proposals import ProposalRequest
from tests.postgres import Postgres
from tests.replicas.conftest import synced_pair
from tests.sync.gitrepo import git

pytestmark = pytest.mark.replicas


def test_a_push_the_shared_state_outlived_names_the_pushed_branch(
    tmp_path: Path, postgres: Postgres
) -> None:
    """The lock's transaction died with the server while git pushed; the proposal was pushed
    and unrecorded, and the caller heard 'the shared state … is unreachable', as when nothing
    happens: proposing again pushed a second branch."""
    holding, go_on = tmp_path / "holding", tmp_path / "go-on"
    with synced_pair(tmp_path, postgres, **{"state.timeout_seconds": 1.0}) as (a, _, remote):
        hook = remote.bare / "hooks" / "pre-receive"
        hook.write_text(
            f"#!/bin/sh\ntouch {holding}\nwhile [ ! -e {go_on} ]; do sleep 0.05; done\ncat >/dev/null\n"
        )
        hook.chmod(0o755)

        def stop_postgres_mid_push() -> None:
            while not holding.exists():
                time.sleep(0.05)
            postgres.stop()
            go_on.touch()

        stopper = threading.Thread(target=stop_postgres_mid_push)
        stopper.start()
        new = (remote.work / "domain" / "refunds.md").read_text() + "\nRefunds close in 90 days.\n"
        try:
            with pytest.raises(StateUnavailableError) as caught:
                a.propose_update(ProposalRequest("domain/refunds.md", "90 days", new))
        finally:
            stopper.join()
            postgres.start()
    [branch] = git(remote.bare, "branch", "--list", "briefd/proposal-*").split()
    said = str(caught.value)
    assert said.startswith(f"{branch} is pushed, but the shared state did not record the proposal")
    assert said.endswith("Do not propose it again: the change is on the remote")
