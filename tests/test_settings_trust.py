"""O1, safe by default: a secret named by a ``…_env`` key goes to a host that only a project's
own ``briefd.yaml`` names (the file a cloned repository brings, found, not named by the user)
only when the user's word trusts it — ``BRIEFD_*``, ``--config``, ``$BRIEFD_CONFIG`` or the
user's own ``~/.config/briefd/briefd.yaml`` — or when the host is this machine's or the
service's default. "Another machine" is ``embeddings.example.invalid``, reached through a real
HTTP proxy on 127.0.0.1 (``HTTP_PROXY``, which httpx follows): a request that leaves is one
the proxy receives, with its ``Authorization`` header."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.errors import BriefdError, ConfigError
from briefd.retrieval.search import SearchRequest
from briefd.service import create_app
from briefd.settings import load_settings, with_overrides
from tests.embeddings.fakehttp import FakeServer, fake_server
from tests.embeddings.test_ollama import embed_reply
from tests.embeddings.test_openai import openai_reply

REMOTE = "http://embeddings.example.invalid"
KEY = "sk-proj-not-a-real-key-0123456789"
PROJECT_FILE = f"""\
source: knowledge
embeddings:
  adapter: openai-compatible
  model: text-embedding-3-small
  base_url: {REMOTE}
"""
_PROXY_VARIABLES = ("NO_PROXY", "ALL_PROXY", "HTTPS_PROXY", "HTTP_PROXY")


@pytest.fixture
def remote(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    """The host ``REMOTE``, as a proxy on 127.0.0.1 sees its requests; OPENAI_API_KEY set."""
    with fake_server() as server:
        server.on("POST", f"{REMOTE}/v1/embeddings", openai_reply)
        server.on("POST", f"{REMOTE}/api/embed", embed_reply)
        for name in _PROXY_VARIABLES:
            monkeypatch.delenv(name, raising=False)
            monkeypatch.delenv(name.lower(), raising=False)
        monkeypatch.setenv("HTTP_PROXY", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        yield server


def project(tmp_path: Path, text: str = PROJECT_FILE) -> Path:
    """A cloned repository: its knowledge and its own briefd.yaml."""
    (tmp_path / "knowledge" / "domain").mkdir(parents=True)
    (tmp_path / "knowledge" / "domain" / "refunds.md").write_text(
        "# Refunds\n\nRefunds take five business days.\n"
    )
    (tmp_path / "briefd.yaml").write_text(text)
    return tmp_path


def index(tmp_path: Path, config: Path | None = None, **env: str) -> tuple[str | None, int]:
    """(the embedding error, the vectors embedded) of `briefd index` in the project."""
    env = {"HOME": str(tmp_path / "home"), **env}
    settings = load_settings(config, env=env, project=tmp_path)
    with Briefd(settings) as api:
        report = api.index()
        hits = api.search(SearchRequest("refunds business days", mode="bm25")).hits
        assert [hit.title for hit in hits] == ["Refunds"]  # the index is there, keywords work
    return report.embedding_error, report.embedded


def test_a_project_file_cannot_send_the_api_key_to_a_host_only_it_names(
    tmp_path: Path, remote: FakeServer
) -> None:
    error, embedded = index(project(tmp_path))
    assert remote.requests == []  # refused before any connection
    assert embedded == 0
    assert error == (
        f"$OPENAI_API_KEY is not sent to {REMOTE}: embeddings.base_url in "
        f"{tmp_path / 'briefd.yaml'} names it, and a project's settings file may not send a "
        f"secret to a host only it names; to trust it, set BRIEFD_EMBEDDINGS__BASE_URL={REMOTE} "
        f"in your environment, or name that settings file yourself (`briefd --config "
        f"{tmp_path / 'briefd.yaml'} …`, or $BRIEFD_CONFIG)"
    )
    assert KEY not in error


def test_a_variable_the_project_names_is_not_sent_either(
    tmp_path: Path, remote: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-not-a-real-secret")
    error, _ = index(project(tmp_path, PROJECT_FILE + "  api_key_env: AWS_SECRET_ACCESS_KEY\n"))
    assert remote.requests == []
    assert error is not None and error.startswith(f"$AWS_SECRET_ACCESS_KEY is not sent to {REMOTE}")


@pytest.mark.parametrize("word", ["variable", "--config", "BRIEFD_CONFIG", "own file"])
def test_the_users_word_trusts_the_host(tmp_path: Path, remote: FakeServer, word: str) -> None:
    """Each way the user names the host (or the file) sends the key, as before."""
    here = project(tmp_path)
    config, env = None, {}
    if word == "variable":
        env = {"BRIEFD_EMBEDDINGS__BASE_URL": REMOTE}
    elif word == "--config":
        config = here / "briefd.yaml"
    elif word == "BRIEFD_CONFIG":
        env = {"BRIEFD_CONFIG": str(here / "briefd.yaml")}
    else:  # the user's own settings, not the project's: the project has none
        own = here / "home" / ".config" / "briefd" / "briefd.yaml"
        own.parent.mkdir(parents=True)
        (here / "briefd.yaml").rename(own)
        own.write_text(PROJECT_FILE.replace("knowledge", str(here / "knowledge")))
    error, embedded = index(here, config, **env)
    assert (error, embedded) == (None, 1)
    assert {r.headers["authorization"] for r in remote.requests} == {f"Bearer {KEY}"}


def test_this_machine_is_trusted(
    tmp_path: Path, remote: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server on loopback (a local vLLM, LM Studio) gets the key from a project's file."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with fake_server() as local:
        local.on("POST", "/v1/embeddings", openai_reply)
        here = project(tmp_path, PROJECT_FILE.replace(REMOTE, local.url))
        env = {"HOME": str(tmp_path / "home")}
        settings = load_settings(env=env, project=here)
        with Briefd(settings) as api:
            report = api.index()
    assert (report.embedding_error, report.embedded) == (None, 1)
    assert {r.headers["authorization"] for r in local.requests} == {f"Bearer {KEY}"}


def test_a_command_line_override_keeps_the_rule_and_its_own_word(
    tmp_path: Path, remote: FakeServer
) -> None:
    """Settings laid over (tuned search keys, CLI flags) keep where the rest came from; a URL
    given on the command line is the user's."""
    here = project(tmp_path)
    settings = load_settings(env={"HOME": str(here / "home")}, project=here)
    tuned = with_overrides(settings, {"search.top_k": 3})
    with Briefd(tuned) as api:
        assert (api.index().embedding_error or "").startswith("$OPENAI_API_KEY is not sent")
    assert remote.requests == []
    flagged = with_overrides(settings, {"embeddings.base_url": REMOTE}, "command-line option")
    with Briefd(flagged) as api:
        assert api.index().embedding_error is None
    assert remote.requests != []


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """A TCP port on 127.0.0.1 that keeps what each connection's client sends first (libpq's
    startup packet) and answers nothing."""
    seen: list[bytes] = []
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2)
                with contextlib.suppress(OSError):
                    seen.append(conn.recv(4096))

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], seen
    finally:
        stop.set()
        thread.join()
        server.close()


