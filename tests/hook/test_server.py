"""``POST /api/hook/recall`` through the real app, and the command asking a real server."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.hook import main
from briefd.service.app import create_app
from briefd.service.config import ServiceConfig
from briefd.settings import load_settings
from tests.hook.conftest import RunHook, hook_json
from tests.ports import free_port
from tests.recall.conftest import OFF_TOPIC, RELEVANT
from tests.service.live import serving
from tests.tls import self_signed

TOKEN = "recall-test-token"


@pytest.fixture
def client(indexed: Briefd) -> Iterator[TestClient]:
    app = create_app(indexed, ServiceConfig(token=TOKEN))
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with TestClient(app, base_url="http://127.0.0.1:8484", headers=headers) as test_client:
        yield test_client


def test_route_answers_with_hook_specific_output(client: TestClient) -> None:
    response = client.post("/api/hook/recall", json=hook_json(RELEVANT))
    assert response.status_code == 200
    out = response.json()
    assert out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    context = out["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("<knowledge>") and "Merchants have 7 calendar days" in context
    assert len(context) <= 10_000


def test_route_adds_nothing_off_topic_or_repeated(client: TestClient) -> None:
    assert client.post("/api/hook/recall", json=hook_json(OFF_TOPIC)).json() == {}
    client.post("/api/hook/recall", json=hook_json(RELEVANT, session="r"))
    assert client.post("/api/hook/recall", json=hook_json(RELEVANT, session="r")).json() == {}


def test_route_full_result_and_errors(client: TestClient) -> None:
    full = client.post("/api/hook/recall?format=json", json=hook_json(RELEVANT)).json()
    assert full["via"] == "server"
    assert full["sections"][0]["chunk_id"]
    bad = client.post("/api/hook/recall", json={"session_id": "x"})
    assert bad.status_code == 400
    assert bad.json()["detail"] == (
        "hook input has no 'prompt' string; send the prompt as 'prompt'"
    )
    anonymous = client.post(
        "/api/hook/recall", json=hook_json(RELEVANT), headers={"Authorization": ""}
    )
    assert anonymous.status_code == 401


@pytest.fixture
def live_server(indexed: Briefd) -> Iterator[str]:
    port = free_port()
    app = create_app(indexed, ServiceConfig(token=TOKEN, port=port))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started, "uvicorn did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def test_an_answer_the_hook_stopped_waiting_for_is_not_remembered_as_given(
    indexed: Briefd, run_hook: RunHook
) -> None:
    """I8: a server answering after the hook's recall.server_timeout (busy: another request
    held the index, or a long prompt's embedding) wrote the sections into the session memory
    though the hook had printed nothing: asked again, that session got nothing ("every
    matching section was already injected in this session")."""
    app = create_app(indexed, ServiceConfig(token=TOKEN))
    with serving(app) as url:
        env: dict[str, str | None] = {
            "BRIEFD_RECALL__SERVER": url,
            "BRIEFD_API_TOKEN": TOKEN,
            "BRIEFD_RECALL__SERVER_TIMEOUT": "1",
        }
        with app.state.briefd.lock:  # another request holds the index past the hook's second
            late = run_hook(payload=hook_json(RELEVANT, session="late"), env=env)
        assert late.stdout == "" and "did not answer within 1 s" in late.stderr
        deadline = time.monotonic() + 20
        while "briefd_tokens_served" not in str(app.state.briefd.metrics.snapshot_view()):
            assert time.monotonic() < deadline, "the late answer never came"
            time.sleep(0.05)
        asked = run_hook("--json", payload=hook_json(RELEVANT, session="late"), env=env)
        again = json.loads(asked.stdout)
    assert again["via"] == "server"
    assert again["sections"] and again["already_injected"] == 0, again["reason"]
    assert again["sections"][0]["doc_path"] == "domain/chargebacks.md"


def test_command_asks_a_running_server(live_server: str, run_hook: RunHook) -> None:
    env: dict[str, str | None] = {"BRIEFD_RECALL__SERVER": live_server, "BRIEFD_API_TOKEN": TOKEN}
    first = run_hook("--json", payload=hook_json(RELEVANT, session="live"), env=env)
    result = json.loads(first.stdout)
    assert result["via"] == "server", first.stderr
    assert result["sections"][0]["doc_path"] == "domain/chargebacks.md"
    block = run_hook(payload=hook_json(RELEVANT, session="live-2"), env=env)
    assert block.stdout == result["knowledge"]
    again = run_hook(payload=hook_json(RELEVANT, session="live"), env=env)
    assert (again.code, again.stdout) == (0, "")


def test_command_asks_a_server_on_ipv6_loopback(indexed: Briefd, run_hook: RunHook) -> None:
    """serve.host ::1: the hook reaches http://[::1]:PORT (the --server briefd init writes
    for it), sending the Host header in brackets as the server expects."""
    app = create_app(indexed, ServiceConfig(token=TOKEN, host="::1"))
    with serving(app, host="::1") as base:
        env: dict[str, str | None] = {"BRIEFD_RECALL__SERVER": base, "BRIEFD_API_TOKEN": TOKEN}
        run = run_hook("--json", payload=hook_json(RELEVANT, session="v6"), env=env)
    assert base.startswith("http://[::1]:")
    assert json.loads(run.stdout)["via"] == "server", run.stderr
    assert run.stderr == ""


def test_a_token_with_the_line_break_of_an_env_file_reaches_the_server(
    live_server: str, run_hook: RunHook
) -> None:
    """``briefd serve`` strips BRIEFD_API_TOKEN; the hook sent it as it came (a Windows-edited
    .env file's last ``\\r``) inside its header, a request the server could not parse: every
    prompt was answered from the local index, without a word, while the token was right."""
    env: dict[str, str | None] = {
        "BRIEFD_RECALL__SERVER": live_server,
        "BRIEFD_API_TOKEN": TOKEN + "\r",
    }
    run = run_hook("--json", payload=hook_json(RELEVANT, session="crlf"), env=env)
    assert json.loads(run.stdout)["via"] == "server", run.stderr


def test_wrong_token_falls_back_in_process(live_server: str, run_hook: RunHook) -> None:
    env: dict[str, str | None] = {"BRIEFD_RECALL__SERVER": live_server, "BRIEFD_API_TOKEN": "no"}
    run = run_hook("--json", RELEVANT, env=env)
    assert json.loads(run.stdout)["via"] == "in-process"
    assert run.stderr == (  # said, so a wrong token does not pass unnoticed
        f"briefd recall: briefd server at {live_server} answered 401 Unauthorized; set "
        "BRIEFD_API_TOKEN to the server's token (answered from the local index meanwhile)\n"
    )


def test_a_token_no_header_can_carry_is_said_without_being_shown(
    indexed: Briefd, live_server: str, run_hook: RunHook, tmp_path: Path
) -> None:
    """A token of two lines went into the request as it was: over http:// a header that
    broke the request (answered locally without a word), over https:// an error quoting the
    header, token and all, on the agent's stderr ("Invalid header value b'Bearer …'")."""
    said = (
        "briefd recall: BRIEFD_API_TOKEN holds a character (character 12: a line break) that an "
        "HTTP header cannot carry; set BRIEFD_API_TOKEN to the server's token (answered from "
        "the local index meanwhile)\n"
    )
    env: dict[str, str | None] = {"BRIEFD_API_TOKEN": "recall-test\ntoken"}
    env["BRIEFD_RECALL__SERVER"] = live_server
    run = run_hook("--json", payload=hook_json(RELEVANT, session="http"), env=env)
    assert (json.loads(run.stdout)["via"], run.stderr) == ("in-process", said)
    key, cert = self_signed(tmp_path)
    app = create_app(indexed, ServiceConfig(token=TOKEN))
    with serving(app, ssl_keyfile=str(key), ssl_certfile=str(cert)) as base:
        env.update(BRIEFD_RECALL__SERVER=base, SSL_CERT_FILE=str(cert))
        run = run_hook("--json", payload=hook_json(RELEVANT, session="tls"), env=env)
    assert (json.loads(run.stdout)["via"], run.stderr) == ("in-process", said)


def test_a_token_with_a_space_inside_still_reaches_the_server(
    indexed: Briefd, run_hook: RunHook
) -> None:
    """The server takes any ASCII token (a space inside too): the hook sends it as it is."""
    spaced = "recall test token"
    with serving(create_app(indexed, ServiceConfig(token=spaced))) as base:
        env: dict[str, str | None] = {"BRIEFD_RECALL__SERVER": base, "BRIEFD_API_TOKEN": spaced}
        run = run_hook("--json", payload=hook_json(RELEVANT, session="spaced"), env=env)
    assert json.loads(run.stdout)["via"] == "server", run.stderr


def test_pass_through_to_a_server_parses_no_json(live_server: str, indexed: Briefd) -> None:
    """Hook JSON in, block out: the bytes go to the server and back untouched."""
    import sys

    code = (
        "import io, sys\n"
        "from briefd.hook.main import main\n"
        "class In(io.StringIO):\n"
        "    def isatty(self): return False\n"
        f"stdin = In({json.dumps(hook_json(RELEVANT, session='pt'))!r})\n"
        "out = io.StringIO()\n"
        f"main([], stdin=stdin, stdout=out, env={{'BRIEFD_RECALL__SERVER': {live_server!r}, "
        f"'BRIEFD_API_TOKEN': {TOKEN!r}}})\n"
        "print(repr(['json' in sys.modules, 'typing' in sys.modules, out.getvalue()[:11]]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[False, False, '<knowledge>']", done.stderr


def test_the_hook_init_writes_asks_a_server_without_site_or_yaml(
    live_server: str, tmp_path: Path, hook_env: dict[str, str]
) -> None:
    """``python -S -P …/script.py`` in a project whose briefd.yaml names the index and the
    server: the first prompt reads the YAML and remembers it; the next imports neither
    ``yaml`` nor ``site`` and still gets the server's block."""
    import os
    import shlex

    from briefd.cli.init import hook_command

    project = tmp_path / "project"
    project.mkdir()
    config = project / "briefd.yaml"
    config.write_text(f"db: {hook_env['BRIEFD_DB']}\nrecall:\n  server: {live_server}\n")
    os.utime(config, (time.time() - 60, time.time() - 60))  # older than git's racy window
    env = {k: v for k, v in hook_env.items() if k not in ("BRIEFD_DB", "BRIEFD_RECALL__SERVER")}
    env["BRIEFD_API_TOKEN"] = TOKEN
    python, *rest = shlex.split(hook_command())
    runs = []
    for session in ("yaml-1", "yaml-2"):
        payload = json.dumps(hook_json(RELEVANT, session=session, cwd=str(project)))
        done = subprocess.run(
            [python, "-X", "importtime", *rest],
            input=payload,
            capture_output=True,
            text=True,
            cwd=project,
            env=env,
            check=True,
        )
        imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
        runs.append((done.stdout[:11], "yaml" in imported, "site" in imported))
    assert runs == [("<knowledge>", True, True), ("<knowledge>", False, False)]


def test_a_server_of_another_index_does_not_answer_for_this_one(
    client: TestClient, indexed: Briefd, tmp_path: Path
) -> None:
    prompt = hook_json(RELEVANT)
    other = {"X-Briefd-Index": str(tmp_path / "elsewhere" / "briefd.db")}
    refused = client.post("/api/hook/recall", json=prompt, headers=other)
    assert refused.status_code == 421
    assert refused.json()["detail"].startswith(f"this server serves {indexed.settings.db}")
    mine = {"X-Briefd-Index": str(indexed.settings.db)}
    answered = client.post("/api/hook/recall", json=prompt, headers=mine)
    assert answered.status_code == 200 and answered.headers["X-Briefd-Recall"]


def test_only_the_default_server_is_asked_for_this_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nobody configured a server: the default one must serve this project's index. A server
    somebody configured (a team's) answers whatever it serves."""
    monkeypatch.chdir(tmp_path)  # no briefd.yaml here
    db = tmp_path / ".briefd" / "briefd.db"
    db.parent.mkdir()
    db.write_bytes(b"")
    env = {"BRIEFD_DB": str(db), "HOME": str(tmp_path)}
    assert main.server({}, env) == ("http://127.0.0.1:8484", 2.0, str(db.resolve()), None)
    chosen = {**env, "BRIEFD_RECALL__SERVER": "http://team:8484"}
    assert main.server({}, chosen) == ("http://team:8484", 2.0, None, None)
    db.unlink()  # no index here: any briefd server is the only knowledge there is
    assert main.server({}, env) == ("http://127.0.0.1:8484", 2.0, None, None)


@pytest.fixture
def unreachable() -> Iterator[tuple[str, int]]:
    """A port whose connections never complete, as a server off the VPN: a listener nobody
    accepts on, its queue full, so the kernel drops the next SYN."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    address = listener.getsockname()
    queued = [socket.socket() for _ in range(8)]
    for conn in queued:
        conn.setblocking(False)
        conn.connect_ex(address)
    try:
        yield address
    finally:
        for conn in [*queued, listener]:
            conn.close()


def test_an_https_server_that_cannot_be_reached_is_left_as_an_http_one_is(
    indexed: Briefd, run_hook: RunHook, unreachable: tuple[str, int], tmp_path: Path
) -> None:
    """https:// waited recall.server_timeout for the connection itself, then failed open with
    nothing ('did not answer in 5 s'), where http:// gives up connecting after 0.25 s and
    answers from the local index; a reachable https:// server still answers."""
    env: dict[str, str | None] = {"BRIEFD_RECALL__SERVER_TIMEOUT": "5"}
    for scheme in ("http", "https"):
        env["BRIEFD_RECALL__SERVER"] = f"{scheme}://127.0.0.1:{unreachable[1]}"
        started = time.monotonic()
        run = run_hook("--json", payload=hook_json(RELEVANT, session=scheme), env=env)
        assert json.loads(run.stdout or "{}").get("via") == "in-process", run.stderr
        assert time.monotonic() - started < 4
    key, cert = self_signed(tmp_path)
    app = create_app(indexed, ServiceConfig(token=TOKEN))
    with serving(app, ssl_keyfile=str(key), ssl_certfile=str(cert)) as base:
        env = {"BRIEFD_RECALL__SERVER": base, "BRIEFD_API_TOKEN": TOKEN, "SSL_CERT_FILE": str(cert)}
        run = run_hook("--json", payload=hook_json(RELEVANT, session="tls"), env=env)
    assert base.startswith("https://")
    assert json.loads(run.stdout)["via"] == "server", run.stderr


@pytest.fixture
def default_port_server(indexed: Briefd) -> Iterator[str]:
    """``indexed`` served where the hook looks when nobody configured a server: :8484."""
    app = create_app(indexed, ServiceConfig(token=TOKEN, port=8484))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=8484, log_level="error"))
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", 8484)) == 0:
            pytest.skip("127.0.0.1:8484 is taken")
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    if not server.started:
        pytest.skip("could not listen on 127.0.0.1:8484")
    try:
        yield "http://127.0.0.1:8484"
    finally:
        server.should_exit = True
        thread.join(10)


def test_a_hook_spawned_outside_its_project_asks_for_the_projects_index(
    default_port_server: str, run_hook: RunHook, tmp_path: Path
) -> None:
    """The default server was asked for the index of the folder the hook process runs in,
    before it moved to the hook JSON's ``cwd``: spawned elsewhere, it found no index there,
    sent none, and another project's server on :8484 answered with that project's knowledge.
    The index the default server must serve is the project's (421 otherwise)."""
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    (project / "domain").mkdir(parents=True)
    elsewhere.mkdir()
    (project / "briefd.yaml").write_text("db: .briefd/briefd.db\n")
    (project / "domain" / "own.md").write_text("# Own\n\nThis project's own notes on widgets.\n")
    settings = load_settings(project / "briefd.yaml", env={"BRIEFD_EMBEDDINGS__ENABLED": "false"})
    with Briefd(settings, embedder=None) as own:
        own.index(project)
    env: dict[str, str | None] = {
        "BRIEFD_DB": None,
        "BRIEFD_RECALL__SERVER": None,
        "BRIEFD_API_TOKEN": TOKEN,
    }
    payload = hook_json(RELEVANT, session="outside", cwd=str(project))
    answer = run_hook("--json", payload=payload, env=env, cwd=elsewhere)
    assert answer.code == 0 and answer.stdout, answer.stderr
    result = json.loads(answer.stdout)
    assert result["via"] != "server", result  # :8484 serves another index: 421
    assert "domain/chargebacks.md" not in answer.stdout


def test_the_hook_asks_the_projects_server_on_its_configured_port(
    live_server: str, indexed: Briefd, run_hook: RunHook, tmp_path: Path
) -> None:
    """`briefd serve` of a project whose briefd.yaml says `serve.port: 9000` listens there, and
    the hook (nobody set recall.server) still looked on 127.0.0.1:8484, found nothing and
    answered in-process. It asks the project's own server where serve.host/port put it, for
    the project's index, as it asks the default one."""
    port = live_server.rpartition(":")[2]
    project = tmp_path / "project"
    project.mkdir()
    (project / "briefd.yaml").write_text(f"db: {indexed.settings.db}\nserve:\n  port: {port}\n")
    env: dict[str, str | None] = {
        "BRIEFD_DB": None,
        "BRIEFD_RECALL__SERVER": None,
        "BRIEFD_API_TOKEN": TOKEN,
    }
    payload = hook_json(RELEVANT, session="own-port", cwd=str(project))
    answer = run_hook("--json", payload=payload, env=env, cwd=project)
    assert json.loads(answer.stdout or "{}").get("via") == "server", answer.stderr


def test_status_names_the_server_that_answers_the_prompts(
    live_server: str, run_hook: RunHook
) -> None:
    """With a `briefd serve` answering every prompt, ``--status`` said "recall daemon: not
    running (the next prompt starts it)": the next prompt goes to the server, and no daemon
    starts while it answers."""
    env: dict[str, str | None] = {
        "BRIEFD_RECALL__SERVER": live_server,
        "BRIEFD_API_TOKEN": TOKEN,
        "BRIEFD_RECALL__DAEMON": "true",
    }
    shown = run_hook("--status", env=env)
    assert shown.stdout.startswith(
        f"recall server: {live_server} answers this project's prompts (the daemon below is "
        "asked only when it does not)\n"
        "recall daemon: not running (a prompt starts it only when the server does not answer)\n"
    ), shown.stderr
    assert json.loads(run_hook("--status", "--json", env=env).stdout)["server"] == live_server
    refused = run_hook("--status", env={**env, "BRIEFD_API_TOKEN": "wrong"})
    assert refused.stdout.startswith("recall daemon: not running (the next prompt starts it)\n")


def test_the_server_logs_no_client_command_nor_empty_prompt(client: TestClient) -> None:
    """/clear and /compact (and --status' empty probe) went into the query log as hook prompts
    with no result: `briefd gaps` would list "clear" and "compact" as the knowledge most
    asked for and never found."""
    for prompt in ("/clear", "/compact --force", "", RELEVANT):
        assert (
            client.post("/api/hook/recall?format=json", json=hook_json(prompt)).status_code == 200
        )
    state = client.app.state.briefd  # type: ignore[attr-defined]
    state.flush()
    logged = state.api.state.recent_queries(100)
    assert [(e.kind, e.surface, e.results > 0) for e in logged] == [("recall", "hook", True)]


def test_a_keyword_answer_says_its_evidence_not_a_strong_confidence(
    client: TestClient, run_hook: RunHook
) -> None:
    """I8: a BM25 answer asked for as such (`--mode bm25`) has no confidence tier, the
    lexical gate's verdict alone decides, yet it was labelled "strong" in the REST result,
    `--json` and the terminal view: a pasted "this goroutine leaks" got the leaked secret
    procedure "strong". It now says "keyword" (untiered). (In the default mode, `embeddings:
    none` tiers it: tests/recall/test_keywords.py.)"""
    prompt = "this goroutine leaks, find out why"
    body = {**hook_json(prompt, "k"), "mode": "bm25"}
    full = client.post("/api/hook/recall?format=json", json=body).json()
    assert (full["mode"], full["confidence"], full["specificity"]) == ("bm25", "keyword", None)
    assert full["sections"]  # what it injects is unchanged: the gate's verdict decides
    as_json = json.loads(run_hook("--json", "--mode", "bm25", prompt).stdout)
    assert (as_json["via"], as_json["confidence"]) == ("in-process", "keyword")
    (head, *_) = run_hook("--format", "text", "--mode", "bm25", prompt).stdout.splitlines()
    assert head.startswith("briefd recall · 4 section(s) · ") and " · bm25 · " in head, head
    assert head.endswith(" ms · keyword match, untiered"), head
