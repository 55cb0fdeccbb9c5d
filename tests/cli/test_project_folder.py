"""``briefd`` run from a subfolder of the project's git work tree finds the project as git
finds its repository, and as the prompt hook does (:mod:`briefd.project`)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

from briefd.cli import stamp
from briefd.cli.init import hook_command
from tests.cli.test_cli import briefd
from tests.ports import free_port

REFUNDS = """\
---
title: Refund windows
---
# Refund windows

A partial refund may be issued within 180 days of capture; after that the
acquirer rejects it with reason code R-418.
"""


def _repo(root: Path, config: str | None) -> Path:
    """A git work tree at ``root`` with one knowledge document (and ``briefd.yaml``), and a
    subfolder ``src/payments`` to run from."""
    subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)
    (root / "knowledge" / "domain").mkdir(parents=True)
    (root / "knowledge" / "domain" / "refunds.md").write_text(REFUNDS, encoding="utf-8")
    if config is not None:
        (root / "briefd.yaml").write_text(config, encoding="utf-8")
    sub = root / "src" / "payments"
    sub.mkdir(parents=True)
    return sub


def test_commands_from_a_subfolder_use_the_projects_settings_and_index(tmp_path: Path) -> None:
    """The hook climbed to the project from a subfolder, the command line did not:
    ``cd src/payments && briefd search …`` said "no index at .briefd/briefd.db", and
    ``briefd index`` there found no settings and asked for --source."""
    repo = tmp_path / "repo"
    sub = _repo(repo, "source: knowledge\n")
    built = briefd("index", "--json", cwd=sub)
    assert built.returncode == 0, built.stderr
    assert json.loads(built.stdout)["documents"] == 1
    assert (repo / ".briefd" / "briefd.db").is_file()  # the project's index, from its settings
    assert not (sub / ".briefd").exists()
    found = briefd("search", "partial refund acquirer", "--json", cwd=sub)
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)["hits"]
    assert hits[0]["doc_path"] == "domain/refunds.md"
    assert "R-418" in hits[0]["content"]
    doc = briefd("doc", "domain/refunds.md", cwd=sub)
    assert doc.returncode == 0, doc.stderr
    assert "within 180 days of capture" in doc.stdout
    again = briefd("index", cwd=sub)  # the stamp, from here too
    assert again.returncode == 0 and "0 changed (0 new)" in again.stdout, again.stderr


def test_an_index_without_settings_is_found_from_a_subfolder(tmp_path: Path) -> None:
    """A project laid out as `make run` does: no briefd.yaml, an index at the work tree's
    top built with --source. Above a folder in no work tree, such an index is never used."""
    repo = tmp_path / "repo"
    sub = _repo(repo, None)
    built = briefd("index", "--source", "knowledge", cwd=repo)
    assert built.returncode == 0, built.stderr
    found = briefd("search", "partial refund acquirer", "--json", cwd=sub)
    assert found.returncode == 0, found.stderr
    assert "R-418" in json.loads(found.stdout)["hits"][0]["content"]
    plain = tmp_path / "plain"  # no .git here or above: tmp_path's index is not its project
    plain.mkdir()
    (repo / ".git").rename(tmp_path / "git-away")
    (repo / ".briefd").rename(tmp_path / ".briefd")
    (repo / "plain").mkdir()
    for cwd in (plain, repo / "plain"):
        stray = briefd("search", "partial refund acquirer", cwd=cwd)
        assert stray.returncode == 1, cwd
        assert stray.stderr.startswith("error: no index at .briefd/briefd.db;"), stray.stderr


def test_a_relative_db_is_read_relative_to_the_settings_file(tmp_path: Path) -> None:
    """``db:`` and ``source:`` in the project's briefd.yaml are relative to that file, not to
    the subfolder the command runs in; ``--db`` stays relative to the working directory."""
    repo = tmp_path / "repo"
    sub = _repo(repo, "source: knowledge\ndb: index/kb.db\n")
    assert briefd("index", cwd=sub).returncode == 0
    assert (repo / "index" / "kb.db").is_file()
    assert not (sub / "index").exists()
    named = briefd("--db", "../../index/kb.db", "search", "partial refund", "--json", cwd=sub)
    assert named.returncode == 0, named.stderr
    assert json.loads(named.stdout)["hits"][0]["doc_path"] == "domain/refunds.md"


def test_a_linked_work_tree_indexes_into_its_own_index(tmp_path: Path) -> None:
    """Unlike the hook, which reads the main work tree's index while a linked work tree has
    none, ``briefd index`` there builds the work tree's own, from its own files, as before."""
    main = tmp_path / "repo"
    _repo(main, "source: knowledge\n")

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(main), *args], check=True, capture_output=True)

    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "knowledge")
    git("worktree", "add", "-q", str(tmp_path / "feature"))
    assert briefd("index", cwd=main).returncode == 0
    sub = tmp_path / "feature" / "src"
    sub.mkdir()
    built = briefd("index", "--json", cwd=sub)
    assert built.returncode == 0, built.stderr
    assert json.loads(built.stdout)["source"] == str(tmp_path / "feature" / "knowledge")
    assert (tmp_path / "feature" / ".briefd" / "briefd.db").is_file()