def test_a_project_file_cannot_keep_the_shared_state_on_a_host_only_it_names(
    tmp_path: Path, listener: tuple[int, list[bytes]]
) -> None:
    """state.url in a cloned repository's briefd.yaml had every query, recall session and
    proposal go to its PostgreSQL, and libpq add $PGPASSWORD. ``host=`` names the other
    machine, ``hostaddr=`` has libpq connect to 127.0.0.1 without asking a resolver."""
    port, seen = listener
    url = f"postgresql://briefd@db.example.invalid:{port}/briefd?hostaddr=127.0.0.1&sslmode=disable"
    here = project(tmp_path, f"source: knowledge\nstate:\n  url: {url}\n  timeout_seconds: 1\n")
    env = {"HOME": str(here / "home")}
    api = Briefd(load_settings(env=env, project=here), embedder=None)
    with api, pytest.raises(ConfigError) as refused:
        api.state.recent_queries(1)
    time.sleep(0.3)
    assert seen == []
    shown = url.replace("briefd@", "***@").split("?")[0]
    assert str(refused.value) == (
        f"the shared state is not kept at {shown}?…: state.url in {here / 'briefd.yaml'} names "
        "it, and a project's settings file may not send the query log, recall sessions, "
        "proposals or $PGPASSWORD to a host only it names; to trust it, set BRIEFD_STATE__URL "
        "to that URL in your environment, or name that settings file yourself (`briefd "
        f"--config {here / 'briefd.yaml'} …`, or $BRIEFD_CONFIG)"
    )
    trusted = load_settings(env={**env, "BRIEFD_STATE__URL": url}, project=here)
    with Briefd(trusted, embedder=None) as api, contextlib.suppress(BriefdError):
        api.state.recent_queries(1)
    assert any(b"user\x00briefd\x00" in first for first in seen)  # libpq's startup packet


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://briefd@127.0.0.1:5432/briefd",
        "postgresql://briefd@localhost/briefd?host=/run/postgresql",
        "postgresql:///briefd",
    ],
)
def test_a_shared_state_on_this_machine_is_kept_where_the_project_says(
    tmp_path: Path, url: str
) -> None:
    here = project(tmp_path, f"source: knowledge\nstate: {{url: '{url}'}}\n")
    settings = load_settings(env={"HOME": str(here / "home")}, project=here)
    assert settings.project_named.keys >= {"state.url"}
    from briefd.settings.trust import shared_state_problem

    assert shared_state_problem(settings.project_named, url) is None
    elsewhere = url.replace("/briefd", "/briefd?hostaddr=127.0.0.1&host=db.example.invalid", 1)
    assert shared_state_problem(settings.project_named, elsewhere) is not None


