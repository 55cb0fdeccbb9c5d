"""Which servers the prompt hook sends prompts and BRIEFD_API_TOKEN to: a project's committed
``briefd.yaml`` may not send them off this machine, and the token never goes in the clear to
another machine. Real hook processes against a fake server on 127.0.0.1 that records what it
receives, reached by a name that resolves to 127.0.0.1 but is not ``localhost`` — to the hook,
another machine."""

from __future__ import annotations

import json
import socket
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.hook.client import loopback
from tests.hook.conftest import RunHook, hook_json
from tests.recall.conftest import RELEVANT
from tests.tls import self_signed

TOKEN = "team-token-7c1d0e9b"
FAKE_ANSWER = "<knowledge>\nfrom the fake server\n</knowledge>\n"


@dataclass
class Fake:
    url: str
    port: int
    received: list[dict[str, str]] = field(default_factory=list)


def other_name(scheme: str) -> str:
    """A name of this machine's loopback address that is not loopback by its text: the host's
    own name where it resolves to 127.0.0.1 alone (/etc/hosts on most systems), else for
    http the IPv4-mapped IPv6 address ``[::ffff:127.0.0.1]``."""
    name = socket.gethostname()
    try:
        addresses = {a[4][0] for a in socket.getaddrinfo(name, 80, socket.AF_INET)}
    except OSError:
        addresses = set()
    if not loopback(name) and addresses and all(a.startswith("127.") for a in addresses):
        return name
    if scheme == "http" and socket.has_ipv6:
        return "[::ffff:127.0.0.1]"
    pytest.skip(f"this host's name {name!r} does not resolve to 127.0.0.1 alone")


@pytest.fixture
def fake(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Fake]:
    """A recall endpoint on 127.0.0.1 named by :func:`other_name`, answering as briefd does
    (``X-Briefd-Recall``) and recording each request's headers and body; https with
    ``request.param == "https"`` (its certificate in ``tmp_path/cert.pem``)."""
    scheme = getattr(request, "param", "http")
    name = other_name(scheme)
    received: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            received.append({**dict(self.headers), "body": body.decode()})
            self.send_response(200)
            self.send_header("X-Briefd-Recall", "1")
            self.send_header("Content-Length", str(len(FAKE_ANSWER.encode())))
            self.end_headers()
            self.wfile.write(FAKE_ANSWER.encode())

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if scheme == "https":
        key, cert = self_signed(tmp_path, name)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Fake(
            f"{scheme}://{name}:{server.server_address[1]}", server.server_address[1], received
        )
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(autouse=True)
def _local_index(indexed: Briefd) -> None:
    """The example knowledge at BRIEFD_DB, where a prompt not sent is answered from."""


def cloned(tmp_path: Path, server: str) -> Path:
    """A repository whose committed briefd.yaml names ``server`` as recall.server."""
    project = tmp_path / "cloned"
    project.mkdir()
    (project / "briefd.yaml").write_text(f"recall:\n  server: {server}\n")
    return project


def test_loopback_is_this_machine_by_the_text_alone() -> None:
    for host in ("localhost", "LOCALHOST.", "127.0.0.1", "127.1.2.3", "::1", "[::1]"):
        assert loopback(host), host
    for host in ("vm", "localhost.evil.example", "127.0.0.1.nip.io", "128.0.0.1", "10.0.0.1"):
        assert not loopback(host), host
    for host in ("::ffff:127.0.0.1", "127.0.0.256", "0x7f.0.0.1", "briefd.acme.internal"):
        assert not loopback(host), host


def test_a_cloned_projects_server_elsewhere_gets_neither_prompt_nor_token(
    fake: Fake, run_hook: RunHook, tmp_path: Path
) -> None:
    """A hook installed for every project sent each prompt and BRIEFD_API_TOKEN to whatever
    server a cloned repository's briefd.yaml named. It asks no such server: it answers from the
    local index and says on stderr how to trust the server."""
    project = cloned(tmp_path, fake.url)
    env: dict[str, str | None] = {"BRIEFD_RECALL__SERVER": None, "BRIEFD_API_TOKEN": TOKEN}
    payload = hook_json(RELEVANT, session="cloned", cwd=str(project))
    run = run_hook(payload=payload, env=env, cwd=project)
    assert fake.received == []
    assert run.code == 0 and "from the fake server" not in run.stdout
    assert "domain/chargebacks.md" in run.stdout  # the local index's answer
    assert run.stderr == (
        f"briefd recall: {fake.url} is not asked: recall.server in {project / 'briefd.yaml'} "
        "names it, and a project's settings file may not send prompts and BRIEFD_API_TOKEN off "
        f"this machine; to trust it, set BRIEFD_RECALL__SERVER={fake.url} in your environment "
        f"or run `briefd init --url {fake.url}` (answered from the local index)\n"
    )
    status = run_hook("--status", env=env, cwd=project)
    assert f"recall server: {fake.url} is not asked: recall.server in" in status.stdout
    assert fake.received == []


