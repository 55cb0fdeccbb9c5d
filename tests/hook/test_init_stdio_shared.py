"""``briefd init --transport stdio`` writes this machine's paths (the ``briefd`` program, the
index, the settings file) into ``.mcp.json``, ``.cursor/mcp.json``, ``.vscode/mcp.json`` and
``.codex/config.toml``: the files a team commits to share its MCP servers. Init says so for
each one git would commit, as it does for the hook's local settings."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.hook.test_init import init

NOTE = (
    "note: {path} names this machine's paths (its briefd MCP entry over stdio: the program, "
    "index and settings file), and git {how}"
)
FILES = (".mcp.json", ".cursor/mcp.json", ".codex/config.toml", ".vscode/mcp.json")


def said(project: Path, *args: str) -> str:
    return " ".join(init(project, *args).split())


def test_init_says_when_git_would_commit_a_stdio_entry_with_this_machines_paths(
    tmp_path: Path,
) -> None:
    """A teammate who cloned the project got ``"command": "/tmp/…-venv/bin/briefd"`` and
    ``--db /tmp/…/briefd.db``: an MCP server their machine cannot start; init said nothing."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    out = said(tmp_path, "--transport", "stdio", "--client", "all", "--yes")
    entry = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["briefd"]
    assert Path(entry["command"]).is_absolute()  # what the note is about
    for name in FILES:
        path = tmp_path / name
        assert NOTE.format(path=path, how="does not ignore it") + f": add {name} to " in out
    assert "serve briefd for the team and run `briefd init --url URL`" in out
    subprocess.run(["git", "-C", str(tmp_path), "add", ".mcp.json"], check=True)
    (tmp_path / ".gitignore").write_text(".cursor/\n.vscode/\n.codex/\n")
    again = said(tmp_path, "--client", "all", "--yes")  # kept stdio entries: still said
    assert NOTE.format(path=tmp_path / ".mcp.json", how="tracks it") in again
    assert again.count("names this machine's paths") == 1  # the ignored ones are not named


def test_no_note_for_an_http_entry_or_a_portable_stdio_entry(tmp_path: Path) -> None:
    """A URL, or a stdio entry the team wrote with ``briefd`` from PATH, is shareable."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert "names this machine's paths" not in said(tmp_path, "--client", "all", "--yes")
    for name in FILES:
        (tmp_path / name).unlink()
    portable = {"type": "stdio", "command": "briefd", "args": ["mcp"]}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"briefd": portable}}))
    out = said(tmp_path, "--yes")  # kept as the team wrote it
    assert "kept its briefd entry over stdio (briefd mcp)" in out
    assert "names this machine's paths" not in out
