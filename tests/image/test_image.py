"""The container image, smoke-tested from the host (``make image-test`` builds it and sets
``BRIEFD_IMAGE``). Every container runs with ``--network none``: the knowledge comes from a git
repository mounted read-only and given as a ``file://`` URL (so the image clones it onto its
volume, as it would a team's remote), and the host talks to it through ``docker exec`` — HTTP
requests made inside the container, MCP over the SDK's stdio client spawning ``briefd mcp`` in
it, and the SDK's HTTP client run inside it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from briefd.__about__ import __version__
from tests.conftest import EXAMPLE, REPO
from tests.service.test_mcp import ALL_TOOLS

IMAGE = os.environ.get("BRIEFD_IMAGE", "")
TOKEN = "image-test-token-5d0c7e21a9f84b36"
UID = 10001
ARTIFACTS = Path(os.environ.get("BRIEFD_TEST_ARTIFACTS", REPO / ".briefd" / "test-artifacts"))

pytestmark = pytest.mark.skipif(
    not IMAGE, reason="`make image-test` builds the image and runs these (BRIEFD_IMAGE unset)"
)


HTTP = """
import json, sys, urllib.error, urllib.request
spec = json.load(sys.stdin)
data = spec["data"].encode() if spec["data"] is not None else None
request = urllib.request.Request(spec["url"], data, spec["headers"], method=spec["method"])
try:
    with urllib.request.urlopen(request, timeout=30) as response:
        status, raw = response.status, response.read().decode()
except urllib.error.HTTPError as error:
    status, raw = error.code, error.read().decode()
try:
    body = json.loads(raw)
except ValueError:
    body = None
print(json.dumps({"status": status, "text": raw, "body": body}))
"""


def docker(*args: str, check: bool = True, timeout: float = 120) -> str:
    done = subprocess.run(
        ["docker", *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    if check and done.returncode != 0:
        raise AssertionError(f"docker {' '.join(args)}: {done.returncode}\n{done.stderr}")
    return done.stdout + done.stderr if not check else done.stdout


@dataclass
class Container:
    name: str
    volume: str
    repository: Path
    numbers: dict[str, Any] = field(default_factory=dict)

    def run(self) -> float:
        """``docker run`` as a team would (token, git source, webhook secret, the volume), with
        ``--network none``; seconds until Docker's healthcheck says healthy."""
        started = time.monotonic()
        docker(
            "run", "--detach", "--name", self.name, "--network", "none",
            "--volume", f"{self.volume}:/data",
            "--volume", f"{self.repository}:/srv/knowledge.git:ro",
            "--env", f"BRIEFD_API_TOKEN={TOKEN}",
            "--env", "BRIEFD_SOURCE=file:///srv/knowledge.git",
            "--env", "BRIEFD_SYNC__WEBHOOK_SECRET=image-test-webhook-secret",
            "--health-interval", "1s",  # the image's own 10 s would only round the time up
            IMAGE,
        )  # fmt: skip
        self.wait_healthy()
        return round(time.monotonic() - started, 1)

    def python(self, code: str, stdin: str = "") -> Any:
        """Run ``code`` with the image's Python inside the container; its stdout is JSON."""
        done = subprocess.run(
            ["docker", "exec", "-i", self.name, "python", "-c", textwrap.dedent(code)],
            input=stdin, capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        return json.loads(done.stdout)

    def http(self, method: str, path: str, body: object = None, token: str | None = TOKEN) -> Any:
        """An HTTP request made inside the container: ``{"status", "text", "body"}`` (``body``
        is the parsed JSON, when the answer is JSON)."""
        headers = {"content-type": "application/json"}
        if token is not None:
            headers["authorization"] = f"Bearer {token}"
        data = json.dumps(body) if body is not None else None
        spec = {"url": f"http://127.0.0.1:8484{path}", "method": method, "data": data}
        return self.python(HTTP, json.dumps({**spec, "headers": headers}))

    def health(self) -> str:
        return docker("inspect", "-f", "{{.State.Health.Status}}", self.name).strip()

    def wait_healthy(self, timeout: float = 900) -> float:
        """Seconds until Docker's own healthcheck says healthy."""
        started = time.monotonic()
        while self.health() != "healthy":
            state = docker("inspect", "-f", "{{.State.Status}}", self.name).strip()
            if state != "running" or time.monotonic() - started > timeout:
                logs = docker("logs", self.name, check=False)
                raise AssertionError(f"container {state}, health {self.health()}:\n{logs}")
            time.sleep(0.25)
        return time.monotonic() - started


def bare_repository(root: Path) -> Path:
    """The example knowledge as a bare git repository the container's user may read."""
    work, bare = root / "work", root / "knowledge.git"
    shutil.copytree(EXAMPLE, work)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x"}  # fmt: skip
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "knowledge"]):
        subprocess.run(["git", *args], cwd=work, env=env, check=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    if os.geteuid() == 0:  # git refuses repositories owned by another user (safe.directory)
        subprocess.run(["chown", "-R", f"{UID}:{UID}", str(bare)], check=True)
    return bare


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Container]:
    bare = bare_repository(tmp_path_factory.mktemp("image"))
    suffix = uuid.uuid4().hex[:8]
    box = Container(f"briefd-image-test-{suffix}", f"briefd-image-test-{suffix}", bare)
    try:
        # an empty volume: clone, then embed and index all 338 sections
        box.numbers["run_to_healthy_empty_volume_s"] = box.run()
        yield box
    finally:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        (ARTIFACTS / "image-test.json").write_text(json.dumps(box.numbers, indent=2) + "\n")
        (ARTIFACTS / "image-test.log").write_text(docker("logs", box.name, check=False))
        docker("rm", "--force", box.name, check=False)
        docker("volume", "rm", "--force", box.volume, check=False)


