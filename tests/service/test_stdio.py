"""``briefd mcp``: the same tools as ``/mcp``, over stdio, through the SDK's own stdio client
spawning the real command (both protocol eras), with its calls logged like the HTTP ones."""

from __future__ import annotations

import json
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator
from contextlib import chdir, contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import get_default_environment
from mcp_types import Tool
from typer.testing import CliRunner

from briefd.api import Briefd
from briefd.cli.main import app
from briefd.hook import main as hook_main
from briefd.service import create_app
from briefd.settings import Settings, load_settings
from tests import zygote
from tests.ports import free_port
from tests.service.conftest import service_config, service_settings_for
from tests.service.live import serving
from tests.service.test_mcp import ALL_TOOLS, MODES, READ_ONLY
from tests.service.test_mcp import run as run_http
from tests.service.test_mcp import url as http_url

__all__ = ["http_url"]  # the HTTP app's /mcp, to compare the tool lists


def child_env(**env: str) -> dict[str, str]:
    """The environment of a spawned ``briefd mcp``: the SDK passes on only HOME, PATH and a
    few more, so a PYTHONPATH (this suite run from a git worktree) is handed on too, or the
    child would run the installed briefd rather than the one under test."""
    path = os.environ.get("PYTHONPATH")
    return {**({"PYTHONPATH": path} if path else {}), **env}


def stdio(settings: Settings, cwd: Path, *args: str) -> StdioServerParameters:
    env = child_env(BRIEFD_SOURCE=str(settings.source), BRIEFD_EMBEDDINGS__ENABLED="false")
    spawned = {**get_default_environment(), **env}  # what the SDK's client hands the process
    command, arguments = zygote.command(["--db", str(settings.db), "mcp", *args], spawned)
    return StdioServerParameters(
        command=command,
        args=arguments,
        env=env,
        cwd=cwd,
    )


def session(params: StdioServerParameters, mode: str, body: Any) -> Any:
    async def main() -> Any:
        async with Client(params, mode=mode) as client:
            return await body(client)

    return anyio.run(main)


def shape(tools: list[Tool]) -> dict[str, Any]:
    return {t.name: (t.description, t.input_schema, t.output_schema, t.annotations) for t in tools}


@pytest.mark.parametrize("mode", MODES)
def test_stdio_serves_the_tools_of_http_mcp(
    service_settings: Settings, tmp_path: Path, http_url: str, mode: str
) -> None:
    async def body(client: Client) -> Any:
        tools = (await client.list_tools()).tools
        search = await client.call_tool("search_context", {"query": "soft decline retries"})
        bundle = await client.call_tool(
            "compile_bundle", {"task_description": "refund a captured card payment"}
        )
        wrong = await client.call_tool("search_context", {"query": "x", "scopes": ["nope"]})
        return client.instructions, tools, search, bundle, wrong

    instructions, tools, search, bundle, wrong = session(
        stdio(service_settings, tmp_path, "--no-index"), mode, body
    )
    assert instructions is not None and "45 documents" in instructions
    assert {t.name for t in tools} == ALL_TOOLS
    assert {t.name for t in tools if t.annotations and t.annotations.read_only_hint} == READ_ONLY

    async def http_tools(client: Client) -> list[Tool]:
        return (await client.list_tools()).tools

    assert shape(tools) == shape(run_http(http_url, mode, http_tools))

    hits = search.structured_content["hits"]
    assert hits and hits[0]["doc_path"].startswith("domain/")
    assert "retry" in search.content[0].text.lower()
    assert bundle.structured_content["items"]
    assert "refund" in bundle.content[0].text.lower()
    assert wrong.is_error and "nope" in wrong.content[0].text


def test_stdio_calls_are_logged_and_counted(service_settings: Settings, tmp_path: Path) -> None:
    async def body(client: Client) -> None:
        await client.call_tool("search_context", {"query": "chargeback evidence deadline"})

    session(stdio(service_settings, tmp_path, "--no-index"), "legacy", body)
    with Briefd(service_settings, embedder=None) as api:
        assert [(e.kind, e.query) for e in api.state.recent_queries()] == [
            ("search", "chargeback evidence deadline")
        ]
        counters = api.counters()
    requests = {labels: n for (name, labels), n in counters.items() if "requests" in name}
    assert any('"search_context"' in labels and n == 1 for labels, n in requests.items()), counters


