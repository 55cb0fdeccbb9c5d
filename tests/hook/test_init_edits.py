"""``briefd init`` edits the user's own config files: only briefd's entries change, everything
else (their hooks, their server entry's fields, TOML comments and tables) stays as written."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from briefd.cli.main import app

runner = CliRunner()


def init(project: Path, *args: str) -> str:
    result = runner.invoke(app, ["init", "--project", str(project), *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_init_keeps_the_users_hooks_that_share_a_group_with_briefds(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    mine = {"type": "command", "command": "~/bin/log-prompt.sh"}
    olds = [
        "BRIEFD_RECALL__SERVER=https://briefd.acme.internal briefd recall",
        "'/old venv/bin/briefd' recall --format claude-json",
        "/old/venv/bin/python -S -P /old/venv/lib/site-packages/briefd/hook/script.py",
    ]
    group = {"matcher": "", "hooks": [{"type": "command", "command": c} for c in olds]}
    group["hooks"].insert(1, mine)
    only_ours = {"hooks": [{"type": "command", "command": "python -m briefd recall"}]}
    settings.write_text(json.dumps({"hooks": {"UserPromptSubmit": [group, only_ours]}}))
    init(tmp_path, "--client", "claude-code", "--yes")
    first, ours = json.loads(settings.read_text())["hooks"]["UserPromptSubmit"]
    assert first == {"matcher": "", "hooks": [mine]}
    assert ours["hooks"][0]["command"].endswith("script.py")


def test_init_refuses_hooks_not_in_the_documented_shape(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    for hooks in ({"UserPromptSubmit": [{"hooks": ["echo hi"]}]}, {"UserPromptSubmit": {"a": 1}}):
        settings.write_text(json.dumps({"hooks": hooks}))
        result = runner.invoke(app, ["init", "--project", str(tmp_path), "--yes"])
        assert result.exit_code == 1
        assert f"{settings}: 'hooks.UserPromptSubmit" in result.output
        assert "fix it, then rerun" in result.output and "Traceback" not in result.output
        assert json.loads(settings.read_text()) == {"hooks": hooks}
        assert not (tmp_path / ".mcp.json").exists()