def test_health_search_and_bundle_answer_with_the_token(served: Container) -> None:
    health = served.http("GET", "/api/health", token=None)
    assert health["status"] == 200
    assert health["body"]["status"] == "ok" and health["body"]["documents"] == 45
    assert health["body"]["version"] == __version__

    search = served.http("GET", "/api/search?q=chargeback%20evidence%20deadline&top_k=3")
    assert search["status"] == 200
    hits = search["body"]["hits"]
    assert hits[0]["doc_path"] == "domain/chargebacks.md"
    assert "7 calendar days" in " ".join(h["content"] for h in hits)
    served.numbers["search"] = [(h["doc_path"], h["heading"], round(h["score"], 3)) for h in hits]

    task = {"task": "refund part of a captured card payment", "mode": "manifest"}
    bundle = served.http("POST", "/api/bundle", task)
    assert bundle["status"] == 200
    paths = [item["location"]["path"] for item in bundle["body"]["items"]]
    assert "domain/refunds.md" in paths
    assert bundle["body"]["tokens"] <= 2000
    index = served.http("GET", "/api/stats")["body"]["index"]
    assert (index["documents"], index["chunks"], index["vectors"]) == (45, 338, 338)


def test_nothing_but_health_answers_without_the_token(served: Container) -> None:
    for method, path in (("GET", "/api/search?q=refund"), ("GET", "/openapi.json"),
                         ("GET", "/metrics"), ("GET", "/docs"), ("POST", "/mcp")):  # fmt: skip
        assert (
            served.http(method, path, {} if method == "POST" else None, token=None)["status"] == 401
        ), path


def test_mcp_tools_over_stdio_from_the_host(served: Container) -> None:
    params = StdioServerParameters(
        command="docker", args=["exec", "-i", served.name, "briefd", "mcp", "--no-index"]
    )

    async def main() -> Any:
        async with Client(params, mode="auto") as client:
            tools = (await client.list_tools()).tools
            found = await client.call_tool("search_context", {"query": "chargeback evidence"})
            return tools, found

    tools, found = anyio.run(main)
    assert {t.name for t in tools} == ALL_TOOLS
    assert found.structured_content["hits"][0]["doc_path"] == "domain/chargebacks.md"


def test_mcp_tools_over_http_with_the_sdk_client_in_the_container(served: Container) -> None:
    names = served.python(f"""
        import anyio, httpx2, json
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        async def main():
            headers = {{"Authorization": "Bearer {TOKEN}"}}
            async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
                transport = streamable_http_client("http://127.0.0.1:8484/mcp", http_client=http)
                async with Client(transport) as client:
                    return sorted(t.name for t in (await client.list_tools()).tools)

        print(json.dumps(anyio.run(main)))
        """)
    assert set(names) == ALL_TOOLS