def test_stdio_indexes_the_source_first(tmp_path: Path, write_files: Any) -> None:
    root = write_files({"domain/kiwi.md": "# Kiwi settlement\n\nKiwi batches settle at noon.\n"})
    settings = service_settings_for(root, tmp_path / "fresh.db")

    async def body(client: Client) -> Any:
        return await client.call_tool("search_context", {"query": "kiwi settlement batches"})

    result = session(stdio(settings, tmp_path), "auto", body)
    assert result.structured_content["hits"][0]["doc_path"] == "domain/kiwi.md"


def test_init_writes_a_stdio_entry_that_works_as_written(
    service_settings: Settings, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    args = ["--db", str(service_settings.db), "init", "--project", str(project)]
    done = CliRunner().invoke(app, [*args, "--client", "all", "--transport", "stdio", "--yes"])
    assert done.exit_code == 0, done.output
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["briefd"]
    assert entry["type"] == "stdio"
    assert entry["args"] == ["--db", str(service_settings.db.resolve()), "mcp"]
    cursor = json.loads((project / ".cursor" / "mcp.json").read_text())["mcpServers"]["briefd"]
    vscode = json.loads((project / ".vscode" / "mcp.json").read_text())["servers"]["briefd"]
    codex = tomllib.loads((project / ".codex" / "config.toml").read_text())["mcp_servers"]
    for other in (cursor, vscode, codex["briefd"]):
        assert (other["command"], other["args"]) == (entry["command"], entry["args"])

    params = StdioServerParameters(
        command=entry["command"],
        args=entry["args"],
        env=child_env(BRIEFD_EMBEDDINGS__ENABLED="false"),
        cwd=tmp_path,  # anywhere: the entry names the index
    )

    async def body(client: Client) -> Any:
        return await client.call_tool("search_context", {"query": "partial refunds"})

    result = session(params, "auto", body)
    assert result.structured_content["hits"][0]["doc_path"] == "domain/refunds.md"


def test_init_stdio_entry_reads_the_projects_index_wherever_it_is_spawned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A project with its own briefd.yaml (no `db:`): the entry named only that file, so the
    default index went where the client spawned `briefd mcp` (a home folder, `/`): a second
    index built there from the source, apart from the one the project's hook and serve read."""
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    (project / "knowledge" / "domain").mkdir(parents=True)
    elsewhere.mkdir()
    (project / "knowledge" / "domain" / "kiwi.md").write_text("# Kiwi\n\nKiwi settles at noon.\n")
    (project / "briefd.yaml").write_text("source: knowledge\nembeddings:\n  enabled: false\n")
    monkeypatch.chdir(project)
    assert CliRunner().invoke(app, ["index"]).exit_code == 0
    monkeypatch.chdir(tmp_path)  # init from elsewhere, as the client spawns from elsewhere
    args = ["init", "--project", str(project), "--client", "cursor", "--transport", "stdio"]
    done = CliRunner().invoke(app, [*args, "--yes"], env={"BRIEFD_CONFIG": None})
    assert done.exit_code == 0, done.output
    entry = json.loads((project / ".cursor" / "mcp.json").read_text())["mcpServers"]["briefd"]
    params = StdioServerParameters(
        command=entry["command"],
        args=entry["args"],
        env=child_env(HOME=str(elsewhere)),
        cwd=elsewhere,
    )

    async def body(client: Client) -> Any:
        return await client.call_tool("search_context", {"query": "kiwi settles"})

    found = session(params, "auto", body)
    assert found.structured_content["hits"][0]["doc_path"] == "domain/kiwi.md"
    assert not (elsewhere / ".briefd").exists()
    with Briefd(load_settings(project / "briefd.yaml", project=project), embedder=None) as api:
        assert [e.query for e in api.state.recent_queries()] == ["kiwi settles"]


def test_init_says_when_the_stdio_entry_has_no_index_to_serve(
    service_settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stdio entry for a project without an index or a source: the spawned `briefd mcp`
    stops at start (only the client's MCP log would say why), so init says so and how to
    build it; once the index is there, nothing is said."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(tmp_path)  # no briefd.yaml around (this repository has one)
    args = ["init", "--project", str(project), "--client", "cursor", "--transport", "stdio"]
    done = CliRunner().invoke(app, [*args, "--yes"], env={"BRIEFD_SOURCE": None})
    assert done.exit_code == 0, done.output
    db = project / ".briefd" / "briefd.db"
    entry = json.loads((project / ".cursor" / "mcp.json").read_text())["mcpServers"]["briefd"]
    spawned = subprocess.run(
        [entry["command"], *entry["args"]],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "BRIEFD_EMBEDDINGS__ENABLED": "false", "HOME": str(tmp_path)},
        timeout=60,
        check=False,
    )
    assert spawned.returncode == 1 and "nothing to serve" in spawned.stderr
    said = " ".join(done.output.split())
    assert (
        f"note: {db} holds no index yet and no source is configured, so the client's "
        f"`briefd mcp` stops at start; build it with `briefd --db {db} index --source DIR`"
    ) in said

    db.parent.mkdir()
    shutil.copyfile(service_settings.db, db)
    again = CliRunner().invoke(app, [*args, "--yes"], env={"BRIEFD_SOURCE": None})
    assert again.exit_code == 0 and "note:" not in again.output


def test_init_points_http_clients_at_a_team_server(tmp_path: Path) -> None:
    args = ["init", "--project", str(tmp_path), "--client", "all", "--yes"]
    done = CliRunner().invoke(app, [*args, "--url", "https://briefd.example.com/"])
    assert done.exit_code == 0, done.output
    entry = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["briefd"]
    assert entry["url"] == "https://briefd.example.com/mcp"
    assert entry["headers"] == {"Authorization": "Bearer ${BRIEFD_API_TOKEN:-}"}
    codex = tomllib.loads((tmp_path / ".codex" / "config.toml").read_text())
    assert codex["mcp_servers"]["briefd"]["url"] == "https://briefd.example.com/mcp"


def test_init_points_http_clients_at_a_server_bound_to_ipv6_loopback(
    service_api: Briefd, tmp_path: Path
) -> None:
    """serve.host ::1: the URL init writes for each client (and the one the hook finds in the
    project's briefd.yaml) puts the address in brackets, and the SDK's client reaches the
    server there as written."""
    with serving(create_app(service_api, service_config()), host="::1") as base:
        port = base.rsplit(":", 1)[1]
        (tmp_path / "briefd.yaml").write_text(f'serve:\n  host: "::1"\n  port: {port}\n')
        args = ["init", "--project", str(tmp_path), "--client", "all", "--yes"]
        done = CliRunner().invoke(app, args)
        assert done.exit_code == 0, done.output
        urls = {
            json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["briefd"]["url"],
            json.loads((tmp_path / ".cursor/mcp.json").read_text())["mcpServers"]["briefd"]["url"],
            json.loads((tmp_path / ".vscode/mcp.json").read_text())["servers"]["briefd"]["url"],
            tomllib.loads((tmp_path / ".codex/config.toml").read_text())["mcp_servers"]["briefd"][
                "url"
            ],
        }
        assert urls == {f"http://[::1]:{port}/mcp"}
        hooks = json.loads((tmp_path / ".claude" / "settings.local.json").read_text())
        command = shlex.split(hooks["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"])
        assert "--server" not in command  # the hook finds it in briefd.yaml, run in the project:
        with chdir(tmp_path):
            asked, _, _, _ = hook_main.server({}, {"HOME": str(tmp_path)})
        assert asked == f"http://[::1]:{port}"

        async def body(client: Client) -> list[Tool]:
            return (await client.list_tools()).tools

        assert {t.name for t in run_http(urls.pop(), "auto", body)} == ALL_TOOLS


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--transport", "stdio", "--url", "https://x"], "--url names a server for --transport"),
        (["--transport", "grpc"], "'--transport': 'grpc'; use http or stdio"),
        (["--url", "briefd.example.com"], "'--url': expected an http:// or https:// URL"),
    ],
)
def test_init_transport_mistakes_say_what_to_do(
    tmp_path: Path, args: list[str], message: str
) -> None:
    done = CliRunner().invoke(app, ["init", "--project", str(tmp_path), "--yes", *args])
    assert done.exit_code == 2  # a usage error, as click says a mistyped option
    assert message in done.output
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("command", ["mcp", "serve"])
def test_a_broken_index_served_as_it_is_is_one_line(tmp_path: Path, command: str) -> None:
    """`briefd mcp --no-index` (and `serve --no-index`) on a file that is no index: one line that
    says to rebuild, exit 1, nothing on stdout (the protocol's), no traceback."""
    db = tmp_path / "briefd.db"
    db.write_bytes(b"not a database, " * 400)
    extra = ["--port", str(free_port())] if command == "serve" else []
    done = subprocess.run(
        [sys.executable, "-m", "briefd", "--db", str(db), command, "--no-index", *extra],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "BRIEFD_EMBEDDINGS__ENABLED": "false", "HOME": str(tmp_path)},
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"error: {db} is not a usable briefd index (file is not a database); rebuild it with "
        "`briefd index --rebuild`\n"
    )


