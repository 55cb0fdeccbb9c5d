"""``briefd init``: idempotent config files, and a hook command that works as written."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

import briefd.hook
from briefd.api import Briefd
from briefd.cli.main import app
from briefd.hook import clients
from tests.hook.conftest import hook_json
from tests.recall.conftest import RELEVANT

runner = CliRunner()
REMOTE = "http://10.0.0.5:8484"


def run_init(project: Path, *args: str) -> Result:
    """``briefd init --project PROJECT ARGS…`` in process, whatever its exit code."""
    return runner.invoke(app, ["init", "--project", str(project), *args])


def init(project: Path, *args: str) -> str:
    """What ``briefd init --project PROJECT ARGS…`` prints, having succeeded."""
    result = run_init(project, *args)
    assert result.exit_code == 0, result.output
    return result.output


def placed(project: Path, name: str) -> Path:
    """``project / name`` (``.codex/config.toml``), its folder made: a client's config file
    about to be written by hand or by ``briefd init``."""
    path = project / name
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def hand_written(project: Path, entry: dict[str, object], codex: str) -> tuple[Path, Path]:
    """The user's own ``briefd`` entries: ``entry`` in ``.mcp.json``, ``codex`` as Codex's
    ``config.toml``; their paths."""
    mcp = project / ".mcp.json"
    mcp.write_text(json.dumps({"mcpServers": {"briefd": entry}}, indent=1))
    toml = placed(project, ".codex/config.toml")
    toml.write_text(codex)
    return mcp, toml


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
        ".mcp.json",
        ".vscode/mcp.json",
    ]
    assert "already configured" in init(tmp_path, "--client", "all", "--yes")
    assert snapshot(tmp_path) == first
    mcp = json.loads(first[".mcp.json"])
    assert mcp["mcpServers"]["briefd"]["url"] == "http://127.0.0.1:8484/mcp"


def test_init_with_several_clients_writes_each_ones_files(tmp_path: Path) -> None:
    """``--client cursor --client codex`` wrote Codex's files alone (the last value won, as
    click keeps it), without a word about Cursor."""
    said = init(tmp_path, "--client", "cursor", "--client", "codex", "--yes")
    assert sorted(snapshot(tmp_path)) == [
        ".codex/config.toml",
        ".codex/hooks.json",
        ".cursor/mcp.json",
    ]
    assert "Cursor: MCP server only" in said and "Codex: hooks are on" in said
    assert "already configured" in init(tmp_path, "--client", "codex", "--client", "cursor", "-y")


def test_init_takes_several_clients_comma_separated(tmp_path: Path) -> None:
    """``--client cursor,codex`` (as --scopes and --tags take lists) was refused: "Invalid
    value for '--client': 'cursor,codex'; use claude-code, cursor, codex, vscode or all",
    which named no way to give several. It is the two clients now; a name it does not know
    is still a usage error."""
    said = init(tmp_path, "--client", "cursor, codex", "--yes")
    assert sorted(snapshot(tmp_path)) == [
        ".codex/config.toml",
        ".codex/hooks.json",
        ".cursor/mcp.json",
    ]
    assert "Cursor: MCP server only" in said and "Codex: hooks are on" in said
    wrong = runner.invoke(app, ["init", "--project", str(tmp_path), "--client", "cursor,emacs"])
    assert wrong.exit_code == 2 and "'emacs'; use claude-code, cursor" in wrong.output


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


def test_the_hook_reads_the_settings_file_named_to_init(
    tmp_path: Path, indexed: Briefd, hook_env: dict[str, str]
) -> None:
    """``briefd --config FILE init``: the stdio entry names FILE, and so does the hook beside
    it; without it the hook read the project's settings (none here: the default index, which
    does not exist) and answered every prompt with nothing."""
    team = tmp_path / "team"
    team.mkdir()
    indexed.close()
    indexed.settings.db.rename(team / "team.db")
    config = team / "briefd.yaml"
    config.write_text("db: team.db\nembeddings: {enabled: false}\n")
    project = tmp_path / "project"
    project.mkdir()
    args = ["init", "--project", str(project), "--transport", "stdio", "--yes"]
    result = runner.invoke(app, ["--config", str(config), *args])
    assert result.exit_code == 0, result.output
    mcp = json.loads((project / ".mcp.json").read_text())["mcpServers"]["briefd"]
    assert mcp["args"][-3:] == ["--config", str(config.resolve()), "mcp"]
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
    assert done.stdout.startswith("<knowledge>"), done.stderr
    assert command.endswith(f" --config {config.resolve()}")


def recall_hooks(project: Path, files: list[str], event: str) -> list[str]:
    """The recall commands a client registers for ``event``, reading ``files`` (globs) the way
    its documentation says it loads hooks: grouped (``{"hooks": [...]}``) or flat entries."""
    commands = []
    for pattern in files:
        for path in sorted(project.glob(pattern)):
            for entry in json.loads(path.read_text()).get("hooks", {}).get(event, []):
                for hook in entry.get("hooks", [entry]):
                    if clients._ours(hook.get("command")):
                        commands.append(hook["command"])
    return commands


def test_init_all_gives_every_client_one_recall_hook_at_most(tmp_path: Path) -> None:
    output = init(tmp_path, "--client", "all", "--yes")
    claude = [".claude/settings.json", ".claude/settings.local.json"]
    (claude_hook,) = recall_hooks(tmp_path, claude, "UserPromptSubmit")
    script = Path(briefd.hook.__file__).with_name("script.py").resolve()
    assert shlex.split(claude_hook) == [sys.executable, "-S", "-P", str(script)]
    (codex_hook,) = recall_hooks(tmp_path, [".codex/hooks.json"], "UserPromptSubmit")
    assert codex_hook == f"{claude_hook} --format claude-json"
    # VS Code loads .github/hooks/*.json and the Claude Code files: the Claude hook, once
    vscode = recall_hooks(tmp_path, [".github/hooks/*.json", *claude], "UserPromptSubmit")
    assert vscode == [claude_hook]
    assert recall_hooks(tmp_path, [".cursor/hooks.json"], "beforeSubmitPrompt") == []
    assert "VS Code: MCP server only" in output and "cannot add context" in output
    assert "Cursor: MCP server only" in output


def test_written_hooks_answer_each_client_in_its_documented_form(
    tmp_path: Path, indexed: Briefd, hook_env: dict[str, str]
) -> None:
    init(tmp_path, "--client", "all", "--yes")
    claude = [".claude/settings.local.json"]
    (claude_hook,) = recall_hooks(tmp_path, claude, "UserPromptSubmit")
    (codex_hook,) = recall_hooks(tmp_path, [".codex/hooks.json"], "UserPromptSubmit")

    def run(command: str, payload: dict[str, object]) -> str:
        done = subprocess.run(
            command,
            shell=True,
            input=json.dumps({"prompt": RELEVANT, "cwd": str(tmp_path), **payload}),
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=hook_env,
            check=True,
        )
        assert done.stderr == ""
        return done.stdout

    claude_payload = {"session_id": "c-1", "hook_event_name": "UserPromptSubmit"}
    assert run(claude_hook, claude_payload).startswith("<knowledge>")
    codex_payload = {"session_id": "x-1", "hook_event_name": "UserPromptSubmit", "turn_id": "t"}
    codex_payload |= {"model": "gpt-5", "permission_mode": "default", "transcript_path": None}
    output = json.loads(run(codex_hook, codex_payload))["hookSpecificOutput"]
    assert output["hookEventName"] == "UserPromptSubmit"
    assert "Merchants have 7 calendar days" in output["additionalContext"]
    vscode_payload = {"sessionId": "v-1", "hookEventName": "UserPromptSubmit"}
    vscode_payload |= {"timestamp": "2026-12-01T10:30:00.000Z"}
    assert run(claude_hook, vscode_payload) == ""
    cursor_payload = {"conversation_id": "k-1", "hook_event_name": "beforeSubmitPrompt"}
    assert run(claude_hook, {**cursor_payload, "workspace_roots": [str(tmp_path)]}) == ""


def test_init_removes_the_vscode_hook_an_earlier_init_wrote(tmp_path: Path) -> None:
    old = tmp_path / ".github" / "hooks" / "briefd.json"
    old.parent.mkdir(parents=True)
    entry = {"type": "command", "command": "/venv/bin/briefd recall --format claude-json"}
    old.write_text(json.dumps({"hooks": {"UserPromptSubmit": [entry]}}))
    assert "removed" in init(tmp_path, "--client", "vscode", "--yes")
    assert not old.exists()
    other = {"type": "command", "command": "./audit.sh"}
    old.write_text(json.dumps({"hooks": {"UserPromptSubmit": [entry, other]}}))
    init(tmp_path, "--client", "vscode", "--yes")
    assert json.loads(old.read_text()) == {"hooks": {"UserPromptSubmit": [other]}}


def test_init_replaces_the_console_script_hook_of_an_earlier_release(tmp_path: Path) -> None:
    settings = placed(tmp_path, ".claude/settings.local.json")
    old = {"type": "command", "command": "/venv/bin/briefd recall", "timeout": 5}
    settings.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [old]}]}}))
    init(tmp_path, "--client", "claude-code", "--yes")
    (group,) = json.loads(settings.read_text())["hooks"]["UserPromptSubmit"]
    (entry,) = group["hooks"]
    assert entry["command"].endswith("script.py") and "-S -P" in entry["command"]


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
    assert groups[0]["hooks"] == [other] and "script.py" in groups[1]["hooks"][0]["command"]
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
    broken = run_init(tmp_path, "--yes")
    assert broken.exit_code == 1
    assert f"{tmp_path / '.mcp.json'}: the MCP config file is not valid JSON" in broken.output
    (tmp_path / ".mcp.json").unlink()
    unasked = run_init(tmp_path)
    assert unasked.exit_code == 1
    assert "error: nothing written: init asks before it writes" in unasked.output
    assert not (tmp_path / ".mcp.json").exists()


def test_init_with_no_terminal_to_ask_on_says_so_on_stderr(tmp_path: Path) -> None:
    """In a CI job or a script, init printed the diff and 'Nothing written (pass --yes …)' on
    stdout, exit 1, and nothing on stderr, where every other failure says why."""
    done = subprocess.run(
        [sys.executable, "-m", "briefd", "init", "--project", str(tmp_path)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (
        1,
        "error: nothing written: init asks before it writes, and stdin is not a terminal to "
        "ask on; pass --yes to write without asking\n",
    )
    assert done.stdout.startswith("--- /dev/null\n") and "Nothing written" not in done.stdout
    assert list(tmp_path.iterdir()) == []


def test_init_refuses_a_project_directory_that_does_not_exist(tmp_path: Path) -> None:
    """A value refused before anything is read exits 2 (README); --project's exited 1."""
    missing = tmp_path / "checkuot"
    result = subprocess.run(
        [sys.executable, "-m", "briefd", "init", "--project", str(missing), "--client", "all"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.stderr == (
        f"error: Invalid value for '--project': {missing} is not a directory; pass the "
        "project's checkout; see `briefd init -h`\n"
    )
    assert result.returncode == 2
    assert not missing.exists()


def test_init_reaches_a_server_bound_to_every_interface_on_loopback() -> None:
    """`serve.host: "0"` or `"::0"` binds every interface as 0.0.0.0 and :: do; init wrote
    http://0:8484/mcp and http://[::0]:8484/mcp, addresses no client connects to."""
    from briefd.cli.init import mcp_url
    from briefd.settings import load_settings

    for host in ("0.0.0.0", "0", "::", "::0"):
        settings = load_settings(env={"BRIEFD_SERVE__HOST": host})
        assert mcp_url(settings) == "http://127.0.0.1:8484/mcp", host
    assert mcp_url(load_settings(env={"BRIEFD_SERVE__HOST": "::1"})) == "http://[::1]:8484/mcp"


def test_init_says_when_git_would_commit_the_local_hook_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``.claude/settings.local.json`` names this machine's Python. Claude Code has git ignore
    it when it makes the file itself, not when init does: after init, ``git status`` offered it
    for commit as ``.claude/`` and init said nothing, and a teammate who pulls it runs a hook
    that is not on their machine."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    said = init(tmp_path, "--yes")
    local = tmp_path / ".claude" / "settings.local.json"
    assert (
        f"note: {local} names this machine's Python, and git does not ignore it: add "
        ".claude/settings.local.json to .gitignore, or a teammate who gets it through git runs "
        "a hook their machine does not have"
    ) in " ".join(said.split())
    git = ["git", "-C", str(tmp_path)]
    subprocess.run([*git, "add", ".claude/settings.local.json"], check=True)
    monkeypatch.chdir(tmp_path)  # from inside the project: git finds it
    tracked = " ".join(init(tmp_path, "--yes").split())
    assert "and git tracks it: `git rm --cached .claude/settings.local.json`, then add" in tracked
    subprocess.run([*git, "rm", "-q", "--cached", ".claude/settings.local.json"], check=True)
    (tmp_path / ".gitignore").write_text(".claude/settings.local.json\n")
    assert "names this machine's Python" not in init(tmp_path, "--yes")


def test_the_git_command_init_gives_from_another_folder_works_there(tmp_path: Path) -> None:
    """From another folder with --project, init said `git rm --cached .claude/…`, which fails
    there ("not a git repository", or another repository's file): it names the project."""
    project, elsewhere = tmp_path / "my project", tmp_path / "elsewhere"
    elsewhere.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    init(project, "--yes")
    git = ["git", "-C", str(project)]
    subprocess.run([*git, "add", ".claude/settings.local.json"], check=True)
    said = subprocess.run(
        [sys.executable, "-m", "briefd", "init", "--project", str(project), "--yes"],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        timeout=60,
    )
    line = " ".join(said.stdout.split())
    command = f"git -C {shlex.quote(str(project))} rm --cached .claude/settings.local.json"
    assert f"and git tracks it: `{command}`, then add" in line
    done = subprocess.run(command, shell=True, cwd=elsewhere, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    listed = subprocess.run([*git, "ls-files"], capture_output=True, text=True, check=True)
    assert ".claude/settings.local.json" not in listed.stdout


def test_init_says_when_git_would_commit_codexs_hook_file(tmp_path: Path) -> None:
    """``.codex/hooks.json`` names this machine's Python as Claude Code's local settings do,
    and nothing has git ignore it: init said so for Claude Code's file only, and a teammate
    who pulls ``.codex/`` (a project's Codex config is there to share) runs a hook their
    machine does not have, on every prompt."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    said = " ".join(init(tmp_path, "--client", "codex", "--yes").split())
    hooks = tmp_path / ".codex" / "hooks.json"
    assert (
        f"note: {hooks} names this machine's Python, and git does not ignore it: add "
        ".codex/hooks.json to .gitignore, or a teammate who gets it through git runs a hook "
        "their machine does not have"
    ) in said
    assert ".claude" not in said
    (tmp_path / ".gitignore").write_text(".codex/hooks.json\n")
    assert "names this machine's Python" not in init(tmp_path, "--client", "codex", "--yes")


def test_codex_entry_names_a_token_only_when_one_is_to_be_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codex refuses to start an MCP server whose bearer_token_env_var is unset or empty
    ("Environment variable BRIEFD_API_TOKEN for MCP server 'briefd' is not set"), and this
    machine's `briefd serve` runs without a token unless one is set: init's .codex/config.toml
    gave a new user a briefd server Codex never started. The entry for this machine's server
    names the variable only when BRIEFD_API_TOKEN is set where init runs (an earlier init's
    line is removed); a server named with --url (a team's) always has it."""
    monkeypatch.delenv("BRIEFD_API_TOKEN", raising=False)
    config = placed(tmp_path, ".codex/config.toml")
    config.write_text(  # an earlier init's entry
        '[mcp_servers.briefd]\nurl = "http://127.0.0.1:8484/mcp"\n'
        'bearer_token_env_var = "BRIEFD_API_TOKEN"\n'
    )
    said = " ".join(init(tmp_path, "--client", "codex", "--yes").split())
    assert tomllib.loads(config.read_text())["mcp_servers"]["briefd"] == {
        "url": "http://127.0.0.1:8484/mcp"
    }
    assert "Codex: .codex/config.toml sends no token (no BRIEFD_API_TOKEN is set here" in said
    monkeypatch.setenv("BRIEFD_API_TOKEN", "s3cret")
    said = init(tmp_path, "--client", "codex", "--yes")
    briefd = tomllib.loads(config.read_text())["mcp_servers"]["briefd"]
    assert briefd["bearer_token_env_var"] == "BRIEFD_API_TOKEN"
    assert "sends no token" not in said
    monkeypatch.delenv("BRIEFD_API_TOKEN")
    init(tmp_path, "--client", "codex", "--yes", "--url", "https://briefd.example.com")
    briefd = tomllib.loads(config.read_text())["mcp_servers"]["briefd"]
    assert briefd == {
        "url": "https://briefd.example.com/mcp",
        "bearer_token_env_var": "BRIEFD_API_TOKEN",
    }


def test_a_plain_http_team_server_is_told_to_get_nothing_from_the_hook(tmp_path: Path) -> None:
    """README: the hook never sends the token over plain http to another machine. init wrote
    an entry for ``--url http://10.0.0.5:8484`` without a word, and every prompt's hook then
    got nothing from that server, said only on the hook's stderr."""
    said = " ".join(init(tmp_path, "--client", "claude-code", "--yes", "--url", REMOTE).split())
    assert (
        "note: the prompt hook gets nothing from this server: BRIEFD_API_TOKEN is not sent to "
        "http://10.0.0.5:8484 in the clear"
    ) in said
    assert "ssh -N -L 8484:10.0.0.5:8484 10.0.0.5" in said
    for url in ("https://briefd.example.com", "http://127.0.0.1:8599"):
        shown = init(tmp_path, "--client", "claude-code", "--yes", "--url", url)
        assert "in the clear" not in shown


def test_codex_stdio_entry_waits_for_briefd_mcp_to_answer(tmp_path: Path) -> None:
    """Codex gives a spawned server 10 s to answer (its startup_timeout_sec default), then
    names it failed for the session; `briefd mcp` gives its index update up to
    serve.index_wait_seconds (20 s by default) before it answers, plus its own start-up. The
    stdio entry init writes waits longer; a wait the user set stays theirs."""
    from briefd.settings import ServeSettings

    config = tmp_path / ".codex" / "config.toml"
    init(tmp_path, "--client", "codex", "--transport", "stdio", "--yes")
    briefd = tomllib.loads(config.read_text())["mcp_servers"]["briefd"]
    assert briefd["args"][-1] == "mcp"
    assert briefd["startup_timeout_sec"] >= ServeSettings().index_wait_seconds + 10
    config.write_text(config.read_text().replace(f"= {briefd['startup_timeout_sec']}", "= 90"))
    init(tmp_path, "--client", "codex", "--transport", "stdio", "--yes")
    assert tomllib.loads(config.read_text())["mcp_servers"]["briefd"]["startup_timeout_sec"] == 90


def test_codex_waits_for_the_index_wait_the_projects_settings_give_briefd_mcp(
    tmp_path: Path,
) -> None:
    """serve.index_wait_seconds raised to 60 in the project's briefd.yaml: `briefd mcp` may
    then take a minute before it answers, and a Codex entry that waits 40 s named it failed."""
    (tmp_path / "briefd.yaml").write_text("serve:\n  index_wait_seconds: 60\n")
    init(tmp_path, "--client", "codex", "--transport", "stdio", "--yes")
    config = tmp_path / ".codex" / "config.toml"
    assert tomllib.loads(config.read_text())["mcp_servers"]["briefd"]["startup_timeout_sec"] == 80


def test_init_run_from_uvs_cache_says_the_hook_would_not_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """README's `uvx --from … briefd demo`, then `uvx --from … briefd init`: the hook (and a
    stdio entry) named a Python in uv's cache, which `uv cache clean` deletes, and init said
    nothing; after the next clean every prompt's hook failed to start."""
    monkeypatch.setenv("UV_CACHE_DIR", str(Path(sys.prefix).resolve().parent))
    said = " ".join(init(tmp_path, "--yes").split())
    assert (
        f"note: this briefd runs from uv's cache ({Path(sys.prefix).resolve()}), which `uv cache "
        "clean` deletes, and the hook and any stdio entry name its Python; install briefd to "
        "keep it (`uv tool install` or `pipx install`), then rerun init from there"
    ) in said
    assert "uv's cache" not in init(tmp_path, "--client", "cursor", "--yes")  # a URL only
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv"))
    assert "uv's cache" not in init(tmp_path, "--yes")
