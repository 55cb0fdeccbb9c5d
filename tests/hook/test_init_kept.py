"""``briefd init`` run again keeps what the user chose: an MCP entry the client spawns (stdio)
stays stdio unless ``--transport`` says otherwise, and a recall hook the team's shared
``.claude/settings.json`` registers is not written a second time into the local settings."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.hook.test_init import hand_written, init, placed, recall_hooks, snapshot

MCP_FILES = [".mcp.json", ".cursor/mcp.json", ".vscode/mcp.json", ".codex/config.toml"]


def entries(project: Path) -> dict[str, dict[str, object]]:
    """The briefd MCP entry of every client's config file, parsed."""
    codex = tomllib.loads((project / ".codex" / "config.toml").read_text())
    return {
        ".mcp.json": json.loads((project / ".mcp.json").read_text())["mcpServers"]["briefd"],
        ".cursor/mcp.json": json.loads((project / ".cursor" / "mcp.json").read_text())[
            "mcpServers"
        ]["briefd"],
        ".vscode/mcp.json": json.loads((project / ".vscode" / "mcp.json").read_text())["servers"][
            "briefd"
        ],
        ".codex/config.toml": codex["mcp_servers"]["briefd"],
    }


def test_init_without_transport_keeps_every_stdio_entry(tmp_path: Path) -> None:
    init(tmp_path, "--client", "all", "--yes", "--transport", "stdio")
    before = snapshot(tmp_path)
    output = init(tmp_path, "--client", "all", "--yes")
    assert snapshot(tmp_path) == before
    for path, entry in entries(tmp_path).items():
        assert "url" not in entry and isinstance(entry["command"], str), path
        assert entry["args"][-1] == "mcp", path
        line = f"{tmp_path / path}: kept its briefd entry over stdio ({entry['command']} "
        assert line in output
    assert "Everything is already configured" in output
    # an explicit transport still switches them
    output = init(tmp_path, "--client", "all", "--yes", "--transport", "http")
    assert "kept its briefd entry" not in output
    for path, entry in entries(tmp_path).items():
        assert entry["url"] == "http://127.0.0.1:8484/mcp", path
        assert "command" not in entry and "args" not in entry, path
    assert entries(tmp_path)[".mcp.json"]["type"] == "http"


def test_init_adding_a_client_keeps_a_hand_written_stdio_entry(tmp_path: Path) -> None:
    wrapper = tmp_path / "opt" / "briefd" / "bin" / "briefd"  # exists: a gone one is rewritten
    wrapper.parent.mkdir(parents=True)
    wrapper.write_text("#!/bin/sh\n")
    spawned = {"command": str(wrapper), "args": ["--db", "/kb/briefd.db", "mcp"]}
    codex_text = '[mcp_servers.briefd]\ncommand = "briefd"\nargs = ["mcp"]\n'
    mcp, codex = hand_written(tmp_path, {"type": "stdio", **spawned}, codex_text)
    before = mcp.read_text()
    output = init(tmp_path, "--client", "all", "--yes")
    assert mcp.read_text() == before
    assert codex.read_text() == '[mcp_servers.briefd]\ncommand = "briefd"\nargs = ["mcp"]\n'
    line = f"{mcp}: kept its briefd entry over stdio ({wrapper} --db /kb/briefd.db mcp)"
    assert line in output
    assert f"{codex}: kept its briefd entry over stdio (briefd mcp)" in output
    assert "pass --transport http to switch it" in output
    # the clients that had no entry follow the kept ones: stdio (no server is running)
    written = entries(tmp_path)
    for path in (".cursor/mcp.json", ".vscode/mcp.json"):
        assert "url" not in written[path] and written[path]["args"][-1] == "mcp", path
    assert "gets one over stdio too, like the kept ones" in output
    # the hook names no server: the spawned briefd is not one it could ask
    (hook,) = recall_hooks(tmp_path, [".claude/settings.local.json"], "UserPromptSubmit")
    assert "--server" not in shlex.split(hook)
    # --transport stdio rewrites it to this installation's command; --url switches it to http
    init(tmp_path, "--client", "claude-code", "--yes", "--transport", "stdio")
    entry = json.loads(mcp.read_text())["mcpServers"]["briefd"]
    assert entry["type"] == "stdio" and entry["command"] != spawned["command"]
    init(tmp_path, "--client", "claude-code", "--yes", "--url", "https://briefd.acme.internal")
    entry = json.loads(mcp.read_text())["mcpServers"]["briefd"]
    assert entry["url"] == "https://briefd.acme.internal/mcp" and "command" not in entry


