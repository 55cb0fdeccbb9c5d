"""``briefd init`` edits the user's own config files: only briefd's entries change, everything
else (their hooks, their server entry's fields, TOML comments and tables) stays as written."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
import tomllib
from pathlib import Path

from briefd.hook import main as hook_main
from tests.hook.test_init import hand_written, init, placed, run_init


def test_init_keeps_the_users_hooks_that_share_a_group_with_briefds(tmp_path: Path) -> None:
    settings = placed(tmp_path, ".claude/settings.local.json")
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
    settings = placed(tmp_path, ".claude/settings.local.json")
    for hooks in ({"UserPromptSubmit": [{"hooks": ["echo hi"]}]}, {"UserPromptSubmit": {"a": 1}}):
        settings.write_text(json.dumps({"hooks": hooks}))
        result = run_init(tmp_path, "--yes")
        assert result.exit_code == 1
        assert f"{settings}: 'hooks.UserPromptSubmit" in result.output
        assert "fix it, then rerun" in result.output and "Traceback" not in result.output
        assert json.loads(settings.read_text()) == {"hooks": hooks}
        assert not (tmp_path / ".mcp.json").exists()


CODEX_FORMS = {
    "inline table": '[mcp_servers]\nbriefd = {url = "http://old/mcp"}\n',
    "dotted key": 'mcp_servers.briefd.url = "http://old/mcp"\n\n[profile]\nx = 1\n',
    "commented header": (
        '[mcp_servers.briefd] # our team server\nurl = "http://old/mcp"\n\n'
        '[mcp_servers.briefd.http_headers]\nX-Team = "payments"\n\n'
        "# the profile we use for reviews\n[profile]\nx = 1\n"
    ),
}


def test_init_edits_codex_toml_in_place_in_every_form(tmp_path: Path) -> None:
    config = placed(tmp_path, ".codex/config.toml")
    for form, text in CODEX_FORMS.items():
        config.write_text(text)
        init(tmp_path, "--client", "codex", "--yes", "--url", "http://new")
        new = config.read_text()
        data = tomllib.loads(new)  # one briefd entry: no table declared twice
        briefd = data["mcp_servers"]["briefd"]
        assert briefd["url"] == "http://new/mcp", form
        assert briefd["bearer_token_env_var"] == "BRIEFD_API_TOKEN", form
        assert new.replace("http://new/mcp", "http://old/mcp").startswith(text.split("\n")[0])
    assert briefd["http_headers"] == {"X-Team": "payments"}
    assert "# our team server" in new and "# the profile we use for reviews\n[profile]" in new


def test_init_names_a_broken_codex_toml_once(tmp_path: Path) -> None:
    config = placed(tmp_path, ".codex/config.toml")
    config.write_text("[mcp_servers\n")
    result = run_init(tmp_path, "--client", "codex", "-y")
    assert result.exit_code == 1
    assert f"{config}: not valid TOML (" in result.output
    assert result.output.count("config.toml") == 1


def test_init_writes_into_an_inline_servers_table_and_past_a_foreign_hook_shape(
    tmp_path: Path,
) -> None:
    """``mcp_servers = { github = {…} }`` (an inline table) stopped init with tomlkit's
    "ValueError: Inline tables cannot contain a table", and a ``.github/hooks/briefd.json``
    whose UserPromptSubmit held a plain string with "AttributeError: 'str' object has no
    attribute 'get'": both as tracebacks."""
    config = placed(tmp_path, ".codex/config.toml")
    config.write_text('mcp_servers = { github = { command = "gh-mcp" } }\n')
    init(tmp_path, "--client", "codex", "--yes")
    servers = tomllib.loads(config.read_text())["mcp_servers"]
    assert servers["github"] == {"command": "gh-mcp"}
    assert servers["briefd"]["url"] == "http://127.0.0.1:8484/mcp"
    hooks = tmp_path / ".github" / "hooks" / "briefd.json"
    hooks.parent.mkdir(parents=True)
    hooks.write_text('{"hooks": {"UserPromptSubmit": ["echo hi"]}}')
    init(tmp_path, "--client", "vscode", "--yes")
    assert json.loads(hooks.read_text())["hooks"]["UserPromptSubmit"] == ["echo hi"]