def test_the_index_stamp_looks_where_the_settings_do(tmp_path: Path) -> None:
    """``briefd index``'s stamp (answered before any settings load) finds the project's index
    and settings from a subfolder, and a settings file that appears there changes its
    invocation: a stamp the top's settings left never answers for the new one."""
    repo = tmp_path / "repo"
    sub = _repo(repo, "source: knowledge\n")
    args = stamp.index_args(["index"]) or {}
    assert stamp.locate(args, {}, str(sub)) == str(repo / ".briefd" / "briefd.db")
    assert stamp.config_path(args, {}, str(sub)) == str(repo / "briefd.yaml")
    before = stamp.invocation(args, {}, str(sub))
    (sub / "briefd.yaml").write_text("db: ../../.briefd/briefd.db\n", encoding="utf-8")
    assert stamp.config_path(args, {}, str(sub)) == str(sub / "briefd.yaml")
    assert stamp.invocation(args, {}, str(sub)) != before


def test_the_projects_own_briefd_folder_is_not_a_project(tmp_path: Path) -> None:
    """A project whose settings are ``.briefd/briefd.yaml``: from inside ``.briefd`` (or a
    folder in it), that file made ``.briefd`` look like a project of its own, so ``briefd
    index`` there built a second index in ``.briefd/.briefd/briefd.db`` and ``briefd search``
    in ``.briefd/eval-cache`` read that one. Both, and the hook, use the project's."""
    repo = tmp_path / "repo"
    _repo(repo, None)
    (repo / ".briefd").mkdir()
    (repo / ".briefd" / "briefd.yaml").write_text("source: ../knowledge\n", encoding="utf-8")
    assert briefd("index", cwd=repo).returncode == 0
    inside = repo / ".briefd"
    again = briefd("index", "--json", cwd=inside)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["added"] == []  # the project's index, up to date
    assert not (inside / ".briefd").exists()
    deeper = inside / "eval-cache"
    deeper.mkdir()
    found = briefd("search", "partial refund acquirer", "--json", cwd=deeper)
    assert found.returncode == 0, found.stderr
    assert "R-418" in json.loads(found.stdout)["hits"][0]["content"]
    recall = briefd("recall", "--no-server", "--status", "--json", cwd=deeper)
    assert json.loads(recall.stdout)["index"] == str(repo / ".briefd" / "briefd.db")