def test_it_runs_as_an_unprivileged_user_with_a_healthcheck(served: Container) -> None:
    config = json.loads(docker("inspect", "-f", "{{json .Config}}", served.name))
    assert config["User"] == f"{UID}:{UID}"
    assert config["Healthcheck"]["Test"] == [
        "CMD", "/opt/briefd/bin/python", "/opt/briefd/healthcheck.py"
    ]  # fmt: skip
    assert "/data" in config["Volumes"] and list(config["ExposedPorts"]) == ["8484/tcp"]
    status = docker("exec", served.name, "cat", "/proc/1/status")
    assert f"Uid:\t{UID}\t{UID}\t{UID}\t{UID}" in status
    assert served.health() == "healthy"
    image = json.loads(docker("image", "inspect", IMAGE))[0]
    assert image["Config"]["Healthcheck"]["Interval"] == 10 * 10**9  # the run above set 1 s
    served.numbers["image_inspect"] = {
        k: image["Config"][k] for k in ("User", "Healthcheck", "Volumes", "ExposedPorts")
    }
    served.numbers["image_size_mb"] = round(image["Size"] / 1e6, 1)


def test_the_index_survives_a_restart_on_the_volume(served: Container) -> None:
    def passages_embedded() -> float:
        metrics = served.http("GET", "/metrics")["text"]
        series = 'briefd_embedding_calls_total{kind="passage"} '
        (line,) = [x for x in metrics.splitlines() if x.startswith(series)]
        return float(line.removeprefix(series))

    def answers() -> None:
        search = served.http("GET", "/api/search?q=chargeback%20evidence%20deadline&top_k=1")
        assert search["body"]["hits"][0]["doc_path"] == "domain/chargebacks.md"

    before = passages_embedded()
    assert before > 0  # the first start embedded the knowledge
    started = time.monotonic()
    docker("restart", "--time", "10", served.name)
    served.wait_healthy()
    served.numbers["restart_to_healthy_s"] = round(time.monotonic() - started, 1)
    assert passages_embedded() == before  # nothing re-embedded: the index was on the volume
    answers()

    docker("rm", "--force", served.name)  # a new container (an upgrade) on the same volume
    served.numbers["run_to_healthy_with_index_on_volume_s"] = served.run()
    assert passages_embedded() == before
    answers()


def test_without_a_token_it_refuses_to_listen_beyond_the_container() -> None:
    out = docker("run", "--rm", "--network", "none", IMAGE, "serve", "--no-index", check=False)
    assert "refusing to bind 0.0.0.0 without a token" in out
    assert docker("run", "--rm", "--network", "none", IMAGE, "--version").strip() == (
        f"briefd {__version__}"
    )


def test_git_credentials_come_from_secret_files(tmp_path: Path) -> None:
    (tmp_path / "git_token").write_text("s3cret-token\n")
    (tmp_path / "git_ssh_key").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nx\n")
    for secret in tmp_path.iterdir():
        secret.chmod(0o644)
    # a stand-in for briefd that shows what git and ssh would be given
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "briefd").write_text(
        "#!/bin/sh\n"
        "printf 'protocol=https\\nhost=git.example.com\\n\\n' | git credential fill\n"
        "printf 'protocol=https\\nhost=elsewhere.example\\n\\n' | git credential fill "
        "|| echo 'elsewhere: none'\n"
        'echo "ssh: $GIT_SSH_COMMAND"\n'
        'key=$(echo "$GIT_SSH_COMMAND" | sed "s/.*-i \\([^ ]*\\).*/\\1/")\n'
        'stat -c "key: %a %u" "$key"\n'
    )
    (probe / "briefd").chmod(0o755)
    out = docker(
        "run", "--rm", "--network", "none",
        "--volume", f"{tmp_path / 'git_token'}:/run/secrets/git_token:ro",
        "--volume", f"{tmp_path / 'git_ssh_key'}:/run/secrets/git_ssh_key:ro",
        "--volume", f"{probe}:/probe:ro", "--env", "PATH=/probe:/usr/bin:/bin",
        "--env", "BRIEFD_SOURCE=https://git.example.com/acme/kb.git", "--env",
        "GIT_TERMINAL_PROMPT=0", IMAGE,
    )  # fmt: skip
    assert "username=x-access-token\npassword=s3cret-token\n" in out
    assert out.count("s3cret-token") == 1 and "elsewhere: none" in out  # its host only
    assert "-o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=accept-new" in out
    assert f"key: 600 {UID}" in out