TEAM = {"url": "https://briefd.acme.internal/mcp", "headers": {"X-Team": "payments"}}


def test_init_keeps_a_hand_written_server_entry_at_another_url(tmp_path: Path) -> None:
    codex_text = '[mcp_servers.briefd]\nurl = "https://briefd.acme.internal/mcp"\n'
    mcp, codex = hand_written(tmp_path, {"type": "http", **TEAM}, codex_text)
    before = mcp.read_text()
    output = init(tmp_path, "--client", "all", "--yes")
    assert mcp.read_text() == before
    assert codex.read_text() == '[mcp_servers.briefd]\nurl = "https://briefd.acme.internal/mcp"\n'
    assert f"{codex}: kept its briefd server" in output
    assert f"{mcp}: kept its briefd server https://briefd.acme.internal/mcp" in output
    assert "pass --url to choose the server" in output
    settings = json.loads((tmp_path / ".claude" / "settings.local.json").read_text())
    (group,) = settings["hooks"]["UserPromptSubmit"]
    (command,) = [h["command"] for h in group["hooks"]]
    assert command.endswith(" --server https://briefd.acme.internal")  # where MCP goes


def test_init_keeps_the_extra_fields_of_the_entry_it_updates(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"briefd": TEAM}}))
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text(
        '[mcp_servers.briefd]\nurl = "https://briefd.acme.internal/mcp"\n'
        '[mcp_servers.briefd.http_headers]\nX-Team = "payments"\n'
    )
    output = init(tmp_path, "--client", "all", "--yes", "--url", "https://new.acme.internal")
    assert "kept its briefd server" not in output
    entry = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["briefd"]
    assert entry["url"] == "https://new.acme.internal/mcp"
    assert entry["headers"] == {
        "Authorization": "Bearer ${BRIEFD_API_TOKEN:-}",
        "X-Team": "payments",
    }
    codex = tomllib.loads((tmp_path / ".codex" / "config.toml").read_text())
    assert codex["mcp_servers"]["briefd"]["http_headers"] == {"X-Team": "payments"}
    init(tmp_path, "--client", "claude-code", "--yes", "--transport", "stdio")
    entry = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["briefd"]
    assert entry["type"] == "stdio" and "url" not in entry and "headers" not in entry


# What Codex refuses to load in a server entry of each transport ("env is not supported for
# streamable_http", "http_headers is not supported for stdio"; openai/codex
# codex-rs/config/src/mcp_types.rs, McpServerConfig::try_from): a config.toml with one of these
# stops Codex at start, every server with it.
CODEX_REFUSES = {
    "url": {"command", "args", "env", "env_vars", "cwd", "bearer_token"},
    "command": {
        "url",
        "bearer_token_env_var",
        "bearer_token",
        "http_headers",
        "env_http_headers",
        "oauth",
        "oauth_resource",
    },
}


def codex_refused(entry: dict[str, object]) -> set[str]:
    transport = "command" if "command" in entry else "url"
    return CODEX_REFUSES[transport] & set(entry)