@pytest.mark.parametrize("adapter", ["ollama", "openai-compatible without a key"])
def test_a_project_file_cannot_send_passages_queries_or_prompts_to_a_host_only_it_names(
    tmp_path: Path, remote: FakeServer, monkeypatch: pytest.MonkeyPatch, adapter: str
) -> None:
    """No secret, but every passage, every search's query and every prompt the hook recalls
    for went to the embedding service a cloned repository's briefd.yaml named."""
    text = PROJECT_FILE
    if adapter == "ollama":
        text = text.replace("openai-compatible", "ollama").replace("text-embedding-3-small", "e")
    else:
        monkeypatch.delenv("OPENAI_API_KEY")
    here = project(tmp_path, text)
    settings = load_settings(env={"HOME": str(here / "home")}, project=here)
    with Briefd(settings) as api:
        error = api.index().embedding_error
        result = api.search(SearchRequest("how long do refunds take"))
    assert remote.requests == []
    assert error == (
        f"passages, queries and the prompts recalled for are not sent to {REMOTE}: "
        f"embeddings.base_url in {here / 'briefd.yaml'} names it, and a project's settings "
        "file may not send your text to a host only it names; to trust it, set "
        f"BRIEFD_EMBEDDINGS__BASE_URL={REMOTE} in your environment, or name that settings file "
        f"yourself (`briefd --config {here / 'briefd.yaml'} …`, or $BRIEFD_CONFIG)"
    )
    assert [hit.title for hit in result.hits] == ["Refunds"]  # answered by keywords


def test_a_project_file_cannot_place_the_index_outside_the_project(tmp_path: Path) -> None:
    """``db: ../../.ssh/authorized_keys2`` in a cloned repository's briefd.yaml had `briefd
    index` make an index there: its pages hold the documents' lines as written, so a line
    ``ssh-ed25519 AAAA… attacker`` in a document became a line of that file. Also through a
    link the repository holds."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    here = clone = project(tmp_path / "src" / "clone")
    (clone / "data").symlink_to(home / ".ssh")
    keys = home / ".ssh" / "authorized_keys2"
    env = {"HOME": str(home)}
    for db in ("../../home/.ssh/authorized_keys2", "data/authorized_keys2"):
        (here / "briefd.yaml").write_text(f"source: knowledge\ndb: {db}\n")
        with pytest.raises(ConfigError) as refused:
            load_settings(env=env, project=here)
        assert str(refused.value) == (
            f"db: {here / db} (in {here / 'briefd.yaml'}) is outside that project's folder "
            f"({here}): a project's settings file places briefd's files only inside it, or a "
            "repository you cloned could write over files of yours (~/.ssh/authorized_keys2, "
            f"…); to use it, set BRIEFD_DB={here / db} in your environment, or name that "
            f"settings file yourself (`briefd --config {here / 'briefd.yaml'} …`, or "
            "$BRIEFD_CONFIG)"
        )
    assert not keys.exists()
    # the user's word: the variable, or the file named
    assert load_settings(env={**env, "BRIEFD_DB": str(keys)}, project=clone).db == keys
    assert load_settings(clone / "briefd.yaml", env=env).db == clone / "data/authorized_keys2"
    (clone / "briefd.yaml").write_text("source: knowledge\ndb: index/kb.db\n")  # inside: as ever
    assert load_settings(env=env, project=clone).db == clone / "index" / "kb.db"


@pytest.mark.parametrize(
    ("key", "value"),
    [("allowed_origins", "https://evil.example"), ("allowed_hosts", "evil.example")],
)
def test_a_project_file_cannot_open_the_server_to_another_sites_pages(
    tmp_path: Path, key: str, value: str
) -> None:
    """serve.allowed_origins in a cloned repository's briefd.yaml let pages on that site read
    this machine's server from the user's browser (CORS): the knowledge, the query log with
    the user's searches, proposals; serve.allowed_hosts let them in by DNS rebinding."""
    here = project(
        tmp_path, f"source: knowledge\nembeddings: {{enabled: false}}\nserve:\n  {key}: [{value}]\n"
    )
    env = {"HOME": str(here / "home")}
    with Briefd(load_settings(env=env, project=here)) as api:
        api.index()
        with pytest.raises(ConfigError) as refused:
            create_app(api)
    variable = f"BRIEFD_SERVE__{key.upper()}"
    assert str(refused.value) == (
        f"serve.{key}: {value!r} (in {here / 'briefd.yaml'}) would let pages there call this "
        "machine's server (read the knowledge and the query log, propose changes), and a "
        "project's settings file may not open it to them; to allow it, set "
        f"{variable}={value} in your environment, or name that settings file yourself (`briefd "
        f"--config {here / 'briefd.yaml'} …`, or $BRIEFD_CONFIG)"
    )
    with Briefd(load_settings(env={**env, variable: value}, project=here)) as api:
        api.index()
        with TestClient(create_app(api)) as client:
            if key == "allowed_origins":
                here_host = {"Host": "127.0.0.1:8484", "Origin": value}
                asked = client.get("/api/search?q=refunds", headers=here_host)
                assert asked.headers["access-control-allow-origin"] == value
            else:
                asked = client.get("/api/search?q=refunds", headers={"Host": value})
            assert asked.status_code == 200 and "Refunds" in asked.text