INITIALIZE = {"method": "initialize", "id": 1, "params": {"protocolVersion": "2025-11-25",
              "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}  # fmt: skip


@contextmanager
def spawned(settings: Settings, cwd: Path) -> Iterator[Callable[[str], Any]]:
    """`briefd mcp --no-index` in a real process, initialized; yields ``ask``, which writes
    one line (a message as its client would) and reads the answer line (None: a notification,
    or no answer within 10 s). Killed at the end whatever it did."""
    server = subprocess.Popen(
        [sys.executable, "-m", "briefd", "--db", str(settings.db), "mcp", "--no-index"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env={**os.environ, "BRIEFD_EMBEDDINGS__ENABLED": "false", "HOME": str(cwd)},
    )
    assert server.stdin and server.stdout and server.stderr

    def ask(line: str) -> Any:
        server.stdin.write(line.encode() + b"\n")  # type: ignore[union-attr]
        server.stdin.flush()  # type: ignore[union-attr]
        if '"id"' not in line.partition('"params"')[0]:
            return None
        ready, _, _ = select.select([server.stdout], [], [], 10)
        return json.loads(server.stdout.readline()) if ready else None  # type: ignore[union-attr]

    ask.server = server  # type: ignore[attr-defined]
    try:
        assert ask(json.dumps({"jsonrpc": "2.0", **INITIALIZE}))["id"] == 1
        ask('{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        yield ask
    finally:
        server.kill()
        for stream in (server.stdin, server.stdout, server.stderr):
            stream.close()
        server.wait()


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_server_with_its_calls_saved(
    service_settings: Settings, tmp_path: Path, stop: signal.Signals
) -> None:
    """Clients stop a server they spawned with SIGTERM (at once, or when it outlives a closed
    stdin), a terminal with Ctrl-C: `briefd mcp` saves the calls since its last periodic flush
    and exits while stdin is still open."""
    call = {"name": "search_context", "arguments": {"query": "chargeback evidence deadline"}}
    with spawned(service_settings, tmp_path) as ask:
        message = {"jsonrpc": "2.0", "method": "tools/call", "id": 2, "params": call}
        assert ask(json.dumps(message))["id"] == 2
        ask.server.send_signal(stop)
        code = ask.server.wait(10)
    with Briefd(service_settings, embedder=None) as api:
        logged = [(e.kind, e.query) for e in api.state.recent_queries()]
    assert logged == [("search", "chargeback evidence deadline")]
    assert code == 0


def test_a_request_the_sdk_cannot_read_is_answered_not_dropped(
    service_settings: Settings, tmp_path: Path
) -> None:
    """A lone surrogate escape (a client that cut a string inside an emoji) makes the SDK's
    parser refuse the line, which it dropped without a word: the client waited for ever.
    It is answered with the request's id, naming the argument as /mcp over HTTP does; so is
    a request of the wrong shape, and the session goes on."""
    call = '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": '
    with spawned(service_settings, tmp_path) as ask:
        lone = ask(call + '{"name": "search_context", "arguments": {"query": "iade \\ud83d"}}}')
        shaped = ask('{"jsonrpc": "2.0", "id": "b", "method": "tools/call", "params": [1]}')
        after = ask(call + '{"name": "list_scopes", "arguments": {}}}')
    assert lone == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {
            "code": -32602,
            "message": "message.params.arguments.query is not valid Unicode: a lone surrogate "
            "(U+D83D) at character 5; send the text as UTF-8 (in JSON, \\ud800–\\udfff "
            "escapes only as pairs)",
        },
    }
    assert shaped["id"] == "b" and shaped["error"]["message"] == (
        "not a JSON-RPC request this server reads (params: Input should be an object)"
    )
    assert after["id"] == 7 and "Scopes:" in after["result"]["content"][0]["text"]


def test_requests_piped_in_are_all_answered_before_it_stops(
    service_settings: Settings, tmp_path: Path
) -> None:
    """`printf '…' | briefd mcp`, as a script or a person trying it does: stdin ends right
    after the requests. The SDK cancelled what was still being worked on at the end of its
    input, so only the handshake was answered; every request read is answered now."""
    lines = [
        {"jsonrpc": "2.0", **INITIALIZE},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "search_context", "arguments": {"query": "chargeback evidence deadline"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "prompts/list"},
    ]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "briefd", "--db", str(service_settings.db), "mcp", "--no-index"],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "BRIEFD_EMBEDDINGS__ENABLED": "false", "HOME": str(tmp_path)},
        timeout=60,
        check=False,
    )
    answers = {answer["id"]: answer for answer in map(json.loads, done.stdout.splitlines())}
    assert sorted(answers) == [1, 2, 3], done.stdout
    assert "chargeback" in answers[2]["result"]["content"][0]["text"].lower()
    assert answers[3]["result"] == {"prompts": []}
    assert done.returncode == 0, done.stderr


