"""O1, safe by default: what a project's own ``briefd.yaml`` (a cloned repository's) may have
briefd read outside the project: no system folder as its ``source``, and no history of a git
repository of the user's in ``code.repos`` (a hidden one, the home folder), until the user's
word names it. Real git repositories, the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli import briefd
from tests.team.coderepo import Repo

GOVERNS_ALL = "---\nrefs: ['**']\n---\n# Everything\n\nGoverns all the code.\n"
SECRET = "Add given password for bank.example to store"


def test_a_project_file_cannot_have_drift_read_a_hidden_repository_of_the_users(
    tmp_path: Path,
) -> None:
    """``code.repos: [~/.password-store]`` (a git repository) beside a document whose ``refs``
    are ``**`` had `briefd drift`, the bundles and the MCP tools hand every commit there to the
    agent: "Add given password for bank.example to store [bank.example.gpg]". The repository
    holding the project (``..`` from ``docs/``) is the project's own and is read; the user's
    word reads the other."""
    home = tmp_path / "home"
    store = Repo(home / ".password-store")
    store.commit({"old.gpg": "x"}, "first", "2026-01-01T00:00:00+00:00")
    app = Repo(home / "src" / "app")
    app.commit({"docs/domain/all.md": GOVERNS_ALL}, "docs", "2026-02-01T00:00:00+00:00")
    store.commit({"bank.example.gpg": "y"}, SECRET, "2026-03-01T00:00:00+00:00")
    app.commit({"src/pay.py": "pay = 1\n"}, "Pay by card", "2026-03-02T00:00:00+00:00")
    docs = app.path / "docs"
    (docs / "briefd.yaml").write_text('source: .\ncode:\n  repos: ["..", "~/.password-store"]\n')
    env = {"HOME": str(home)}
    assert briefd("index", cwd=docs, env=env).returncode == 0
    drift = briefd("drift", "--json", cwd=docs, env=env)
    assert drift.returncode == 0, drift.stderr
    assert "Pay by card" in drift.stdout  # the project's own repository, read
    assert SECRET not in drift.stdout and "bank.example" not in drift.stdout
    errors = {repo["name"]: repo["error"] for repo in json.loads(drift.stdout)["repos"]}
    assert errors == {
        "app": None,
        ".password-store": (
            "code.repos: ~/.password-store (in briefd.yaml) is in the hidden folder "
            f".password-store, outside that project's folder ({docs}): a project's settings "
            "file may not have briefd read its history, or a repository you cloned could have "
            "briefd hand the commits of yours (subjects, authors, paths) to your agents in "
            "drift reports; to read it, list it in BRIEFD_CODE__REPOS (comma-separated, with "
            "the others) in your environment, or name that settings file yourself (`briefd "
            "--config briefd.yaml …`, or $BRIEFD_CONFIG)"
        ),
    }
    trusted = {**env, "BRIEFD_CODE__REPOS": f"..,{store.path}"}
    assert SECRET in briefd("drift", "--json", cwd=docs, env=trusted).stdout
    told = briefd("drift", "--json", cwd=docs, env=env)  # refused again: what it read is gone
    assert "Pay by card" in told.stdout and SECRET not in told.stdout


def test_a_project_file_cannot_have_briefd_index_a_system_folder(tmp_path: Path) -> None:
    """``source: /etc`` with every file included and mapped to a scope indexed the machine's
    settings (its users, hosts, services); the user's word still reads it."""
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / "briefd.yaml").write_text(
        "source: /etc\nindex:\n  include: ['hostname', 'hosts']\n"
        "scopes:\n  - {folder: '.', scope: every, default: true}\n"
    )
    refused = briefd("index", cwd=clone, env={"HOME": str(tmp_path / "home")})
    assert refused.returncode == 1
    assert refused.stderr.startswith(
        f"error: source: /etc (in briefd.yaml) is in the system folder /etc, outside that "
        f"project's folder ({clone}): a project's settings file may not have briefd read it"
    ), refused.stderr
    assert "set BRIEFD_SOURCE=/etc in your environment" in refused.stderr
    assert not (clone / ".briefd" / "briefd.db").exists()