def test_init_switching_a_codex_entry_leaves_no_key_codex_refuses(tmp_path: Path) -> None:
    config = placed(tmp_path, ".codex/config.toml")
    config.write_text(
        '[mcp_servers.briefd]\ncommand = "/opt/briefd/bin/briefd"\nargs = ["mcp"]\n'
        'cwd = "/srv/app"\ntool_timeout_sec = 90\n\n'
        '[mcp_servers.briefd.env]\nBRIEFD_SEARCH__TOP_K = "12"\n'
    )
    init(tmp_path, "--client", "codex", "--yes", "--url", "https://briefd.acme.internal")
    entry = tomllib.loads(config.read_text())["mcp_servers"]["briefd"]
    assert codex_refused(entry) == set()
    assert entry == {
        "url": "https://briefd.acme.internal/mcp",
        "bearer_token_env_var": "BRIEFD_API_TOKEN",
        "tool_timeout_sec": 90,
    }
    config.write_text(
        '[mcp_servers.briefd]\nurl = "https://briefd.acme.internal/mcp"\n'
        'bearer_token_env_var = "BRIEFD_API_TOKEN"\n'
        'http_headers = { "X-Team" = "payments" }\n'
        'env_http_headers = { "X-Atlassian-Token" = "JIRA_TOKEN" }\n'
    )
    init(tmp_path, "--client", "codex", "--yes", "--transport", "stdio")
    entry = tomllib.loads(config.read_text())["mcp_servers"]["briefd"]
    assert codex_refused(entry) == set()
    assert set(entry) == {"command", "args", "startup_timeout_sec"}


def test_init_checks_every_file_before_writing_any(tmp_path: Path) -> None:
    (tmp_path / ".cursor").write_text("not a folder")
    result = run_init(tmp_path, "--client", "all", "-y")
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"error: {tmp_path / '.cursor'} is a file where init needs a folder; move it aside, "
        "then rerun"
    )
    assert [p.name for p in tmp_path.iterdir()] == [".cursor"]


def test_init_in_a_folder_it_cannot_write_is_one_line(tmp_path: Path) -> None:
    """A read-only checkout: one line, no traceback. Root ignores a mode of 0o555, not the
    immutable attribute (which, like a read-only mount, stops root too)."""
    project = tmp_path / "project"
    project.mkdir()
    locked = ["chattr", "+i", str(project)] if os.geteuid() == 0 else None
    if locked:
        subprocess.run(locked, check=True)
    else:
        project.chmod(0o555)
    try:
        result = run_init(project, "-y")
    finally:
        if locked:
            subprocess.run(["chattr", "-i", str(project)], check=True)
        project.chmod(0o755)
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"error: {project / '.claude' / 'settings.local.json'}: cannot write in {project} "
        "(read-only or not yours); make it writable or run init where you can write, then rerun"
    )
    assert list(project.iterdir()) == []


def test_init_leaves_a_read_only_file_as_it_is(tmp_path: Path) -> None:
    """A config file its owner made read-only was replaced all the same (the new text renamed
    over it), its servers rewritten; init refuses it in one line, writing no file."""
    mcp = tmp_path / ".mcp.json"
    mcp.write_text('{"mcpServers": {"mine": {"command": "x"}}}\n')
    mcp.chmod(0o444)
    result = run_init(tmp_path, "--client", "all", "-y")
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"error: {mcp}: read-only (mode 444); make it writable (chmod u+w) to let init change "
        "it, then rerun"
    )
    assert [p.name for p in tmp_path.iterdir()] == [".mcp.json"]
    assert mcp.read_text() == '{"mcpServers": {"mine": {"command": "x"}}}\n'


def test_init_writes_through_a_linked_settings_file(tmp_path: Path) -> None:
    """Settings kept in a dotfiles repository and linked into the project: the new text was
    renamed over the link, which became a file of its own, the dotfiles copy left behind."""
    dotfiles = tmp_path / "dotfiles" / "claude-settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"model": "opus"}\n')
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    link = project / ".claude" / "settings.local.json"
    link.symlink_to(dotfiles)
    init(project, "--client", "claude-code", "--yes")
    assert link.is_symlink() and link.resolve() == dotfiles
    settings = json.loads(dotfiles.read_text())
    assert settings["model"] == "opus"
    (group,) = settings["hooks"]["UserPromptSubmit"]
    assert "briefd/hook/script.py" in group["hooks"][0]["command"]
    assert sorted(p.name for p in dotfiles.parent.iterdir()) == ["claude-settings.json"]
    assert "already configured" in init(project, "--client", "claude-code", "--yes")