def test_init_all_points_new_entries_at_the_team_server_the_kept_one_names(
    tmp_path: Path,
) -> None:
    """The team commits ``.mcp.json`` naming its server; ``briefd init --client all`` kept that
    entry and had the hook ask that server, but wrote Cursor's, VS Code's and Codex's entries
    for this machine's port 8484, where nobody runs a server."""
    team = "https://briefd.acme.internal/mcp"
    committed = json.dumps(
        {"mcpServers": {"briefd": {"type": "http", "url": team, "headers": {"X-Team": "pay"}}}}
    )
    (tmp_path / ".mcp.json").write_text(committed)
    output = init(tmp_path, "--client", "all", "--yes")
    assert {path: entry["url"] for path, entry in entries(tmp_path).items()} == dict.fromkeys(
        MCP_FILES, team
    )
    assert entries(tmp_path)[".codex/config.toml"]["bearer_token_env_var"] == "BRIEFD_API_TOKEN"
    assert (tmp_path / ".mcp.json").read_text() == committed  # the team's file, as it was
    assert f"gets one at {team} too, like the kept one" in output
    assert "nothing answers" not in output
    (command,) = recall_hooks(tmp_path, [".claude/settings.local.json"], "UserPromptSubmit")
    assert command.endswith(" --server https://briefd.acme.internal")
    assert "already configured" in init(tmp_path, "--client", "all", "--yes")


CLAUDE = [".claude/settings.json", ".claude/settings.local.json"]
SETUP_HOOK = {"type": "command", "command": "BRIEFD_RECALL__SERVER=https://kb.acme briefd recall"}
AUDIT = {"type": "command", "command": "./audit-prompt.sh"}


def team_settings(project: Path) -> Path:
    """The team's ``.claude/settings.json`` with the /setup page's recall hook."""
    shared = project / ".claude" / "settings.json"
    shared.parent.mkdir(exist_ok=True)
    data = {"hooks": {"UserPromptSubmit": [{"hooks": [AUDIT]}, {"hooks": [SETUP_HOOK]}]}}
    shared.write_text(json.dumps(data, indent=2))
    return shared


def test_init_writes_no_second_hook_when_settings_json_has_one(tmp_path: Path) -> None:
    shared = team_settings(tmp_path)
    before = shared.read_bytes()
    output = init(tmp_path, "--client", "claude-code", "--yes")
    assert shared.read_bytes() == before
    assert recall_hooks(tmp_path, CLAUDE, "UserPromptSubmit") == [SETUP_HOOK["command"]]
    assert not (tmp_path / ".claude" / "settings.local.json").exists()
    assert f"{shared}: already registers briefd's recall hook" in output
    assert f"writes none into {tmp_path / '.claude' / 'settings.local.json'}" in output
    mcp = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["briefd"]
    assert mcp["url"] == "http://127.0.0.1:8484/mcp"  # the MCP entry is still written
    assert "already configured" in init(tmp_path, "--client", "claude-code", "--yes")