def test_init_from_a_subfolder_points_the_mcp_entry_where_the_hook_asks(tmp_path: Path) -> None:
    """``cd src/payments && briefd init --client claude-code`` in a project whose briefd.yaml
    says ``serve.port: 9000``: the hook it wrote climbs to that file and asks port 9000,
    but init read only the subfolder's settings, so the MCP entry beside it said
    ``http://127.0.0.1:8484/mcp`` (another project's server, or none), and the stdio entry
    named an index in src/payments that does not exist. Both now follow the project's file."""
    repo = tmp_path / "repo"
    port = free_port()
    sub = _repo(repo, f"source: knowledge\nserve:\n  port: {port}\n")
    assert briefd("index", cwd=repo).returncode == 0
    home = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "home" / "conf")}
    done = briefd("init", "--client", "claude-code", "--yes", cwd=sub, env=home)
    assert done.returncode == 0, done.stderr
    entry = json.loads((sub / ".mcp.json").read_text())["mcpServers"]["briefd"]
    assert entry["url"] == f"http://127.0.0.1:{port}/mcp"  # where the hook asks too:
    hook = json.loads((sub / ".claude" / "settings.local.json").read_text())
    command = hook["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert "--server" not in command  # it finds that server by itself, from the same file
    assert not (repo / ".mcp.json").exists()  # written where it was asked (--project: .)
    done = briefd("init", "--client", "claude-code", "--transport", "stdio", "--yes", cwd=sub)
    assert done.returncode == 0, done.stderr
    entry = json.loads((sub / ".mcp.json").read_text())["mcpServers"]["briefd"]
    assert entry["args"][-5:] == [
        "--db",
        str(repo / ".briefd" / "briefd.db"),
        "--config",
        str(repo / "briefd.yaml"),
        "mcp",
    ]
    # as the client spawns it, in src/payments: the project's index and settings
    spawned = subprocess.run(
        [entry["command"], *entry["args"][:-1], "search", "partial refund acquirer", "--json"],
        cwd=sub,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert spawned.returncode == 0, spawned.stderr
    assert "R-418" in json.loads(spawned.stdout)["hits"][0]["content"]


NAMING = """\
---
title: Naming refund handlers
---
# Naming refund handlers

A handler for an acquirer reason code is named after it: a partial refund
rejected with reason code R-418 goes to `handle_r418`.
"""


def _hook(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The hook line ``briefd init`` writes, run as an agent runs it in ``cwd``: no server,
    no daemon, no user settings."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    home = cwd / "home"
    quiet = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "BRIEFD_EMBEDDINGS__ENABLED": "false",
        "BRIEFD_RECALL__SERVER": "off",
        "BRIEFD_RECALL__DAEMON": "false",
    }
    return subprocess.run(
        [*shlex.split(hook_command()), *args],
        cwd=cwd,
        env={**clean, **quiet, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_named_settings_file_is_read_as_if_run_beside_it(tmp_path: Path) -> None:
    """From src/payments of a project whose briefd.yaml (no ``db:``) is at the top, ``briefd
    --config ../../briefd.yaml search refunds`` said "no index at .briefd/briefd.db": a named
    file kept the default index in the working directory, and the hook, told the same, looked
    for the user's index. Naming the file no longer stops the walk up to the project's top,
    where the default index is (for ``.briefd/briefd.yaml``, the folder above ``.briefd``)."""
    repo = tmp_path / "repo"
    sub = _repo(repo, "source: knowledge\n")
    assert briefd("index", cwd=repo).returncode == 0
    named = briefd("--config", "../../briefd.yaml", "search", "partial refund", "--json", cwd=sub)
    assert named.returncode == 0, named.stderr
    assert "R-418" in json.loads(named.stdout)["hits"][0]["content"]
    env = {"BRIEFD_CONFIG": "../../briefd.yaml"}
    by_env = briefd("search", "partial refund acquirer", "--json", cwd=sub, env=env)
    assert by_env.returncode == 0, by_env.stderr
    assert "R-418" in json.loads(by_env.stdout)["hits"][0]["content"]
    again = briefd("--config", "../../briefd.yaml", "index", cwd=sub)  # the stamp agrees
    assert again.returncode == 0 and "0 changed (0 new)" in again.stdout, again.stderr
    assert not (sub / ".briefd").exists()
    for hook_args, hook_env in ((("--config", "../../briefd.yaml"), {}), ((), env)):
        hook = _hook(*hook_args, "partial refund acquirer reason code", cwd=sub, env=hook_env)
        assert "within 180 days of capture" in hook.stdout, hook.stderr
    local = tmp_path / "local"  # settings in .briefd: the project is the folder above it
    sub = _repo(local, None)
    (local / ".briefd").mkdir()
    (local / ".briefd" / "briefd.yaml").write_text("source: ../knowledge\n", encoding="utf-8")
    built = briefd("--config", "../../.briefd/briefd.yaml", "index", "--json", cwd=sub)
    assert built.returncode == 0, built.stderr
    assert json.loads(built.stdout)["documents"] == 1
    assert (local / ".briefd" / "briefd.db").is_file()
    assert not (sub / ".briefd").exists() and not (local / ".briefd" / ".briefd").exists()


def test_a_named_index_still_reads_the_projects_settings(tmp_path: Path) -> None:
    """``BRIEFD_DB=../../.briefd/briefd.db briefd index`` from src/payments said "no knowledge
    source configured": naming the index stopped the walk up, so the project's briefd.yaml
    (``source:``) was never read, and the hook so named answered without the project's
    ``recall.scopes``. Naming the index names no settings: both are the project's."""
    repo = tmp_path / "repo"
    sub = _repo(repo, "source: knowledge\nrecall:\n  scopes: [conventions]\n")
    (repo / "knowledge" / "conventions").mkdir()
    (repo / "knowledge" / "conventions" / "naming.md").write_text(NAMING, encoding="utf-8")
    env = {"BRIEFD_DB": "../../.briefd/briefd.db"}
    built = briefd("index", "--json", cwd=sub, env=env)
    assert built.returncode == 0, built.stderr
    assert json.loads(built.stdout)["documents"] == 2
    assert (repo / ".briefd" / "briefd.db").is_file() and not (sub / ".briefd").exists()
    named = briefd("--db", "../../.briefd/briefd.db", "index", "--json", cwd=sub)
    assert named.returncode == 0, named.stderr
    assert json.loads(named.stdout)["source"] == str(repo / "knowledge")

    def recalled(prompt: str) -> list[str]:
        hook = _hook("--format", "json", prompt, cwd=sub, env=env)
        assert hook.returncode == 0 and not hook.stderr, hook.stderr
        return [section["doc_path"] for section in json.loads(hook.stdout)["sections"]]

    assert recalled("how should I name the handler for reason code R-418") == [
        "conventions/naming.md"
    ]
    # the project's recall.scopes: not domain/refunds.md, which the words match
    assert recalled("may a partial refund be issued 180 days after capture") == []