def written_hook_server(project: Path) -> str | None:
    """The server the recall command written into the Claude Code settings asks, run in the
    project as the agent runs it."""
    settings = json.loads((project / ".claude" / "settings.local.json").read_text())
    command = settings["hooks"]["UserPromptSubmit"][-1]["hooks"][0]["command"]
    options, _ = hook_main.parse_args(shlex.split(command)[4:])
    with contextlib.chdir(project):
        url, _, _, _ = hook_main.server(options, {"HOME": str(project)})
    return url


def test_the_hook_asks_the_server_init_points_mcp_at(tmp_path: Path) -> None:
    init(tmp_path, "--client", "claude-code", "--yes", "--url", "https://briefd.acme.internal")
    assert written_hook_server(tmp_path) == "https://briefd.acme.internal"
    mcp = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["briefd"]
    assert mcp["url"] == "https://briefd.acme.internal/mcp"


def test_init_url_names_the_team_server_the_projects_file_names_too(tmp_path: Path) -> None:
    """The team's briefd.yaml names its server; the hook does not trust a project's file with
    a server on another machine, so `briefd init --url` (the user's word) names it in the hook
    instead of leaving the hook to find it there (which it then refused)."""
    (tmp_path / "briefd.yaml").write_text("recall:\n  server: https://briefd.acme.internal\n")
    init(tmp_path, "--client", "claude-code", "--yes", "--url", "https://briefd.acme.internal")
    assert written_hook_server(tmp_path) == "https://briefd.acme.internal"


def test_init_of_another_directory_reads_its_briefd_yaml(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "briefd.yaml").write_text("serve:\n  port: 9191\n")
    init(project, "--client", "claude-code", "--yes")  # run from the repository's directory
    mcp = json.loads((project / ".mcp.json").read_text())["mcpServers"]["briefd"]
    assert mcp["url"] == "http://127.0.0.1:9191/mcp"
    assert written_hook_server(project) == "http://127.0.0.1:9191"
    assert "--server" not in (project / ".claude" / "settings.local.json").read_text()  # found
    (project / "briefd.yaml").write_text("serve:\n  port: 8484\n")
    output = init(project, "--client", "claude-code", "--yes")  # the entry at 9191 is kept
    assert "kept its briefd server http://127.0.0.1:9191/mcp" in output
    assert written_hook_server(project) == "http://127.0.0.1:9191"  # and the hook asks it too
    init(project, "--client", "claude-code", "--yes", "--url", "http://127.0.0.1:8484")
    assert "--server" not in (project / ".claude" / "settings.local.json").read_text()


def test_a_kept_entry_at_the_default_port_is_asked_by_the_hook_too(tmp_path: Path) -> None:
    """The common way round: init first with the defaults (MCP at 127.0.0.1:8484), then
    serve.port set in briefd.yaml and init run again. The entry at 8484 is kept, as at any
    other URL, but the hook got no --server (init took 8484 for one the hook finds by itself)
    and asked the new port: the agent's MCP tools and its prompt hook reached different
    servers. The hook now asks the kept server, as README says for every kept entry."""
    project = tmp_path / "project"
    project.mkdir()
    init(project, "--client", "claude-code", "--yes")
    assert written_hook_server(project) == "http://127.0.0.1:8484"
    (project / "briefd.yaml").write_text("serve:\n  port: 9191\n")
    output = init(project, "--client", "claude-code", "--yes")
    assert "kept its briefd server http://127.0.0.1:8484/mcp" in output
    mcp = json.loads((project / ".mcp.json").read_text())["mcpServers"]["briefd"]
    assert mcp["url"] == "http://127.0.0.1:8484/mcp"
    assert written_hook_server(project) == "http://127.0.0.1:8484"
    (project / "briefd.yaml").write_text("recall:\n  server: off\n")  # asks none: stays so
    init(project, "--client", "claude-code", "--yes")
    assert written_hook_server(project) is None