def test_two_clients_servers_on_one_index_add_up_their_counts(
    service_settings: Settings, tmp_path: Path
) -> None:
    """Each client spawns its own `briefd mcp` (init writes the same entry for Claude Code,
    Cursor, VS Code and Codex): the counters both save add up, as the query log does, instead
    of the last one to save overwriting the other's."""
    params = stdio(service_settings, tmp_path, "--no-index")

    async def main() -> None:
        async with Client(params, mode="legacy") as one, Client(params, mode="legacy") as two:
            for n in range(3):
                await one.call_tool("search_context", {"query": f"chargeback evidence {n}"})
            for n in range(2):
                await two.call_tool("search_context", {"query": f"refund window {n}"})

    anyio.run(main)
    with Briefd(service_settings, embedder=None) as api:
        logged = len(api.state.recent_queries())
        counters = api.counters()
    counted = {labels: n for (name, labels), n in counters.items() if name == "briefd_requests"}
    ok = '{"name":"search_context","outcome":"ok","surface":"mcp"}'
    assert (logged, counted) == (5, {ok: 5.0})


def test_its_warnings_reach_the_clients_log_as_whole_lines(
    service_settings: Settings, tmp_path: Path
) -> None:
    """A client keeps its server's stderr in a log file (Claude Desktop: mcp-server-briefd.log):
    `briefd mcp`'s warnings went through the MCP SDK's rich handler, wrapped at 80 columns into
    padded pieces that no grep finds whole; each is one timestamped line, as `serve` writes."""
    (tmp_path / "briefd.yaml").write_text("default_scopes: [domain, runbooks]\n")
    done = subprocess.run(
        [sys.executable, "-m", "briefd", "--db", str(service_settings.db), "mcp", "--no-index"],
        input=json.dumps({"jsonrpc": "2.0", **INITIALIZE}) + "\n",
        capture_output=True, text=True, cwd=tmp_path, timeout=60, check=False,
        env={**os.environ, "BRIEFD_EMBEDDINGS__ENABLED": "false", "HOME": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["id"] == 1  # stdout: the protocol alone
    warned = [line for line in done.stderr.splitlines() if "runbooks" in line]
    assert len(warned) == 1, done.stderr
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\d [\d:,]+ WARNING default scope 'runbooks' is not in this index, so "
        r"searches without scopes read .+; set default_scopes in briefd.yaml to scopes the "
        r"index has",
        warned[0],
    ), done.stderr


def test_init_says_when_nothing_serves_its_http_entry(service_api: Briefd, tmp_path: Path) -> None:
    """A new user's `briefd init` writes an http entry for this machine's server (the default
    transport); before `briefd serve` runs there, the client only reports a failed connection,
    so init says what to run. With the server up (and for a team server's --url), nothing."""
    port = free_port()
    (tmp_path / "briefd.yaml").write_text(f"serve:\n  port: {port}\n")
    args = ["init", "--project", str(tmp_path), "--yes"]
    with chdir(tmp_path):
        done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    assert (
        f"note: nothing answers at http://127.0.0.1:{port}/mcp now; the client connects once "
        "`briefd serve` runs (in another terminal, or as a service), or run `briefd init "
        "--transport stdio` and the client starts `briefd mcp` itself"
    ) in " ".join(done.output.split())

    with serving(create_app(service_api, service_config())) as base, chdir(tmp_path):
        (tmp_path / "briefd.yaml").write_text(f"serve:\n  port: {base.rsplit(':', 1)[1]}\n")
        again = CliRunner().invoke(app, args)
    assert again.exit_code == 0 and "note:" not in again.output, again.output
    team = CliRunner().invoke(app, [*args, "--url", "http://127.0.0.1:1/"])
    assert team.exit_code == 0 and "note:" not in team.output, team.output
    kept = CliRunner().invoke(app, args)  # the entry stays the team's: no client names ours
    assert kept.exit_code == 0 and "kept its briefd server" in kept.output
    assert "note:" not in kept.output, kept.output


def test_the_stdio_line_init_gives_writes_the_same_clients_and_project(tmp_path: Path) -> None:
    """`briefd init --client cursor --project ../app` from another folder said to run `briefd
    init --transport stdio`: pasted there, it wrote Claude Code's files into that folder and
    left Cursor's entry on http."""
    project, elsewhere = tmp_path / "app", tmp_path / "elsewhere"
    project.mkdir(), elsewhere.mkdir()
    (project / "briefd.yaml").write_text(f"source: knowledge\nserve:\n  port: {free_port()}\n")
    with chdir(elsewhere):
        done = CliRunner().invoke(app, ["init", "--client", "cursor", "--project", "../app", "-y"])
        assert done.exit_code == 0, done.output
        line = re.findall(r"or run `([^`]*)`", " ".join(done.output.split()))
        assert line == ["briefd init --transport stdio --client cursor --project ../app"]
        pasted = CliRunner().invoke(app, [*shlex.split(line[0])[1:], "-y"])
    assert pasted.exit_code == 0, pasted.output
    assert list(elsewhere.iterdir()) == []
    entry = json.loads((project / ".cursor" / "mcp.json").read_text())["mcpServers"]["briefd"]
    assert entry["args"][-1] == "mcp" and "url" not in entry, entry


def test_with_nothing_to_serve_it_says_how_a_stdio_client_reaches_the_example(
    tmp_path: Path,
) -> None:
    """`briefd mcp` with no source and no index said "run `briefd demo`", which serves HTTP: a
    client that spawns `briefd mcp` is no nearer. It names the index demo builds and the
    command to give the client; `briefd serve` keeps pointing at demo itself."""
    data = tmp_path / "data home"
    env = {**os.environ, "HOME": str(tmp_path), "XDG_DATA_HOME": str(data)}
    env["PATH"] = os.pathsep.join(  # another briefd, or none, on PATH: this one by its path
        p for p in env.get("PATH", "").split(os.pathsep) if Path(p) != Path(sys.executable).parent
    )
    env.pop("BRIEFD_SOURCE", None)
    spawned = subprocess.run(
        [sys.executable, "-m", "briefd", "mcp"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
        check=False,
    )
    demo = shlex.quote(str(data / "briefd" / "demo" / "briefd.db"))
    said = " ".join(spawned.stderr.split())
    assert spawned.returncode == 1 and spawned.stdout == ""  # stdout is the protocol's
    # briefd by its full path (a desktop client does not get the shell's PATH), as init writes
    script = Path(sys.executable).with_name("briefd")
    assert f"give the client `{shlex.quote(str(script))} --db {demo} mcp --no-index`" in said
    assert f"run `{shlex.quote(str(script))} demo` once (it indexes the example into {demo};" in (
        said
    )
    without_path = {**env, "PATH": str(tmp_path / "no-bin")}  # as a desktop client runs it
    version = subprocess.run(
        [str(script), "version"], env=without_path, capture_output=True, text=True, timeout=60
    )
    assert version.returncode == 0 and version.stdout.startswith("briefd "), version.stderr
    # where it looked, in full: the client, not the user, chose the folder it runs in
    assert f"configured and {tmp_path / '.briefd' / 'briefd.db'} holds no index." in said