def test_the_project_servers_own_port_on_another_host_is_not_asked_either(
    fake: Fake, run_hook: RunHook, tmp_path: Path
) -> None:
    """serve.host in the project's file places the default server: another machine there is
    as untrusted as a recall.server."""
    host, port = fake.url.removeprefix("http://").rpartition(":")[::2]
    project = tmp_path / "cloned"
    project.mkdir()
    (project / "briefd.yaml").write_text(f'serve:\n  host: "{host}"\n  port: {port}\n')
    env: dict[str, str | None] = {"BRIEFD_RECALL__SERVER": None}
    run = run_hook(payload=hook_json(RELEVANT, cwd=str(project)), env=env, cwd=project)
    assert fake.received == []
    assert f"{fake.url} is not asked: serve.host in {project / 'briefd.yaml'}" in run.stderr


def test_the_users_own_choice_of_server_is_asked(
    fake: Fake, run_hook: RunHook, tmp_path: Path
) -> None:
    """The user's word trusts a server elsewhere: their environment, the command line, their
    own ~/.config/briefd/briefd.yaml (here without a token: plain http carries no secret)."""
    project = cloned(tmp_path, fake.url)
    payload = hook_json(RELEVANT, cwd=str(project))
    trusted = run_hook(payload=payload, env={"BRIEFD_RECALL__SERVER": fake.url}, cwd=project)
    by_option = run_hook("--server", fake.url, payload=payload, cwd=project)
    assert (trusted.stdout, trusted.stderr) == (FAKE_ANSWER, "")
    assert (by_option.stdout, by_option.stderr) == (FAKE_ANSWER, "")
    home = tmp_path / "home" / ".config" / "briefd"
    home.mkdir(parents=True)
    (home / "briefd.yaml").write_text(f"recall:\n  server: {fake.url}\n")
    elsewhere = tmp_path / "no-project"
    elsewhere.mkdir()
    env: dict[str, str | None] = {"BRIEFD_RECALL__SERVER": None}
    own = run_hook(payload=hook_json(RELEVANT, cwd=str(elsewhere)), env=env, cwd=elsewhere)
    assert (own.stdout, own.stderr) == (FAKE_ANSWER, "")
    assert [json.loads(r["body"])["prompt"] for r in fake.received] == [RELEVANT] * 3
    assert all("Authorization" not in r for r in fake.received)


def test_the_token_never_goes_to_another_machine_in_the_clear(
    fake: Fake, run_hook: RunHook, tmp_path: Path
) -> None:
    """Even to a server the user chose, plain http to another machine would show the token
    to the network: not sent, said on stderr; loopback http still gets it."""
    env: dict[str, str | None] = {"BRIEFD_RECALL__SERVER": fake.url, "BRIEFD_API_TOKEN": TOKEN}
    run = run_hook(payload=hook_json(RELEVANT), env=env)
    assert fake.received == []
    host = fake.url.removeprefix("http://").rpartition(":")[0]  # [::ffff:127.0.0.1], or a name
    assert run.stderr == (
        f"briefd recall: BRIEFD_API_TOKEN is not sent to {fake.url} in the clear (plain http to "
        "another machine: anyone on the network could read it); name that server by an "
        "https:// URL instead (a TLS proxy in front of briefd serve, which speaks plain http), "
        f"or reach it through an SSH tunnel (`ssh -N -L {fake.port}:{host}:{fake.port} "
        f"{host.strip('[]')}`) as http://127.0.0.1:{fake.port} (answered from the local index "
        "meanwhile)\n"
    )
    status = run_hook("--status", env=env)
    assert f"`ssh -N -L {fake.port}:{host}:{fake.port}" in status.stdout
    local = f"http://127.0.0.1:{fake.port}"
    run = run_hook(payload=hook_json(RELEVANT), env={**env, "BRIEFD_RECALL__SERVER": local})
    assert run.stdout == FAKE_ANSWER
    assert [r["Authorization"] for r in fake.received] == [f"Bearer {TOKEN}"]


@pytest.mark.parametrize("fake", ["https"], indirect=True)
def test_a_team_server_on_https_named_by_the_user_gets_prompt_and_token(
    fake: Fake, run_hook: RunHook, tmp_path: Path
) -> None:
    """The documented team setup: the team's briefd.yaml names its https server, each
    developer trusts it in their environment with their token — answered by that server."""
    project = cloned(tmp_path, fake.url)
    env: dict[str, str | None] = {
        "BRIEFD_RECALL__SERVER": fake.url,
        "BRIEFD_API_TOKEN": TOKEN,
        "SSL_CERT_FILE": str(tmp_path / "cert.pem"),
    }
    run = run_hook(payload=hook_json(RELEVANT, cwd=str(project)), env=env, cwd=project)
    assert (run.stdout, run.stderr) == (FAKE_ANSWER, "")
    assert [r["Authorization"] for r in fake.received] == [f"Bearer {TOKEN}"]