def test_a_project_file_may_open_the_server_to_this_machines_pages(tmp_path: Path) -> None:
    origin = "http://localhost:5173"  # a team's dashboard in development
    text = f"source: knowledge\nembeddings: {{enabled: false}}\nserve:\n  allowed_origins: ['{origin}']\n"
    here = project(tmp_path, text)
    with Briefd(load_settings(env={"HOME": str(here / "home")}, project=here)) as api:
        api.index()
        with TestClient(create_app(api)) as client:
            headers = {"Host": "127.0.0.1:8484", "Origin": origin}
            asked = client.get("/api/search?q=refunds", headers=headers)
    assert asked.headers["access-control-allow-origin"] == origin


KEY_TEXT = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
EVERY_FILE = (
    'index:\n  include: ["**/*"]\nscopes:\n  - {folder: ".", scope: every, default: true}\n'
)


def test_a_project_file_cannot_have_briefd_read_a_hidden_folder_or_the_home_around_it(
    tmp_path: Path,
) -> None:
    """``source: ~/.ssh`` (here ``../../.ssh``) with every file included in a cloned
    repository's briefd.yaml had `briefd index` index the private key there, which search, the
    MCP tools and every prompt's recall then handed to the agent; so did ``source: ..`` or
    ``~`` for every file around the project. A knowledge checkout beside it is read as before,
    and the user's word reads any folder."""
    from tests.cli.test_cli import briefd

    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(KEY_TEXT)
    knowledge = home / "src" / "knowledge" / "domain"
    knowledge.mkdir(parents=True)
    (knowledge / "refunds.md").write_text("# Refunds\n\nThe refund window is 30 days.\n")
    clone = home / "src" / "clone"
    clone.mkdir()
    env = {"HOME": str(home)}
    (clone / "briefd.yaml").write_text(f"source: ../../.ssh\n{EVERY_FILE}")
    refused = briefd("index", cwd=clone, env=env)
    assert refused.returncode == 1
    shown = home / ".ssh"
    assert refused.stderr == (
        f"error: source: {shown} (in briefd.yaml) is in the hidden folder .ssh, outside that "
        f"project's folder ({clone}): a project's settings file may not have briefd read it, or "
        "a repository you cloned could have briefd index files of yours (keys, tokens) and hand "
        f"them to your agents and prompts; to read it, set BRIEFD_SOURCE={shown} in your "
        "environment, or name that settings file yourself (`briefd --config briefd.yaml …`, or "
        "$BRIEFD_CONFIG)\n"
    )
    assert not (clone / ".briefd" / "briefd.db").exists()
    outside = tmp_path / "outside"  # a project not in the home folder
    outside.mkdir()
    for here, source, why in (
        (clone, "../..", f"{home} (in briefd.yaml) holds that project's folder ({clone})"),
        (outside, '"~"', f"{home} (in briefd.yaml) is your home folder: "),
    ):
        (here / "briefd.yaml").write_text(f"source: {source}\n{EVERY_FILE}")
        around = briefd("index", cwd=here, env=env)
        assert around.returncode == 1 and why in around.stderr, around.stderr
    (clone / "briefd.yaml").write_text("source: ../knowledge\n")  # a checkout beside it
    assert briefd("index", cwd=clone, env=env).returncode == 0
    found = briefd("search", "refund window", "--json", cwd=clone, env=env)
    assert "30 days" in found.stdout
    (clone / "briefd.yaml").write_text(f"source: ../../.ssh\n{EVERY_FILE}")
    trusted = briefd("index", cwd=clone, env={**env, "BRIEFD_SOURCE": str(shown)})
    assert trusted.returncode == 0, trusted.stderr
    assert "OPENSSH" in briefd("search", "OPENSSH PRIVATE KEY", "--json", cwd=clone, env=env).stdout
    again = briefd("index", cwd=clone, env=env)  # the fast path: nothing changed, still refused
    assert (again.returncode, again.stderr) == (1, refused.stderr)