def test_init_writes_no_second_hook_when_the_users_own_settings_have_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recall hook in ``~/.claude/settings.json`` (README: a hook installed for every
    project) runs in this project too: init wrote a second one into settings.local.json,
    and Claude Code injected every first prompt twice. One that names an index of its own
    (``--db``) answers from that index, not this project's: init writes this project's."""
    home = tmp_path / "home"
    user = placed(home, ".claude/settings.json")
    monkeypatch.setenv("HOME", str(home))
    project = tmp_path / "project"
    project.mkdir()
    everywhere = {"type": "command", "command": f"{shlex.quote(sys.executable)} -m briefd recall"}
    user.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [everywhere]}]}}))
    output = init(project, "--client", "claude-code", "--yes")
    assert not (project / ".claude" / "settings.local.json").exists()
    assert f"{user}: already registers briefd's recall hook" in " ".join(output.split())
    one_index = {**everywhere, "command": everywhere["command"] + " --db /srv/other/index.db"}
    user.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [one_index]}]}}))
    init(project, "--client", "claude-code", "--yes")
    assert len(recall_hooks(project, [".claude/settings.local.json"], "UserPromptSubmit")) == 1


def test_init_removes_its_duplicate_when_settings_json_has_one(tmp_path: Path) -> None:
    local = placed(tmp_path, ".claude/settings.local.json")
    mine = {"permissions": {"allow": ["Bash(make test)"]}}
    local.write_text(json.dumps({**mine, "hooks": {"UserPromptSubmit": [{"hooks": [AUDIT]}]}}))
    init(tmp_path, "--client", "claude-code", "--yes")
    assert len(recall_hooks(tmp_path, [".claude/settings.local.json"], "UserPromptSubmit")) == 1
    shared = team_settings(tmp_path)
    before = shared.read_bytes()
    output = init(tmp_path, "--client", "claude-code", "--yes")
    assert shared.read_bytes() == before
    assert f"removes the one an earlier init wrote into {local}" in output
    assert json.loads(local.read_text()) == {
        **mine,
        "hooks": {"UserPromptSubmit": [{"hooks": [AUDIT]}]},
    }
    assert recall_hooks(tmp_path, CLAUDE, "UserPromptSubmit") == [SETUP_HOOK["command"]]
    # a local file that held only init's hook goes
    local.unlink()
    (tmp_path / ".claude" / "settings.json").unlink()
    init(tmp_path, "--client", "claude-code", "--yes")
    team_settings(tmp_path)
    output = init(tmp_path, "--client", "claude-code", "--yes")
    assert f"removes {local}, which held only the one an earlier init wrote" in output
    assert f"removed {local}" in output
    assert not local.exists()
    assert recall_hooks(tmp_path, CLAUDE, "UserPromptSubmit") == [SETUP_HOOK["command"]]


def test_stdio_entries_name_the_projects_own_settings_or_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run from another directory: the entry names the project's index (not the working
    directory's), or its .briefd/briefd.yaml, which the CLI and the hook read too."""
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv("BRIEFD_CONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    init(project, "--client", "claude-code", "--yes", "--transport", "stdio")
    args = entries_of(project)["args"]
    assert args[-3:] == ["--db", str(project / ".briefd" / "briefd.db"), "mcp"]
    local = project / ".briefd" / "briefd.yaml"
    local.parent.mkdir(exist_ok=True)
    local.write_text("db: index.db\n")
    init(project, "--client", "claude-code", "--yes", "--transport", "stdio")
    assert entries_of(project)["args"][-3:] == ["--config", str(local.resolve()), "mcp"]


def entries_of(project: Path) -> dict[str, Any]:
    entry: dict[str, Any] = json.loads((project / ".mcp.json").read_text())["mcpServers"]["briefd"]
    return entry


def test_init_after_moving_the_venv_rewrites_stdio_entries_that_name_it(tmp_path: Path) -> None:
    """Run again after the venv moved, init keeps the stdio entries stdio but points them at
    this installation: a command path that no longer exists would leave the client without
    briefd's tools. The user's other fields (env) stay. The real command in a subprocess."""
    project = tmp_path / "project"
    project.mkdir()

    def run_init() -> str:
        command = ["init", "--project", str(project), "--client", "all", "--yes"]
        done = subprocess.run(
            [sys.executable, "-m", "briefd", *command],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={**os.environ, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "c")},
            timeout=60,
            check=True,
        )
        return done.stdout

    init(project, "--client", "all", "--yes", "--transport", "stdio")
    now = entries(project)[".mcp.json"]["command"]
    assert isinstance(now, str) and Path(now).is_file()
    gone = str(tmp_path / "old-venv" / "bin" / "briefd")
    for path in MCP_FILES:
        file = project / path
        text = file.read_text().replace(now, gone)
        if path == ".mcp.json":
            data = json.loads(text)
            data["mcpServers"]["briefd"]["env"] = {"MY_VAR": "1"}
            text = json.dumps(data)
        file.write_text(text)
    output = run_init()
    assert "kept its briefd entry" not in output
    for path, entry in entries(project).items():
        assert (entry["command"], entry["args"][-1], "url" in entry) == (now, "mcp", False), path
    assert entries(project)[".mcp.json"]["env"] == {"MY_VAR": "1"}
    # a command that exists (the user's own wrapper) is still kept as written
    assert "kept its briefd entry over stdio" in run_init()


def test_a_shared_hook_with_a_teammates_paths_does_not_replace_this_machines(
    tmp_path: Path,
) -> None:
    """The team's settings.json held the hook line init wrote on a teammate's machine
    (their venv's python, their checkout's script): init called it registered and removed
    this machine's working hook, and every prompt then failed with 'python: not found'. A
    shared hook whose programs this machine lacks is not taken as this machine's."""
    foreign = (
        "/home/alice/src/payments/.venv/bin/python -S -P "
        "/home/alice/src/payments/.venv/lib/python3.11/site-packages/briefd/hook/script.py"
    )
    shared = tmp_path / ".claude" / "settings.json"
    shared.parent.mkdir()
    hook = {"type": "command", "command": foreign}
    shared.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [hook]}]}}))
    output = init(tmp_path, "--client", "claude-code", "--yes")
    local = recall_hooks(tmp_path, [".claude/settings.local.json"], "UserPromptSubmit")
    assert len(local) == 1 and local[0] != foreign
    assert f"{shared}: registers briefd's recall hook as `{foreign}`, whose program" in output
    assert "already registers" not in output


def test_init_after_moving_the_project_rewrites_stdio_entries_naming_its_old_index(
    tmp_path: Path,
) -> None:
    """After the project folder moved, init kept the stdio entries whose ``--db`` named the
    old folder's index and said nothing needed changing; the client's ``briefd mcp`` then
    stopped with "holds no index". An entry naming an index or settings file that is gone is
    written again for the project where it is now."""
    old, new = tmp_path / "mp-a", tmp_path / "mp-b"
    (old / ".briefd").mkdir(parents=True)
    (old / ".briefd" / "briefd.db").write_bytes(b"")  # the project's own index
    init(old, "--client", "all", "--yes", "--transport", "stdio")
    assert str(old) in json.dumps(entries(old)[".mcp.json"])
    old.rename(new)
    output = init(new, "--client", "all", "--yes")
    assert "kept its briefd entry" not in output
    for path, entry in entries(new).items():
        assert str(old) not in json.dumps(entry) and entry["args"][-1] == "mcp", path
    assert "kept its briefd entry over stdio" in init(new, "--client", "all", "--yes")
