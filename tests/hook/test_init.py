"""``briefd init``: idempotent config files, and a hook command that works as written."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from typer.testing import CliRunner

from briefd.api import Briefd
from briefd.cli.main import app
from briefd.hook import clients
from tests.hook.conftest import hook_json
from tests.recall.conftest import RELEVANT

runner = CliRunner()


def init(project: Path, *args: str) -> str:
    result = runner.invoke(app, ["init", "--project", str(project), *args])
    assert result.exit_code == 0, result.output
    return result.output


def snapshot(project: Path) -> dict[str, bytes]:
    return {str(p.relative_to(project)): p.read_bytes() for p in project.rglob("*") if p.is_file()}


def test_init_twice_gives_identical_files(tmp_path: Path) -> None:
    init(tmp_path, "--client", "all", "--yes")
    first = snapshot(tmp_path)
    assert sorted(first) == [
        ".claude/settings.local.json",
        ".codex/config.toml",
        ".codex/hooks.json",
        ".cursor/mcp.json",
        ".github/hooks/briefd.json",
        ".mcp.json",
        ".vscode/mcp.json",
    ]
    assert "already configured" in init(tmp_path, "--client", "all", "--yes")
    assert snapshot(tmp_path) == first
    mcp = json.loads(first[".mcp.json"])
    assert mcp["mcpServers"]["briefd"]["url"] == "http://127.0.0.1:8484/mcp"


def test_written_hook_command_works_as_written(
    tmp_path: Path, indexed: Briefd, hook_env: dict[str, str]
) -> None:
    project = tmp_path / "project"
    (project / ".briefd").mkdir(parents=True)
    indexed.close()
    indexed.settings.db.rename(project / ".briefd" / "briefd.db")
    init(project, "--client", "claude-code", "--yes")
    settings = json.loads((project / ".claude" / "settings.local.json").read_text())
    (group,) = settings["hooks"]["UserPromptSubmit"]
    command = group["hooks"][0]["command"]
    env = {k: v for k, v in hook_env.items() if k != "BRIEFD_DB"}
    done = subprocess.run(
        command,
        shell=True,
        input=json.dumps(hook_json(RELEVANT, cwd=str(project))),
        capture_output=True,
        text=True,
        cwd=project,
        env=env,
        check=False,
    )
    assert done.returncode == 0
    assert done.stdout.startswith("<knowledge>"), done.stderr


def test_init_keeps_other_entries(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    other = {"type": "command", "command": "echo hi"}
    (tmp_path / ".claude" / "settings.local.json").write_text(
        json.dumps(
            {"permissions": {"allow": []}, "hooks": {"UserPromptSubmit": [{"hooks": [other]}]}}
        )
    )
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text(
        'model = "o4"\n\n[mcp_servers.other]\nurl = "x"\n'
    )
    init(tmp_path, "--client", "all", "--yes")
    settings = json.loads((tmp_path / ".claude" / "settings.local.json").read_text())
    assert settings["permissions"] == {"allow": []}
    groups = settings["hooks"]["UserPromptSubmit"]
    assert groups[0]["hooks"] == [other] and "recall" in groups[1]["hooks"][0]["command"]
    toml = (tmp_path / ".codex" / "config.toml").read_text()
    assert toml.startswith(
        'model = "o4"\n\n[mcp_servers.other]\nurl = "x"\n\n[mcp_servers.briefd]\n'
    )


def test_codex_block_is_replaced_in_place() -> None:
    text = '[mcp_servers.briefd]\nurl = "old"\n\n[profile]\nx = 1\n'
    new = clients.codex_mcp(text, "http://h:1/mcp")
    assert new == (
        '[mcp_servers.briefd]\nurl = "http://h:1/mcp"\nbearer_token_env_var = "BRIEFD_API_TOKEN"\n'
        "\n[profile]\nx = 1\n"
    )
    assert clients.codex_mcp(new, "http://h:1/mcp") == new


def test_init_refuses_broken_json_and_asks_first(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text("{not json")
    broken = runner.invoke(app, ["init", "--project", str(tmp_path), "--yes"])
    assert broken.exit_code == 1
    assert "the MCP config file is not valid JSON" in broken.output
    (tmp_path / ".mcp.json").unlink()
    unasked = runner.invoke(app, ["init", "--project", str(tmp_path)])
    assert unasked.exit_code == 1
    assert "Nothing written" in unasked.output
    assert not (tmp_path / ".mcp.json").exists()