VSCODE_JSONC = """{
  // the team's servers; see https://wiki.acme.internal/mcp
  "servers": {
    "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/",}, /* ours */
  },
}
"""


def test_init_reads_vscode_jsonc_and_never_drops_its_comments(tmp_path: Path) -> None:
    vscode = tmp_path / ".vscode" / "mcp.json"
    vscode.parent.mkdir()
    vscode.write_text(VSCODE_JSONC)
    refused = run_init(tmp_path, "--client", "vscode", "-y")
    assert refused.exit_code == 1
    assert f"{vscode}: has comments, which init would not keep; set " in refused.output
    assert '"briefd": {"type": "http", "url": "http://127.0.0.1:8484/mcp"' in refused.output
    assert "by hand (or remove the comments), then rerun" in refused.output
    assert vscode.read_text() == VSCODE_JSONC
    # added by hand, as the message says: init reads the file and leaves it as it is
    vscode.write_text("{}")
    init(tmp_path, "--client", "vscode", "--yes", "--transport", "stdio")
    entry = json.loads(vscode.read_text())["servers"]["briefd"]
    by_hand = VSCODE_JSONC.replace('"servers": {', f'"servers": {{"briefd": {json.dumps(entry)},')
    vscode.write_text(by_hand)
    assert "already configured" in init(
        tmp_path, "--client", "vscode", "-y", "--transport", "stdio"
    )
    assert vscode.read_text() == by_hand


def test_init_rewrites_jsonc_without_comments_as_json(tmp_path: Path) -> None:
    vscode = tmp_path / ".vscode" / "mcp.json"
    vscode.parent.mkdir()
    vscode.write_text('{"servers": {"x": {"url": "http://a//b",},},}')
    init(tmp_path, "--client", "vscode", "--yes")
    assert json.loads(vscode.read_text())["servers"]["x"] == {"url": "http://a//b"}


BOM = b"\xef\xbb\xbf"


def test_init_reads_files_saved_with_a_byte_order_mark_and_keeps_their_entries(
    tmp_path: Path,
) -> None:
    """Windows editors and PowerShell's `Set-Content -Encoding UTF8` start a file with a UTF-8
    byte order mark; init refused such a settings file as "not valid JSON (Unexpected UTF-8
    BOM …)". It reads them, keeps the user's entries and writes them back without the mark."""
    mine = {"type": "command", "command": "~/bin/log-prompt.sh"}
    claude = {
        "permissions": {"allow": ["Bash(ls)"]},
        "hooks": {"UserPromptSubmit": [{"hooks": [mine]}]},
    }
    files = {
        ".claude/settings.local.json": json.dumps(claude, indent=2),
        ".mcp.json": json.dumps({"mcpServers": {"github": {"command": "gh-mcp"}}}),
        ".vscode/mcp.json": '{\n  "servers": {"github": {"type": "http", "url": "https://x/"}},\n}\n',
        ".codex/config.toml": '# mine\nmodel = "o3"\n',
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(BOM + text.encode())
    init(tmp_path, "--client", "all", "--yes")
    for name in files:
        assert not (tmp_path / name).read_bytes().startswith(BOM), name
    settings = json.loads((tmp_path / ".claude/settings.local.json").read_text())
    assert settings["permissions"] == claude["permissions"]
    mine_kept, ours = settings["hooks"]["UserPromptSubmit"]
    assert mine_kept == {"hooks": [mine]} and "hook/script.py" in ours["hooks"][0]["command"]
    assert set(json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]) == {
        "github",
        "briefd",
    }
    assert set(json.loads((tmp_path / ".vscode/mcp.json").read_text())["servers"]) == {
        "github",
        "briefd",
    }
    codex = (tmp_path / ".codex/config.toml").read_text()
    assert codex.startswith("# mine\n") and tomllib.loads(codex)["model"] == "o3"
    assert "already configured" in init(tmp_path, "--client", "all", "--yes")
